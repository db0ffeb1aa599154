/** Types for `effect-patches.mjs`, which the build imports as it is and the tests through these. */
export interface LibraryPatch {
  readonly module: RegExp
  readonly edits: ReadonlyArray<readonly [string | RegExp, string]>
  readonly append?: string
}
export declare const libraryPatches: ReadonlyArray<LibraryPatch>
export declare const applyPatch: (patch: LibraryPatch, source: string, file: string) => string
/** The esbuild plugin that applies them. */
export declare const libraryPatchesPlugin: { readonly name: string; readonly setup: (build: unknown) => void }
