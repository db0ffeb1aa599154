/**
 * The pure settings-document functions over any input a settings file can hold: they answer with a
 * value or a typed problem and never throw. Documents are built here from members whose exact text
 * the test knows (arbitrary JSON values in any layout, nestings past the editor's bound, strings of
 * hundreds of kilobytes, `__proto__` and lone-surrogate keys, the key spelled with escapes), so
 * the oracle reads the expected answer from how the document was built and from `JSON.parse`
 * (Claude Code's reader), never from the code under test.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import { jsonPreview } from "../src/domain/JsonText.js"
import {
  applyChange,
  decodeDocument,
  type DocumentProblem,
  inboundPolicies,
  maxEditableDepth,
  maxSettingsBytes,
  type PolicyChange,
  policyOf,
  resetPolicy,
  setPolicy,
  type SettingsDocument,
  settingsKey,
  verifyChange
} from "../src/domain/Settings.js"

const utf8 = (text: string) => new TextEncoder().encode(text)
const changes: ReadonlyArray<PolicyChange> = [setPolicy("accept"), setPolicy("hold"), setPolicy("refuse"), resetPolicy]

/** A value's JSON text and how deep its arrays and objects nest. */
interface Value {
  readonly text: string
  readonly depth: number
}

/** Depth of a small generated value (fast-check's are at most a few levels deep, so recursion is safe here). */
const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? 1 + Math.max(0, ...Object.values(value).map(depthOf))
    : 0

const anyJson: fc.Arbitrary<Value> = fc.tuple(
  fc.jsonValue({ maxDepth: 4, stringUnit: "binary" }),
  fc.constantFrom<string | number | undefined>(undefined, 2, "\t")
).map(([value, indent]) => ({ text: JSON.stringify(value, null, indent), depth: depthOf(value) }))

/** Around and far past the editor's bound. */
const deep: fc.Arbitrary<Value> = fc.tuple(
  fc.oneof(fc.integer({ min: maxEditableDepth - 3, max: maxEditableDepth + 3 }), fc.integer({ min: 1, max: 10_000 })),
  fc.boolean()
).map(([levels, arrays]) => ({
  text: arrays ? "[".repeat(levels) + "]".repeat(levels) : "{\"k\":".repeat(levels) + "0" + "}".repeat(levels),
  depth: levels
}))

/** Long strings of one unit each: several-byte characters, escapes, lone surrogates, line separators. */
const huge: fc.Arbitrary<Value> = fc.tuple(
  fc.integer({ min: 0, max: 30_000 }),
  fc.constantFrom("x", "\u00e9", "\ud83d\ude00", "\u2028", "\\\"", "\\ud800", "\\u0000", "[{")
).map(([length, unit]) => ({ text: `"${unit.repeat(length)}"`, depth: 0 }))

const extreme: fc.Arbitrary<Value> = fc.constantFrom("1e400", "-1e400", "-0", "12345678901234567890", "0.1E-3", "true", "null", "[]", "{}")
  .map((text) => ({ text, depth: text.startsWith("[") || text.startsWith("{") ? 1 : 0 }))

const value: fc.Arbitrary<Value> = fc.oneof(
  { weight: 4, arbitrary: anyJson },
  { weight: 2, arbitrary: deep },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: extreme }
)

/** A key as JSON text: plain, or with its non-ASCII characters written as `\u` escapes. */
const keyText = (key: string, escaped: boolean): string =>
  escaped
    ? JSON.stringify(key).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : JSON.stringify(key)

const otherKeyText = fc.tuple(
  fc.oneof(
    fc.string({ unit: "binary", maxLength: 8 }),
    fc.constantFrom("__proto__", "constructor", "toString", "", "\u0000", "crossSessionInbound ", "CrossSessionInbound")
  ).filter((key) => key !== settingsKey),
  fc.boolean()
).map(([key, escaped]) => keyText(key, escaped))

const policyKeyText = fc.constantFrom(`"${settingsKey}"`, "\"\\u0063rossSessionInbound\"", "\"crossSession\\u0049nbound\"")

