/**
 * A JSON array printed in pieces (`jsonArrayPieces`): the pieces join to exactly the text of the
 * whole array, and each is made only when it is asked for, so that no more than one piece's items
 * are encoded ahead of what is written.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { jsonArrayPieces, jsonText } from "../src/cli/Text.js"

/** Values as rows hold them, strings with the characters `jsonText` escapes among them. */
const text = fc.string({ unit: fc.constantFrom("a", "é", "\u0000", "\u007f", "\u0085", "\u202e", "\u2028", "\u{1f600}", "\"", "\\", ",", "]") })
const row = fc.record({
  file: text,
  pid: fc.oneof(fc.integer(), fc.constant(null)),
  name: fc.oneof(text, fc.constant(null)),
  list: fc.array(text, { maxLength: 3 })
})

describe("jsonArrayPieces", () => {
  it("joins to exactly jsonText of the whole array, for any piece size", () =>
    fc.assert(
      fc.property(fc.array(row, { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (rows, size) => {
        const pieces = [...jsonArrayPieces(rows, (r) => r, size)]
        expect(pieces.join("")).toBe(jsonText(rows))
        expect(pieces).toHaveLength(Math.max(1, Math.ceil(rows.length / size)))
      })
    ))

  it("encodes a piece's items only when that piece is asked for", () =>
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 9 }), (items, size) => {
        const encoded: Array<number> = []
        const pieces = jsonArrayPieces(items, (item) => {
          encoded.push(item)
          return item
        }, size)
        for (let n = 1; !pieces.next().done; n++) expect(encoded).toEqual(items.slice(0, Math.min(items.length, n * size)))
      })
    ))

  it("is [] for no items, and the default piece holds 256", () => {
    expect([...jsonArrayPieces([], (r) => r)]).toEqual(["[]"])
    const items = Array.from({ length: 513 }, (_, i) => i)
    const pieces = [...jsonArrayPieces(items, (r) => r)]
    expect(pieces.map((piece) => piece.split(",").length)).toEqual([256, 257, 2])
    expect(pieces.join("")).toBe(JSON.stringify(items))
  })
})
