/**
 * Properties of updates over any settings document a person or a program could have written:
 * compact or indented with tabs, 2 or 4 spaces, CRLF, number spellings JSON.parse would normalize
 * (`1.0`, `12345678901234567890`, `-0`), escapes (`"caf\u00e9"`), nested objects that carry their
 * own `crossSessionInbound`, and a top-level value that is absent, valid, invalid or duplicated.
 * For any sequence of sets and resets (guarded by the right revision or not): every other member
 * keeps its exact text, the revision is BLAKE3 of the bytes in the file, and a read after the
 * write returns what the write returned.
 */
import { describe, expect, it } from "@effect/vitest"
import { blake3 } from "@noble/hashes/blake3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Effect, FastCheck as fc } from "effect"
import { parseTree } from "jsonc-parser"
import { emptyRevision, type PolicyChange, resetPolicy, setPolicy } from "../src/domain/Settings.js"
import { Settings } from "../src/services/Settings.js"
import { makeMemoryHome } from "./support/settingsHomes.js"

interface Format {
  readonly unit: string
  readonly eol: string
  readonly colon: string
  readonly comma: string
}

const format: fc.Arbitrary<Format> = fc.record({
  unit: fc.constantFrom("", "  ", "    ", "\t"),
  eol: fc.constantFrom("\n", "\r\n"),
  colon: fc.constantFrom(": ", ":", " : "),
  comma: fc.constantFrom(",", ", ")
})

/** A value as raw JSON text with its own layout, rendered at a depth. */
type Raw = (fmt: Format, depth: number) => string

const layout = (open: string, close: string, items: ReadonlyArray<string>, fmt: Format, depth: number): string => {
  if (items.length === 0) return open + close
  if (fmt.unit === "") return open + items.join(fmt.comma) + close
  const inner = fmt.unit.repeat(depth + 1)
  return open + fmt.eol + items.map((item) => inner + item).join("," + fmt.eol) + fmt.eol + fmt.unit.repeat(depth) + close
}

/** A key as JSON text: plain, or with its non-ASCII characters written as `\u` escapes. */
const keyText = (key: string, escaped: boolean): string =>
  escaped
    ? JSON.stringify(key).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : JSON.stringify(key)

const otherKey = fc.oneof(
  fc.constantFrom("model", "env", "permissions", "café", "a b", "", "crossSessionInbound ", "CrossSessionInbound", "😀"),
  fc.string({ maxLength: 6 })
).filter((key) => key !== "crossSessionInbound")

const scalar: fc.Arbitrary<Raw> = fc.oneof(
  fc.constantFrom("1.0", "12345678901234567890", "-0", "1e5", "0.1E-3", "42", "true", "false", "null"),
  fc.constantFrom("\"caf\\u00e9\"", "\"\\n\\t\\\"\\\\\"", "\"\"", "\"crossSessionInbound\"", "\"\\ud83d\\ude00\"", "\"accept\""),
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n))
).map((text) => () => text)

const { value } = fc.letrec<{ value: Raw; object: Raw; array: Raw }>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("object"), tie("array")),
  object: fc.array(
    fc.tuple(fc.oneof(otherKey, fc.constant("crossSessionInbound")), fc.boolean(), tie("value")),
    { maxLength: 3 }
  ).map((members): Raw => (fmt, depth) =>
    layout("{", "}", members.map(([key, escaped, raw]) => keyText(key, escaped) + fmt.colon + raw(fmt, depth + 1)), fmt, depth)
  ),
  array: fc.array(tie("value"), { maxLength: 3 }).map((items): Raw => (fmt, depth) => layout("[", "]", items.map((raw) => raw(fmt, depth + 1)), fmt, depth))
}))

/** The top-level `crossSessionInbound` members to mix in: none, a valid one, an invalid one, duplicates. */
const policyMembers = fc.array(
  fc.constantFrom("\"accept\"", "\"hold\"", "\"refuse\"", "null", "\"ACCEPT\"", "1", "{}"),
  { maxLength: 3 }
)

interface Document {
  readonly text: string
}

