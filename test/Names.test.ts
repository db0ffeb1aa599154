/**
 * Names compare as Claude Code 2.1.332 compares them (its `normalizeName`, read from its bundle):
 * angle brackets and their look-alikes become parentheses, then NFKC, invisible characters out
 * (white space kept), trim, lower case, white-space runs as `-`.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { normalizeFully, normalizeName } from "../src/domain/Names.js"

describe("normalizeName", () => {
  it("folds case, width and compatibility forms, and spells white space as -", () => {
    expect(normalizeName("Api Server")).toBe("api-server")
    expect(normalizeName("  api\tserver \n")).toBe("api-server")
    expect(normalizeName("ＡＰＩ ｓｅｒｖｅｒ")).toBe("api-server")
    expect(normalizeName("ﬁle")).toBe("file")
    expect(normalizeName("e\u0301")).toBe(normalizeName("é"))
  })

  it("drops control, format and surrogate code points, but keeps white space among them", () => {
    expect(normalizeName("do\u200bcs")).toBe("docs")
    expect(normalizeName("\u202edocs")).toBe("docs")
    expect(normalizeName("docs\uD800")).toBe("docs")
    expect(normalizeName("a\u0000b")).toBe("ab")
    expect(normalizeName("a\u000bb")).toBe("a-b")
  })

  it("reads <…> and its look-alikes as (…), as Claude Code does", () => {
    expect(normalizeName("a<b>")).toBe("a(b)")
    expect(normalizeName("a<b>")).toBe(normalizeName("a(b)"))
    expect(normalizeName("a\u2039b\u203a")).toBe("a(b)")
    expect(normalizeName("\u3008x\u3009")).toBe("(x)")
    expect(normalizeName("a<b")).toBe("a(b")
    // Without a closing bracket, a Canadian syllabics letter that looks like `<` inside a word stays.
    expect(normalizeName("\u1438\u1403")).toBe("\u1438\u1403")
    expect(normalizeName("a>b")).toBe("a>b")
  })

  it("answers every name as the full steps do, the plain-ASCII shortcut included", () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)), maxLength: 40 })
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 })
    const anything = fc.string({ unit: "binary", maxLength: 20 })
    fc.assert(
      fc.property(fc.oneof(ascii, printable, anything), (name) => {
        expect(normalizeName(name)).toBe(normalizeFully(name))
      }),
      { numRuns: 1000 }
    )
  }, 60_000)
})
