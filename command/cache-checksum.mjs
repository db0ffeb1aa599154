/**
 * The code cache's checksum: what the loader (`bin/claude-peers.js`) runs as a WebAssembly module,
 * written here as the instructions that make it, and the same function in plain JavaScript, which
 * the tests use to check the module and to forge caches.
 *
 * It catches damage (a flipped bit, a block zeroed by a power cut, a changed byte), not forgery:
 * only this user can write a cache the loader reads (see the loader's first rule). Over the payload
 * padded with zeros to a multiple of 32 bytes, read as little-endian 64-bit words `w`, from
 * `a = length`, `b = 0`: `a += w; b += a` (mod 2^64), then `a` and `b` mixed and avalanched as xxHash
 * does. Every changed word changes `a`, and every reordering changes `b`. The loader runs it as
 * WebAssembly because a plain JavaScript loop over a megabyte runs in the interpreter at start-up,
 * and `node:crypto` costs more to load than the whole check may.
 *
 * Run `node command/cache-checksum.mjs` to print the module's bytes as the loader's array holds them.
 */
const P1 = 0x9e3779b185ebca87n
const P2 = 0xc2b2ae3d27d4eb4fn

const mask = (1n << 64n) - 1n

/** The checksum of `bytes`, as the loader writes it into a cache's header: 16 hex digits. */
export const checksumOf = (bytes) => {
  const padded = Buffer.alloc(Math.ceil(bytes.length / 32) * 32)
  padded.set(bytes)
  let a = BigInt(bytes.length)
  let b = 0n
  for (let i = 0; i < padded.length; i += 8) {
    a = (a + padded.readBigUInt64LE(i)) & mask
    b = (b + a) & mask
  }
  const rotl = (x, n) => ((x << n) | (x >> (64n - n))) & mask
  let h = ((a * P1) & mask) ^ rotl((b * P2) & mask, 29n)
  h = ((h ^ (h >> 33n)) * P2) & mask
  h = ((h ^ (h >> 29n)) * P1) & mask
  h ^= h >> 32n
  return h.toString(16).padStart(16, "0")
}

const signed = (value) => {
  let v = BigInt.asIntN(64, BigInt(value))
  const out = []
  for (;;) {
    const byte = Number(v & 0x7fn)
    v >>= 7n
    const done = (v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0)
    out.push(done ? byte : byte | 0x80)
    if (done) return out
  }
}
const unsigned = (value) => {
  const out = []
  do {
    const byte = value & 0x7f
    value >>>= 7
    out.push(value === 0 ? byte : byte | 0x80)
  } while (value !== 0)
  return out
}

const i64 = (value) => [0x42, ...signed(value)]
const get = (local) => [0x20, local]
const set = (local) => [0x21, local]
const tee = (local) => [0x22, local]
const [i64Load, i64Add, i64Mul, i64Xor, i64ShrU, i64Rotl, i64ExtendI32U, i32Add, i32GeU] = [
  0x29,
  0x7c,
  0x7e,
  0x85,
  0x88,
  0x89,
  0xad,
  0x6a,
  0x4f
]

/** `a += load(i + offset); b += a`; locals: 0 length (i32), 1 i (i32), 2 a (i64), 3 b (i64). */
const word = (offset) => [...get(2), ...get(1), i64Load, 0x03, ...unsigned(offset), i64Add, ...tee(2), ...get(3), i64Add, ...set(3)]
/** `h ^= h >> shift`, then `h *= prime` unless none is given. */
const avalanche = (shift, prime) => [...get(2), ...get(2), ...i64(shift), i64ShrU, i64Xor, ...(prime === undefined ? [] : [...i64(prime), i64Mul, ...set(2)])]

/** `h(length): i64` over the imported memory `m.m`, which holds the payload at 0 and zeros after it. */
const body = [
  ...[0x02, 0x01, 0x7f, 0x02, 0x7e],
  ...get(0),
  i64ExtendI32U,
  ...set(2),
  ...[0x02, 0x40, 0x03, 0x40],
  ...get(1),
  ...get(0),
  i32GeU,
  ...[0x0d, 0x01],
  ...word(0),
  ...word(8),
  ...word(16),
  ...word(24),
  ...get(1),
  ...[0x41, 0x20],
  i32Add,
  ...set(1),
  ...[0x0c, 0x00, 0x0b, 0x0b],
  ...get(2),
  ...i64(P1),
  i64Mul,
  ...get(3),
  ...i64(P2),
  i64Mul,
  ...i64(29),
  i64Rotl,
  i64Xor,
  ...set(2),
  ...avalanche(33, P2),
  ...avalanche(29, P1),
  ...avalanche(32),
  0x0b
]

const section = (id, bytes) => [id, ...unsigned(bytes.length), ...bytes]

/** The module's bytes: one function `(i32) -> i64`, its memory imported as `m.m`, exported as `h`. */
export const checksumModule = () =>
  Buffer.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x01, 0x7e]),
    ...section(2, [0x01, 0x01, 0x6d, 0x01, 0x6d, 0x02, 0x00, 0x01]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, 0x01, 0x68, 0x00, 0x00]),
    ...section(10, [0x01, ...unsigned(body.length), ...body])
  ])

if (import.meta.url === `file://${process.argv[1]}`) console.log([...checksumModule()].join(","))
