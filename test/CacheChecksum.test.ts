/**
 * The code cache's checksum (`command/cache-checksum.mjs`): the loader runs the module that file
 * makes, which computes what its JavaScript twin does, and any damage changes it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { checksumModule, checksumOf } from "../command/cache-checksum.mjs"

const loader = fs.readFileSync(path.join(import.meta.dirname, "..", "bin", "claude-peers.js"), "utf8")

/** WebAssembly as this test uses it (the project's `lib` has no DOM types). */
interface Wasm {
  readonly Memory: new(descriptor: { initial: number }) => { readonly buffer: ArrayBuffer }
  readonly Module: new(bytes: Uint8Array) => object
  readonly Instance: new(module: object, imports: object) => { readonly exports: Record<string, unknown> }
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly

/** The module run over `bytes` as the loader runs it: in a fresh memory, zeros after the payload. */
const moduleChecksum = (bytes: Uint8Array) => {
  const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil((bytes.length + 32) / 65536)) })
  new Uint8Array(memory.buffer).set(bytes)
  const instance = new wasm.Instance(new wasm.Module(checksumModule()), { m: { m: memory } })
  const h = instance.exports["h"] as (size: number) => bigint
  return BigInt.asUintN(64, h(bytes.length)).toString(16).padStart(16, "0")
}

describe("the code cache's checksum", () => {
  it("the loader holds the module this file makes", () => {
    const held = /const checksumCode = new Uint8Array\(\[([\d,\s]+)\]\)/.exec(loader)?.[1]
    expect(held?.split(",").map((byte) => Number(byte.trim()))).toEqual([...checksumModule()])
  })

  it("the module computes what its JavaScript twin does, at every length", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(moduleChecksum(bytes)).toBe(checksumOf(bytes))
      })
    )
    const big = new Uint8Array(200_003).map((_, i) => (i * 2654435761) >>> 24)
    expect(moduleChecksum(big)).toBe(checksumOf(big))
  })

  it("a flipped bit, a zeroed block, two swapped words or a cut payload change it", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 400 }), fc.nat(), fc.nat(7), (bytes, at, bit) => {
        const before = checksumOf(bytes)
        const flipped = Uint8Array.from(bytes)
        flipped[at % bytes.length]! ^= 1 << bit
        expect(checksumOf(flipped)).not.toBe(before)
        expect(checksumOf(bytes.subarray(0, bytes.length - 1))).not.toBe(before)
        const first = (at % (bytes.length >> 4)) * 8
        const words = Uint8Array.from(bytes)
        words.set(bytes.subarray(first + 8, first + 16), first)
        words.set(bytes.subarray(first, first + 8), first + 8)
        if (!words.every((byte, i) => byte === bytes[i])) expect(checksumOf(words)).not.toBe(before)
        const zeroed = Uint8Array.from(bytes).fill(0, first, first + 32)
        if (!zeroed.every((byte, i) => byte === bytes[i])) expect(checksumOf(zeroed)).not.toBe(before)
      })
    )
  })
})
