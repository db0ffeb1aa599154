/**
 * The user-level inbound policy in Claude Code's `settings.json`: its schema, its views and the
 * document functions (how the key and its values are spelled is in `InboundPolicyNames.ts`).
 *
 * Two rules earn their place here. Absent is its own state, never `accept`: without the key Claude
 * Code decides by the two sessions' permission modes, so reporting absent as `accept` would claim a
 * permission the user never gave. And this is the user file's value only: managed, project and
 * command-line settings can override it, so every view says `scope: "user"` rather than claim the
 * value in effect.
 *
 * The document functions here are pure: they decide what the bytes mean and what the new bytes
 * are. `services/Settings.ts` does the I/O around them.
 */
import { blake3 } from "@noble/hashes/blake3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type Node as JsonNode, parseTree } from "jsonc-parser"
import { inboundPolicyNames, settingsKey } from "./InboundPolicyNames.js"
import { applyTextEdits, isJsonObject as isObject, jsonPreview, nestingDepth, type TextEdit } from "./JsonText.js"

export { settingsKey }

export const InboundPolicy = Schema.Literal(...inboundPolicyNames)
export type InboundPolicy = typeof InboundPolicy.Type

export const inboundPolicies: ReadonlyArray<InboundPolicy> = inboundPolicyNames

/** The result of a read or an update. `crossSessionInbound` is null when the key is absent. */
export const SettingsView = Schema.Struct({
  path: Schema.String,
  /** Lowercase hex BLAKE3 of the exact bytes the value was read from (or written). */
  revision: Schema.String,
  crossSessionInbound: Schema.NullOr(InboundPolicy),
  /** True only for `accept`: absent, `hold` and `refuse` all leave the decision elsewhere or refuse. */
  userAllowsAutomaticDelivery: Schema.Boolean,
  scope: Schema.Literal("user")
})
export type SettingsView = typeof SettingsView.Type

/** What an update asks for: set the key to a value, or remove it (Claude Code's "default"). */
export const PolicyChange = Schema.Union(
  Schema.TaggedStruct("Set", { value: InboundPolicy }),
  Schema.TaggedStruct("Reset", {})
)
export type PolicyChange = typeof PolicyChange.Type

export const setPolicy = (value: InboundPolicy): PolicyChange => ({ _tag: "Set", value })
export const resetPolicy: PolicyChange = { _tag: "Reset" }

/** The sentence every human output carries, so that nobody mistakes the file's value for the one in effect. */
export const userScopeNote = "This is the user-level value: managed, project and command-line settings can override it."

/** What absent means, for people: not `accept`. */
export const absentPolicyWords = "absent (Claude Code decides by permission modes)"

export const revisionOf = (bytes: Uint8Array): string => bytesToHex(blake3(bytes))

/**
 * The revision of a missing or 0-byte file, both of which read as `{}`: `revisionOf` of no bytes,
 * spelled out so that loading this module hashes nothing (a test holds the two equal).
 */
export const emptyRevision = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"

export const makeSettingsView = (path: string, revision: string, policy: InboundPolicy | null): SettingsView => ({
  path,
  revision,
  crossSessionInbound: policy,
  userAllowsAutomaticDelivery: policy === "accept",
  scope: "user"
})

/** What Claude Code's own settings screen writes for a new file. */
export const newDocumentText = (value: InboundPolicy): string => `{\n  "${settingsKey}": ${JSON.stringify(value)}\n}\n`

/** Larger than any settings file a person writes; past it the file is refused unread, and no update writes more. */
export const maxSettingsBytes = 1024 * 1024

/**
 * The deepest nesting of arrays and objects an update edits. jsonc-parser's `parseTree` recurses
 * for every level: on Node 20's default stack it overflows at about 3,400 levels of objects and
 * 5,100 of arrays when called near the top of the stack, and sooner under the frames of a running
 * command. Real settings nest a handful of levels; past this bound a document is `too_deep` for
 * updates rather than a crash. Reads are not bounded: V8's `JSON.parse` does not recurse (600,000
 * levels, more than 1 MiB can hold, parse).
 */
export const maxEditableDepth = 1000

/**
 * A settings document that is JSON and an object. `rawPolicy` is the key's value as `JSON.parse`
 * (Claude Code's reader) sees it, the last duplicate winning: `get` judges it with `policyOf`, and
 * an update compares it with the requested value to tell "already so" from "to be written".
 */