const policyValue: fc.Arbitrary<Value> = fc.oneof(
  fc.constantFrom(...inboundPolicies).map((policy) => ({ text: JSON.stringify(policy), depth: 0 })),
  value
)

interface Member {
  readonly text: string
  readonly depth: number
  readonly policy: boolean
}

const member = (keys: fc.Arbitrary<string>, values: fc.Arbitrary<Value>, policy: boolean) =>
  fc.tuple(keys, fc.constantFrom(":", ": ", " : "), values).map(([key, colon, value]): Member => ({
    text: key + colon + value.text,
    depth: value.depth,
    policy
  }))

interface Built {
  readonly text: string
  readonly leading: string
  readonly trailing: string
  readonly members: ReadonlyArray<Member>
}

const built: fc.Arbitrary<Built> = fc.record({
  others: fc.array(member(otherKeyText, value, false), { maxLength: 5 }),
  policies: fc.array(member(policyKeyText, policyValue, true), { maxLength: 3 }),
  positions: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
  separator: fc.constantFrom(",", ", ", ",\n  ", ",\r\n\t", "\n,"),
  open: fc.constantFrom("", " ", "\n  ", "\r\n\t"),
  close: fc.constantFrom("", " ", "\n", "\r\n"),
  leading: fc.constantFrom("", " ", "\n", "\t\r\n"),
  trailing: fc.constantFrom("", "\n", "\r\n", "  \n")
}).map(({ close, leading, open, others, policies, positions, separator, trailing }) => {
  const members = [...others]
  policies.forEach((policy, i) => members.splice(positions[i]! % (members.length + 1), 0, policy))
  const body = members.length === 0 ? "" : open + members.map((m) => m.text).join(separator) + close
  return { text: `${leading}{${body}}${trailing}`, leading, trailing, members }
}).filter((doc) => utf8(doc.text).length <= maxSettingsBytes - 64)

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether the new text holds the document's other members with their exact text and in their order,
 * and between them nothing but separators and (after a set) one member with the requested value.
 */
const keepsOtherMembers = (doc: Built, text: string, change: PolicyChange): boolean => {
  let skeleton = ""
  let from = 0
  for (const other of doc.members.filter((m) => !m.policy)) {
    const at = text.indexOf(other.text, from)
    if (at < 0) return false
    skeleton += text.slice(from, at)
    from = at + other.text.length
  }
  skeleton += text.slice(from)
  const key = `"(?:${settingsKey}|\\\\u0063rossSessionInbound|crossSession\\\\u0049nbound)"`
  const policy = change._tag === "Set" ? `${key}\\s*:\\s*${escapeRegExp(JSON.stringify(change.value))}[\\s,]*` : ""
  return new RegExp(`^${escapeRegExp(doc.leading)}\\{[\\s,]*${policy}\\}${escapeRegExp(doc.trailing)}$`).test(skeleton)
}

const settingsProblem = (problem: DocumentProblem) => (problem._tag === "InvalidSettings" ? problem.problem : problem._tag)

/** A change's answer, checked: a problem only of the kinds an update may meet, a text only when it verifies and holds the value. */
const checkedChange = (document: SettingsDocument, change: PolicyChange) => {
  const result = applyChange(document, change)
  if (Either.isLeft(result)) {
    expect(["too_deep", "too_large"]).toContain(settingsProblem(result.left))
  } else if (result.right !== null) {
    const parsed = JSON.parse(result.right) as Record<string, unknown>
    if (change._tag === "Set") expect(parsed[settingsKey]).toBe(change.value)
    else expect(Object.hasOwn(parsed, settingsKey)).toBe(false)
    expect(utf8(result.right).length).toBeLessThanOrEqual(maxSettingsBytes)
    expect(verifyChange(document, result.right, change)).toEqual(Either.right(undefined))
  }
  return result
}

