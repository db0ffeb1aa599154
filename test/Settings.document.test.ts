/**
 * The pure settings-document functions on the documents that broke them or could: nesting deeper
 * than the editor's recursion, tens of thousands of duplicate members, a change that would grow
 * the file past what a read accepts, and the spellings strict JSON allows but a parser may trip on.
 * Every function answers with a value or a typed problem; none throws.
 */
import { describe, expect, it, vi } from "@effect/vitest"
import { Either } from "effect"
import { parseTree } from "jsonc-parser"
import { jsonPreview, nestingDepth } from "../src/domain/JsonText.js"
import {
  applyChange,
  decodeDocument,
  type DocumentProblem,
  maxEditableDepth,
  maxSettingsBytes,
  type PolicyChange,
  policyOf,
  resetPolicy,
  setPolicy,
  type SettingsDocument,
  verifyChange
} from "../src/domain/Settings.js"

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

const utf8 = (text: string) => new TextEncoder().encode(text)
const changes: ReadonlyArray<PolicyChange> = [setPolicy("accept"), setPolicy("hold"), setPolicy("refuse"), resetPolicy]

const decoded = (text: string): SettingsDocument => {
  const document = decodeDocument(utf8(text))
  if (Either.isLeft(document)) throw new Error(`test document does not decode: ${document.left.reason}`)
  return document.right
}

/** The new text, failing the test on a problem or on "nothing to change". */
const changed = (text: string, change: PolicyChange): string => {
  const before = decoded(text)
  const result = applyChange(before, change)
  if (Either.isLeft(result)) throw new Error(`unexpected problem: ${result.left.reason}`)
  if (result.right === null) throw new Error("unexpected: nothing to change")
  expect(verifyChange(before, result.right, change)).toEqual(Either.right(undefined))
  return result.right
}

const problemOf = (result: Either.Either<unknown, DocumentProblem>) =>
  Either.isLeft(result) && result.left._tag === "InvalidSettings" ? result.left.problem : null

const arrays = (levels: number) => "[".repeat(levels) + "]".repeat(levels)
const objects = (levels: number) => "{\"k\":".repeat(levels) + "0" + "}".repeat(levels)

describe("nesting depth", () => {
  it("counts arrays and objects, not brackets inside strings", () => {
    expect(nestingDepth("{}")).toBe(1)
    expect(nestingDepth("{\"a\":[{}],\"b\":[]}")).toBe(3)
    expect(nestingDepth("{\"[[\\\"[{\":\"]]]{{{\\\\\",\"b\":[\"\\\"[\"]}")).toBe(2)
    expect(nestingDepth(`{"a":${arrays(400_000)}}`)).toBe(400_001)
    expect(nestingDepth("{\"a\":\"[[[")).toBe(1)
  })

  it("the bound is well below where jsonc-parser's recursion ends, for objects and for arrays", () => {
    expect(() => parseTree(`{"a":${objects(2 * maxEditableDepth)}}`)).not.toThrow()
    expect(() => parseTree(`{"a":${arrays(2 * maxEditableDepth)}}`)).not.toThrow()
  })

  it("a document at the bound is edited; one level deeper is too_deep for every change, never a throw", () => {
    for (const nest of [arrays, objects]) {
      const atBound = `{"a": ${nest(maxEditableDepth - 1)}, "crossSessionInbound": "bogus"}`
      expect(nestingDepth(atBound)).toBe(maxEditableDepth)
      for (const change of changes) {
        expect(JSON.parse(changed(atBound, change)).a).toEqual(JSON.parse(atBound).a)
      }
      const deeper = `{"a": ${nest(maxEditableDepth)}, "crossSessionInbound": "bogus"}`
      for (const change of changes) {
        const result = applyChange(decoded(deeper), change)
        expect(problemOf(result)).toBe("too_deep")
        expect(Either.isLeft(result) && result.left.reason).toContain(`${maxEditableDepth + 1} levels deep`)
      }
    }
  })

  it("1 MiB of brackets is too_deep for updates and still read", () => {
    const levels = (maxSettingsBytes - 64) / 2
    for (const doc of [`{"a":${arrays(levels)},"crossSessionInbound":"hold"}`, `{"crossSessionInbound":${arrays(levels)}}`]) {
      const document = decoded(doc)
      expect(problemOf(applyChange(document, resetPolicy))).toBe("too_deep")
      expect(problemOf(applyChange(document, setPolicy("accept")))).toBe("too_deep")
    }
    expect(policyOf(decoded(`{"a":${arrays(levels)},"crossSessionInbound":"hold"}`))).toEqual(Either.right("hold"))
  })

  it("a JSON.parse that runs out of stack is too_deep, not invalid_json", () => {
    const spy = vi.spyOn(JSON, "parse").mockImplementationOnce(() => {
      throw new RangeError("Maximum call stack size exceeded")
    })
    try {
      expect(problemOf(decodeDocument(utf8("{\"a\":[[]]}")))).toBe("too_deep")
    } finally {
      spy.mockRestore()
    }
  })

  it("a deeply nested invalid value is named in a few characters", () => {
    const result = policyOf(decoded(`{"crossSessionInbound":${objects(300_000)}}`))
    expect(problemOf(result)).toBe("invalid_value")
    expect(Either.isLeft(result) && result.left.reason).toBe(
      `crossSessionInbound is ${"{\"k\":".repeat(12).slice(0, 57)}..., not one of "accept", "hold", "refuse"`
    )
  })
})