export interface SettingsDocument {
  readonly text: string
  readonly hasKey: boolean
  readonly rawPolicy: unknown
}

/**
 * Why a document cannot be read or updated as it is. `problem` is the `problem` of the contract's
 * `invalid_settings`: `not_an_object` and `invalid_value` come from reading, `too_deep` from the
 * editor's bound (or from a `JSON.parse` that ran out of stack), `too_large` from an update whose
 * result a read would refuse. `reason` completes the sentence "<file> is not a valid settings file: …".
 */
export type DocumentProblem =
  | { readonly _tag: "InvalidJson"; readonly reason: string }
  | { readonly _tag: "InvalidSettings"; readonly problem: SettingsProblem; readonly reason: string }

export type SettingsProblem = "not_an_object" | "invalid_value" | "too_deep" | "too_large"

const invalidSettings = (problem: SettingsProblem, reason: string): DocumentProblem => ({
  _tag: "InvalidSettings",
  problem,
  reason
})

const tooDeep = (depth: number): DocumentProblem =>
  invalidSettings(
    "too_deep",
    `its arrays and objects nest ${depth} levels deep, more than the ${maxEditableDepth} this editor handles`
  )

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8 = new TextEncoder()

export const encodeDocument = (text: string): Uint8Array => utf8.encode(text)