describe("settings document properties", () => {
  it("arbitrary members and crossSessionInbound values: a typed answer, and every other member's exact text kept", () => {
    fc.assert(
      fc.property(built, (doc) => {
        const decoded = decodeDocument(utf8(doc.text))
        if (Either.isLeft(decoded)) throw new Error(`a built document must decode: ${decoded.left.reason}`)
        const document = decoded.right
        const parsed = JSON.parse(doc.text) as Record<string, unknown>
        const hasKey = Object.hasOwn(parsed, settingsKey)
        const stated = parsed[settingsKey]
        const policy = policyOf(document)
        if (!hasKey) expect(policy).toEqual(Either.right(null))
        else if ((inboundPolicies as ReadonlyArray<unknown>).includes(stated)) expect(policy).toEqual(Either.right(stated))
        else expect(Either.isLeft(policy) && settingsProblem(policy.left)).toBe("invalid_value")

        const depth = 1 + Math.max(0, ...doc.members.map((m) => m.depth))
        for (const change of changes) {
          const alters = change._tag === "Set" ? stated !== change.value : hasKey
          const result = checkedChange(document, change)
          if (!alters) expect(result).toEqual(Either.right(null))
          else if (depth > maxEditableDepth) expect(Either.isLeft(result) && settingsProblem(result.left)).toBe("too_deep")
          else if (Either.isLeft(result) || result.right === null) throw new Error("expected a new text")
          else expect(keepsOtherMembers(doc, result.right, change)).toBe(true)
        }
      }),
      { numRuns: 200 }
    )
  }, 60_000)

  const tokens = fc.constantFrom(
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "\r\n",
    "\t",
    "\"",
    "\\",
    "'",
    "//",
    "/*",
    "*/",
    "\uFEFF",
    "\u0000",
    `"${settingsKey}"`,
    "\"accept\"",
    "\"a\"",
    "1",
    "-0",
    "1e400",
    "null",
    "true",
    "\"\\ud800\"",
    "\"\\u12\""
  )
  const mutation = fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }), op: fc.constantFrom("insert", "replace", "delete") })
  const bytes: fc.Arbitrary<Uint8Array> = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc.string({ unit: "binary", maxLength: 64 }).map(utf8),
    fc.array(tokens, { maxLength: 40 }).map((parts) => utf8(parts.join(""))),
    fc.tuple(built, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([doc, mutations]) => {
      const out = [...utf8(doc.text)]
      for (const { at, byte, op } of mutations) {
        const i = at % (out.length + 1)
        if (op === "insert") out.splice(i, 0, byte)
        else if (op === "replace") out.splice(i, 1, byte)
        else out.splice(i, 1)
      }
      return Uint8Array.from(out)
    })
  )

  it("arbitrary bytes as the whole file: decoded as JSON.parse reads them, every answer typed", () => {
    fc.assert(
      fc.property(bytes, (file) => {
        const decoded = decodeDocument(file)
        let text: string | null
        try {
          text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(file)
        } catch {
          text = null
        }
        let parsed: unknown = undefined
        let parses = false
        try {
          parsed = text === "" ? {} : JSON.parse(text ?? "")
          parses = text !== null && !text.startsWith("\uFEFF")
        } catch {
          parses = false
        }
        const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
        if (!parses) {
          expect(decoded).toMatchObject({ left: { _tag: "InvalidJson" } })
        } else if (!isObject) {
          expect(Either.isLeft(decoded) && settingsProblem(decoded.left)).toBe("not_an_object")
        } else if (Either.isLeft(decoded)) {
          throw new Error(`JSON.parse reads an object, decode refused: ${decoded.left.reason}`)
        } else {
          const policy = policyOf(decoded.right)
          if (Either.isLeft(policy)) expect(settingsProblem(policy.left)).toBe("invalid_value")
          for (const change of changes) checkedChange(decoded.right, change)
        }
      }),
      { numRuns: 400 }
    )
  }, 60_000)

  it("jsonPreview is JSON.stringify cut after its limit, for any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: "binary" }), fc.integer({ min: 3, max: 80 }), (value, limit) => {
        const full = JSON.stringify(value)
        expect(jsonPreview(value, limit)).toBe(full.length <= limit ? full : `${full.slice(0, limit - 3)}...`)
      }),
      { numRuns: 500 }
    )
  })
})