describe("duplicate members", () => {
  it("neighbouring duplicates go as one run, whatever stands around them", () => {
    const p = (n: number) => `"crossSessionInbound":${n}`
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      [`{${p(1)},${p(2)}}`, "{\"crossSessionInbound\":\"hold\"}", "{}"],
      [`{"a":1,${p(1)},${p(2)}}`, "{\"a\":1,\"crossSessionInbound\":\"hold\"}", "{\"a\":1}"],
      [`{${p(1)},${p(2)},"a":1,${p(3)},${p(4)}}`, "{\"a\":1,\"crossSessionInbound\":\"hold\"}", "{\"a\":1}"],
      [`{${p(1)}, ${p(2)}, "a":1, ${p(3)}, "b":2}`, "{\"a\":1, \"crossSessionInbound\":\"hold\", \"b\":2}", "{\"a\":1, \"b\":2}"],
      [
        `{\r\n\t${p(1)},\r\n\t${p(2)},\r\n\t"a": 1,\r\n\t${p(3)}\r\n}`,
        "{\r\n\t\"a\": 1,\r\n\t\"crossSessionInbound\":\"hold\"\r\n}",
        "{\r\n\t\"a\": 1\r\n}"
      ]
    ]
    for (const [doc, afterSet, afterReset] of cases) {
      expect(changed(doc, setPolicy("hold"))).toBe(afterSet)
      expect(changed(doc, resetPolicy)).toBe(afterReset)
    }
  })

  for (const count of [10_000, 100_000]) {
    // Each edit of 100,000 members takes seconds on a busy machine: a turn of the event loop between
    // them lets the test runner's worker answer its runner, which gives up on a worker silent for 60 s.
    it(`${count.toLocaleString("en")} duplicates: one member with the new value after set, none after reset`, async () => {
      const contiguous = `{\n  "model": "opus",\n${"  \"crossSessionInbound\": \"hold\",\n".repeat(count)}  "z": [1.0]\n}\n`
      await turn()
      expect(changed(contiguous, setPolicy("accept"))).toBe(
        "{\n  \"model\": \"opus\",\n  \"crossSessionInbound\": \"accept\",\n  \"z\": [1.0]\n}\n"
      )
      await turn()
      expect(changed(contiguous, resetPolicy)).toBe("{\n  \"model\": \"opus\",\n  \"z\": [1.0]\n}\n")
      // Short members, so that what is left stays within 1 MiB however many there are.
      const others = Array.from({ length: count }, (_, i) => `"${i % 10}":${i % 7}`)
      const alternating = `{${others.map((member) => `"crossSessionInbound":null,${member}`).join(",")}}`
      await turn()
      expect(changed(alternating, resetPolicy)).toBe(`{${others.join(",")}}`)
      await turn()
      expect(changed(alternating, setPolicy("refuse"))).toBe(
        `{${others.slice(0, -1).join(",")},"crossSessionInbound":"refuse",${others[count - 1]}}`
      )
      const trailing = `{"a":1${",\"crossSessionInbound\":0".repeat(count)}}`
      await turn()
      expect(changed(trailing, resetPolicy)).toBe("{\"a\":1}")
      await turn()
      expect(changed(trailing, setPolicy("hold"))).toBe("{\"a\":1,\"crossSessionInbound\":\"hold\"}")
    }, 120_000)
  }
})