const kindOf = (value: unknown): string => value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`

/**
 * `JSON.parse`, Claude Code's reader, decides what a document is: jsonc-parser accepts comments and
 * trailing commas that Claude Code would refuse. Should a runtime's `JSON.parse` run out of stack
 * (V8's does not recurse), that is the document's depth, not a bug here.
 */
const parseJson = (text: string): Either.Either<unknown, DocumentProblem> => {
  try {
    return Either.right(JSON.parse(text))
  } catch (error) {
    return Either.left(
      error instanceof RangeError
        ? invalidSettings("too_deep", "its arrays and objects nest too deep to be parsed here")
        : { _tag: "InvalidJson", reason: error instanceof Error ? error.message : String(error) }
    )
  }
}

/**
 * Decodes the bytes of a settings file. Empty bytes are `{}`, as a missing file is; white space
 * alone is not empty, it is invalid JSON. A byte-order mark is refused by name: `JSON.parse` would
 * refuse it too, but with a message about an unexpected token nobody can see in an editor.
 */
export const decodeDocument = (bytes: Uint8Array): Either.Either<SettingsDocument, DocumentProblem> => {
  if (bytes.length === 0) return Either.right({ text: "", hasKey: false, rawPolicy: undefined })
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return Either.left({ _tag: "InvalidJson", reason: "it is not UTF-8 text" })
  }
  if (text.startsWith("\uFEFF")) {
    return Either.left({ _tag: "InvalidJson", reason: "it starts with a byte-order mark, which JSON does not allow" })
  }
  return Either.flatMap(parseJson(text), (value) => {
    if (!isObject(value)) return Either.left(invalidSettings("not_an_object", `the document is ${kindOf(value)}, not an object`))
    const hasKey = Object.hasOwn(value, settingsKey)
    return Either.right({ text, hasKey, rawPolicy: hasKey ? value[settingsKey] : undefined })
  })
}

const isPolicy = (value: unknown): value is InboundPolicy => typeof value === "string" && (inboundPolicies as ReadonlyArray<string>).includes(value)

/** The policy a document states: null when absent; any other value than the three strings (null included) is invalid. */
export const policyOf = (document: SettingsDocument): Either.Either<InboundPolicy | null, DocumentProblem> =>
  !document.hasKey
    ? Either.right(null)
    : isPolicy(document.rawPolicy)
    ? Either.right(document.rawPolicy)
    : Either.left(invalidSettings(
      "invalid_value",
      `${settingsKey} is ${jsonPreview(document.rawPolicy)}, not one of ${inboundPolicies.map((p) => `"${p}"`).join(", ")}`
    ))

/** Whether applying the change to this document would change its value (an invalid value always changes). */
export const changesValue = (document: SettingsDocument, change: PolicyChange): boolean =>
  change._tag === "Reset" ? document.hasKey : !(document.hasKey && document.rawPolicy === change.value)

/**
 * The document's new text, `null` when the value would not change, or why it cannot be written:
 * `too_deep` past the editor's bound, `too_large` when the new text would be more than 1 MiB of
 * UTF-8 (a read refuses that, so writing it would lock every later `get`, `set` and `reset` out).
 *
 * Only the `crossSessionInbound` member is touched: every other byte (key order, white space, number
 * spellings such as `1.0`, escapes such as `"caf\u00e9"`) is kept. The edits are computed from
 * jsonc-parser's syntax tree, not with its `modify`: `modify` either glues a new member onto the
 * previous line or, given formatting options, reformats the whole lines around the edit, which
 * rewrites neighbouring members' white space and, on a one-line document, the entire file.
 * Duplicate keys are collapsed to one: `modify` would change only the first, and `JSON.parse`
 * (Claude Code's reader) takes the last, so the update would not be seen. All edits come from one
 * tree and are applied in one pass, so any number of duplicates costs time linear in the text.
 */
export const applyChange = (
  document: SettingsDocument,
  change: PolicyChange
): Either.Either<string | null, DocumentProblem> => {
  if (!changesValue(document, change)) return Either.right(null)
  const text = document.text.length === 0
    ? Either.right(change._tag === "Set" ? newDocumentText(change.value) : "{}\n")
    : Either.map(rootObject(document.text), (root) => applyTextEdits(document.text, editsFor(document.text, root, change)))
  return Either.flatMap(text, withinSizeLimit)
}

const withinSizeLimit = (text: string): Either.Either<string, DocumentProblem> => {
  const bytes = encodeDocument(text).length
  return bytes <= maxSettingsBytes
    ? Either.right(text)
    : Either.left(invalidSettings(
      "too_large",
      `with this change it would be ${bytes} bytes, more than the 1 MiB (${maxSettingsBytes} bytes) a read accepts`
    ))
}

/** The tree of a document within the editor's bound; the depth is checked first because `parseTree` recurses. */
const rootObject = (text: string): Either.Either<JsonNode, DocumentProblem> => {
  const depth = nestingDepth(text)
  if (depth > maxEditableDepth) return Either.left(tooDeep(depth))
  const root = parseTree(text)
  return root?.type === "object"
    ? Either.right(root)
    : Either.left(invalidSettings("not_an_object", "the document is not an object"))
}

const isPolicyMember = (member: JsonNode): boolean => member.children?.[0]?.value === settingsKey

/**
 * After a set, the last `crossSessionInbound` member (the one `JSON.parse` reads) takes the new
 * value and every earlier one goes; after a reset, all go; with none, a set inserts one.
 */
const editsFor = (text: string, root: JsonNode, change: PolicyChange): ReadonlyArray<TextEdit> => {
  const policyMembers = (root.children ?? []).filter(isPolicyMember)
  if (change._tag === "Reset") return removals(root, new Set(policyMembers))
  const kept = policyMembers[policyMembers.length - 1]
  if (kept === undefined) return [insertMember(text, root, change.value)]
  const removed = new Set(policyMembers.slice(0, -1))
  const value = kept.children![1]!
  return [{ offset: value.offset, length: value.length, content: JSON.stringify(change.value) }, ...removals(root, removed)]
}

const lineIndentBefore = (text: string, offset: number): string => {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0]
}

/**
 * The document's own indentation unit: the leading white space of its first indented line (a tab,
 * or N spaces); two spaces when no line is indented, as Claude Code writes.
 */
export const detectIndent = (text: string): string => {
  const match = /\n([ \t]+)\S/.exec(text)
  if (match === null) return "  "
  const indent = match[1]!
  return indent.startsWith("\t") ? "\t" : indent
}

const lineBreakOf = (text: string): string => (text.includes("\r\n") ? "\r\n" : "\n")

/**
 * A new member in the layout of its neighbours: on a line of its own at the last member's
 * indentation when members sit on their own lines, or on the same line with the same separators
 * when the object is written on one line. An empty object is opened onto lines, as Claude Code's
 * settings screen does (`{}` becomes `{\n  "crossSessionInbound": "accept"\n}`).
 */
const insertMember = (text: string, root: JsonNode, value: InboundPolicy): TextEdit => {
  const members = root.children ?? []
  const last = members[members.length - 1]
  if (last === undefined) {
    const outer = lineIndentBefore(text, root.offset)
    const eol = lineBreakOf(text)
    const member = `"${settingsKey}": ${JSON.stringify(value)}`
    return {
      offset: root.offset + 1,
      length: root.length - 2,
      content: `${eol}${outer}${detectIndent(text)}${member}${eol}${outer}`
    }
  }
  const [lastKey, lastValue] = [last.children![0]!, last.children![1]!]
  // The text between the last member's key and its value, such as `: ` or `:`, when it stays on one line.
  const between = text.slice(lastKey.offset + lastKey.length, lastValue.offset)
  const colon = /^[ \t]*:[ \t]*$/.test(between) ? between : ": "
  const member = `"${settingsKey}"${colon}${JSON.stringify(value)}`
  const before = members.length > 1
    ? text.slice(members[members.length - 2]!.offset + members[members.length - 2]!.length, last.offset)
    : text.slice(root.offset + 1, last.offset)
  const end = last.offset + last.length
  if (before.includes("\n")) {
    return { offset: end, length: 0, content: `,${lineBreakOf(text)}${lineIndentBefore(text, last.offset)}${member}` }
  }
  // On one line: reuse the separator between the last two members (`,` or `, `); with a single
  // member, `{ "a": 1 }` spaces its members and `{"a":1}` does not.
  const separator = members.length > 1
    ? (/^[ \t]*,[ \t]*$/.test(before) ? before : ",")
    : (before.length > 0 ? ", " : ",")
  return { offset: end, length: 0, content: `${separator}${member}` }
}

/**
 * Removes members with their commas, leaving the white space of their neighbours where it was.
 * Neighbouring members go as one run, since their ranges would touch: a run and everything up to
 * the next member go; a run at the end goes with everything from the end of the member before it.
 * When every member goes, `{}` is left, as Claude Code's "default" choice does.
 */
const removals = (root: JsonNode, removed: ReadonlySet<JsonNode>): ReadonlyArray<TextEdit> => {
  const members = root.children ?? []
  const edits: Array<TextEdit> = []
  for (let first = 0; first < members.length; first++) {
    if (!removed.has(members[first]!)) continue
    let last = first
    while (last + 1 < members.length && removed.has(members[last + 1]!)) last++
    edits.push(runRemoval(root, first, last))
    first = last
  }
  return edits
}

/** The edit that removes the members `first` to `last` (a run of neighbours) with their separators. */
const runRemoval = (root: JsonNode, first: number, last: number): TextEdit => {
  const members = root.children ?? []
  const [start, end, previous, next] = [members[first]!, members[last]!, members[first - 1], members[last + 1]]
  if (next !== undefined) return { offset: start.offset, length: next.offset - start.offset, content: "" }
  if (previous === undefined) return { offset: root.offset + 1, length: root.length - 2, content: "" }
  const from = previous.offset + previous.length
  return { offset: from, length: end.offset + end.length - from, content: "" }
}

/** The exact text of every top-level member other than `crossSessionInbound`, in document order. */
const otherMemberTexts = (text: string): Either.Either<ReadonlyArray<string>, DocumentProblem> =>
  text.length === 0
    ? Either.right([])
    : Either.map(rootObject(text), (root) =>
      (root.children ?? []).filter((member) => !isPolicyMember(member)).map((member) => text.slice(member.offset, member.offset + member.length)))

/**
 * The check before anything is written: the new text must parse as an object holding exactly the
 * requested value (or no key after a reset), and every other member must keep its exact text, in
 * the same order. A failure here is a bug in `applyChange`, never the user's document, so it is
 * reported as such rather than written.
 */
export const verifyChange = (
  before: SettingsDocument,
  text: string,
  change: PolicyChange
): Either.Either<void, string> => {
  const parsed = parseJson(text)
  if (Either.isLeft(parsed)) return Either.left(`the edited document does not parse: ${parsed.left.reason}`)
  const value = parsed.right
  if (!isObject(value)) return Either.left("the edited document is not an object")
  if (change._tag === "Set" ? value[settingsKey] !== change.value : Object.hasOwn(value, settingsKey)) {
    return Either.left(`the edited document does not hold the requested ${settingsKey}`)
  }
  const [old, now] = [otherMemberTexts(before.text), otherMemberTexts(text)]
  if (Either.isLeft(old)) return Either.left(`the document before the edit cannot be compared: ${old.left.reason}`)
  if (Either.isLeft(now)) return Either.left(`the edited document cannot be compared: ${now.left.reason}`)
  const same = old.right.length === now.right.length && old.right.every((member, i) => member === now.right[i])
  return same ? Either.right(undefined) : Either.left("the edit changed another setting")
}