const document: fc.Arbitrary<Document> = fc.record({
  fmt: format,
  others: fc.array(fc.tuple(otherKey, fc.boolean(), value), { maxLength: 6 }),
  policies: policyMembers,
  positions: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
  leading: fc.constantFrom("", " ", "\n"),
  trailing: fc.constantFrom("", "\n", "\r\n", "  \n")
}).map(({ fmt, leading, others, policies, positions, trailing }) => {
  const members = others.map(([key, escaped, raw]) => keyText(key, escaped) + fmt.colon + raw(fmt, 1))
  policies.forEach((policy, i) => {
    members.splice(positions[i]! % (members.length + 1), 0, `"crossSessionInbound"${fmt.colon}${policy}`)
  })
  return { text: leading + layout("{", "}", members, fmt, 0) + trailing }
})

const change: fc.Arbitrary<{ readonly change: PolicyChange; readonly guarded: boolean }> = fc.record({
  change: fc.constantFrom<PolicyChange>(setPolicy("accept"), setPolicy("hold"), setPolicy("refuse"), resetPolicy),
  guarded: fc.boolean()
})

const hex = (bytes: Uint8Array) => bytesToHex(blake3(bytes))

/** The exact text of every top-level member other than `crossSessionInbound`, in document order. */
const otherMembers = (text: string): ReadonlyArray<string> =>
  (parseTree(text)?.children ?? [])
    .filter((member) => member.children?.[0]?.value !== "crossSessionInbound")
    .map((member) => text.slice(member.offset, member.offset + member.length))

describe("settings properties (memory)", () => {
  it.effect.prop(
    "for any document and any sequence of sets and resets, every other member keeps its exact text, the revision is the file's BLAKE3, and a read returns what the write returned",
    {
      document: fc.oneof({ weight: 1, arbitrary: fc.constant({ text: "" }) }, { weight: 12, arbitrary: document }),
      changes: fc.array(change, { minLength: 1, maxLength: 6 })
    },
    ({ changes, document }) =>
      Effect.gen(function*() {
        expect(() => JSON.parse(document.text || "{}")).not.toThrow()
        const home = makeMemoryHome()
        home.write("settings.json", document.text, 0o600)
        const others = otherMembers(document.text)
        const settings = yield* Effect.provide(Settings, home.layer)
        let revision = document.text === "" ? emptyRevision : hex(new TextEncoder().encode(document.text))
        for (const { change, guarded } of changes) {
          const view = yield* settings.update(change, { expectRevision: guarded ? revision : undefined })
          const bytes = home.read("settings.json")!
          const text = new TextDecoder().decode(bytes)
          const parsed = text === "" ? {} : JSON.parse(text) as Record<string, unknown>
          expect(view.revision).toBe(text === "" ? emptyRevision : hex(bytes))
          expect(view.crossSessionInbound).toBe(change._tag === "Set" ? change.value : null)
          expect(parsed.crossSessionInbound).toBe(change._tag === "Set" ? change.value : undefined)
          expect(otherMembers(text)).toEqual(others)
          expect(yield* settings.read).toEqual(view)
          revision = view.revision
        }
        expect(home.list()).toEqual(["settings.json"])
      }),
    { timeout: 60_000, fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "the only bytes that change are those of the crossSessionInbound members and the separators next to them",
    { document, change },
    ({ change: { change }, document }) =>
      Effect.gen(function*() {
        const home = makeMemoryHome()
        home.write("settings.json", document.text, 0o600)
        const settings = yield* Effect.provide(Settings, home.layer)
        yield* settings.update(change)
        const after = new TextDecoder().decode(home.read("settings.json")!)
        // Removing every top-level crossSessionInbound member (with its separator) from both texts
        // leaves the same text, up to the white space between members that an insertion or removal
        // necessarily touches.
        const stripped = (text: string) => {
          const root = parseTree(text)!
          let out = text
          for (const member of [...(root.children ?? [])].reverse()) {
            if (member.children?.[0]?.value === "crossSessionInbound") {
              out = out.slice(0, member.offset) + out.slice(member.offset + member.length)
            }
          }
          return out.replace(/[\s,]+/g, "")
        }
        expect(stripped(after)).toBe(stripped(document.text))
      }),
    { timeout: 60_000, fastCheck: { numRuns: 200 } }
  )
})