describe("size", () => {
  const withPad = (pad: string) => `{"pad":"${pad}"}`
  const grown = (pad: string) => `{"pad":"${pad}","crossSessionInbound":"accept"}`
  // Two-byte characters: the text's length is about half its UTF-8 size.
  const room = maxSettingsBytes - utf8(grown("")).length
  const pad = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2)

  it("a new text of exactly 1 MiB of UTF-8 is written; one byte more is too_large, counted in bytes", () => {
    expect(utf8(grown(pad)).length).toBe(maxSettingsBytes)
    expect(changed(withPad(pad), setPolicy("accept"))).toBe(grown(pad))
    const over = applyChange(decoded(withPad(`${pad}x`)), setPolicy("accept"))
    expect(withPad(`${pad}x`).length).toBeLessThan(maxSettingsBytes)
    expect(problemOf(over)).toBe("too_large")
    expect(Either.isLeft(over) && over.left.reason).toContain(`${maxSettingsBytes + 1} bytes`)
  })
})

describe("what strict JSON allows and what it does not", () => {
  const valid: ReadonlyArray<readonly [string, string, unknown]> = [
    ["numbers beyond a double", "{\"n\":1e400,\"m\":-1e400,\"i\":12345678901234567890,\"crossSessionInbound\":\"hold\"}", "hold"],
    ["__proto__ and constructor keys", "{\"__proto__\":{\"crossSessionInbound\":\"accept\"},\"constructor\":1}", null],
    ["a __proto__ string", "{\"__proto__\":\"x\",\"crossSessionInbound\":\"refuse\"}", "refuse"],
    ["lone surrogates in keys", "{\"\\ud800\":1,\"\\udc00x\":2,\"crossSessionInbound\":\"hold\"}", "hold"],
    ["the key spelled with an escape", "{\"\\u0063rossSessionInbound\":\"accept\",\"a\":\"\\u0000\"}", "accept"],
    ["line and paragraph separators in strings", "{\"a\":\"\u2028\u2029\",\"crossSessionInbound\":\"hold\"}", "hold"],
    ["CRLF and tabs", "{\r\n\t\"a\": 1,\r\n\t\"crossSessionInbound\": \"hold\"\r\n}\r\n", "hold"],
    ["a huge string", `{"a":"${"\u00e9".repeat(400_000)}","crossSessionInbound":"hold"}`, "hold"],
    ["a huge key", `{"${"k".repeat(500_000)}":1}`, null]
  ]

  for (const [name, text, policy] of valid) {
    it(`${name}: read, and every change verified`, () => {
      expect(policyOf(decoded(text))).toEqual(Either.right(policy))
      for (const change of changes) {
        const result = applyChange(decoded(text), change)
        if (Either.isRight(result) && result.right !== null) {
          expect(verifyChange(decoded(text), result.right, change)).toEqual(Either.right(undefined))
        } else {
          expect(result).toEqual(Either.right(null))
        }
      }
    })
  }

  it("invalid values are invalid_value, named briefly, with lone surrogates and huge strings", () => {
    for (const value of ["\"\\ud800\"", `"${"x".repeat(500_000)}"`, "1e400", "null", "{\"__proto__\":1}"]) {
      const result = policyOf(decoded(`{"crossSessionInbound":${value}}`))
      expect(problemOf(result)).toBe("invalid_value")
      expect(Either.isLeft(result) && result.left.reason.length).toBeLessThan(140)
    }
  })

  it("not an object is not_an_object; not strict JSON is invalid_json", () => {
    for (const text of ["[]", "null", "1", "\"{}\"", "true"]) {
      expect(problemOf(decodeDocument(utf8(text)))).toBe("not_an_object")
    }
    const notJson = [
      "\uFEFF{}",
      "{\"a\":1} // comment",
      "{/* c */}",
      "{\"a\":1,}",
      "{\"a\":1}\u0000",
      "{\"a\":\"\u0000\"}",
      "{\"\\x\":1}",
      "{\"a\":\"\\ud800\\u12\"}",
      " ",
      "{'a':1}"
    ]
    for (const text of notJson) {
      expect(decodeDocument(utf8(text))).toMatchObject({ left: { _tag: "InvalidJson" } })
    }
    expect(decodeDocument(new Uint8Array([0x7b, 0xff, 0x7d]))).toMatchObject({ left: { _tag: "InvalidJson" } })
  })
})

describe("jsonPreview", () => {
  it("is JSON.stringify, cut after 60 characters", () => {
    const values: ReadonlyArray<unknown> = [
      null,
      -0,
      Infinity,
      "caf\u00e9\ud800",
      { a: [1, { b: "x".repeat(80) }], "": [] },
      JSON.parse("{\"__proto__\":[1,2]}"),
      Array.from({ length: 100 }, (_, i) => i)
    ]
    for (const value of values) {
      const full = JSON.stringify(value)
      expect(jsonPreview(value)).toBe(full.length <= 60 ? full : `${full.slice(0, 57)}...`)
    }
  })
})
