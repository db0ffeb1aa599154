/** Types for `cache-checksum.mjs`, which the tests import as it is. */
/** The code cache's checksum of `bytes`, as the loader writes it into a cache's header: 16 hex digits. */
export declare const checksumOf: (bytes: Uint8Array) => string
/** The WebAssembly module the loader runs to compute it. */
export declare const checksumModule: () => Buffer
