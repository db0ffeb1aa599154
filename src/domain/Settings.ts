/**
 * The user-level inbound policy and the one place that knows how it is spelled in Claude Code's
 * `settings.json` (`crossSessionInbound`).
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
import { type Edit, applyEdits, type Node as JsonNode, parseTree } from "jsonc-parser"
import { inboundPolicyNames } from "./InboundPolicyNames.js"

export const settingsKey = "crossSessionInbound"

export const InboundPolicy = Schema.Literal(...inboundPolicyNames)
export type InboundPolicy = typeof InboundPolicy.Type

export const inboundPolicies: ReadonlyArray<InboundPolicy> = InboundPolicy.literals

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

/** The revision of a missing or 0-byte file, both of which read as `{}`. */
export const emptyRevision = revisionOf(new Uint8Array(0))

export const makeSettingsView = (path: string, revision: string, policy: InboundPolicy | null): SettingsView => ({
  path,
  revision,
  crossSessionInbound: policy,
  userAllowsAutomaticDelivery: policy === "accept",
  scope: "user"
})

/** What Claude Code's own settings screen writes for a new file. */
export const newDocumentText = (value: InboundPolicy): string => `{\n  "${settingsKey}": ${JSON.stringify(value)}\n}\n`

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

/** Why bytes are not a settings document: `invalid_json` or `invalid_settings`. */
export type DocumentProblem =
  | { readonly _tag: "InvalidJson"; readonly reason: string }
  | { readonly _tag: "InvalidSettings"; readonly reason: string }

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8 = new TextEncoder()

export const encodeDocument = (text: string): Uint8Array => utf8.encode(text)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

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
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return Either.left({ _tag: "InvalidJson", reason: error instanceof Error ? error.message : String(error) })
  }
  if (!isObject(value)) {
    return Either.left({
      _tag: "InvalidSettings",
      reason: `the document is ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}, not an object`
    })
  }
  const hasKey = Object.hasOwn(value, settingsKey)
  return Either.right({ text, hasKey, rawPolicy: hasKey ? value[settingsKey] : undefined })
}

/** A value as JSON, cut short: an error message names the value, it does not reprint a document. */
const shortJson = (value: unknown): string => {
  const text = JSON.stringify(value)
  return text.length <= 60 ? text : `${text.slice(0, 57)}...`
}

const isPolicy = (value: unknown): value is InboundPolicy =>
  typeof value === "string" && (inboundPolicies as ReadonlyArray<string>).includes(value)

/** The policy a document states: null when absent; any other value than the three strings (null included) is invalid. */
export const policyOf = (document: SettingsDocument): Either.Either<InboundPolicy | null, DocumentProblem> =>
  !document.hasKey
    ? Either.right(null)
    : isPolicy(document.rawPolicy)
    ? Either.right(document.rawPolicy)
    : Either.left({
      _tag: "InvalidSettings",
      reason: `${settingsKey} is ${shortJson(document.rawPolicy)}, not one of ${
        inboundPolicies.map((p) => `"${p}"`).join(", ")
      }`
    })

/** Whether applying the change to this document would change its value (an invalid value always changes). */
export const changesValue = (document: SettingsDocument, change: PolicyChange): boolean =>
  change._tag === "Reset" ? document.hasKey : !(document.hasKey && document.rawPolicy === change.value)

/**
 * The document's new text, or null when the value would not change.
 *
 * Only the `crossSessionInbound` member is touched: every other byte (key order, white space, number
 * spellings such as `1.0`, escapes such as `"caf\u00e9"`) is kept. The edits are computed from
 * jsonc-parser's syntax tree and applied with its `applyEdits`, not with its `modify`: `modify`
 * either glues a new member onto the previous line or, given formatting options, reformats the
 * whole lines around the edit, which rewrites neighbouring members' white space and, on a one-line
 * document, the entire file. Duplicate keys are collapsed to one: `modify` would change only the
 * first, and `JSON.parse` (Claude Code's reader) takes the last, so the update would not be seen.
 */
export const applyChange = (document: SettingsDocument, change: PolicyChange): string | null => {
  if (!changesValue(document, change)) return null
  if (document.text.length === 0) {
    return change._tag === "Set" ? newDocumentText(change.value) : "{}\n"
  }
  let text = document.text
  if (change._tag === "Set") {
    const members = policyMembers(rootObject(text))
    const kept = members[members.length - 1]
    if (kept === undefined) {
      text = applyEdits(text, [insertMember(text, change.value)])
    } else {
      const value = kept.children![1]!
      text = applyEdits(text, [{ offset: value.offset, length: value.length, content: JSON.stringify(change.value) }])
    }
  }
  // After a set, the member set above is the last one and every earlier duplicate goes; after a
  // reset, all go. One at a time, each on a fresh tree: the edits of neighbours would overlap.
  const keep = change._tag === "Set" ? 1 : 0
  for (let root = rootObject(text), members = policyMembers(root); members.length > keep;) {
    text = applyEdits(text, [removeMember(root, members[0]!)])
    root = rootObject(text)
    members = policyMembers(root)
  }
  return text
}

const rootObject = (text: string): JsonNode => {
  const root = parseTree(text)
  if (root === undefined || root.type !== "object") throw new Error("a settings document must be an object")
  return root
}

/** The top-level `crossSessionInbound` members, in document order (nested ones are other settings' business). */
const policyMembers = (root: JsonNode): ReadonlyArray<JsonNode> =>
  (root.children ?? []).filter((member) => member.children?.[0]?.value === settingsKey)

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
const insertMember = (text: string, value: InboundPolicy): Edit => {
  const root = rootObject(text)
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
 * Removes one member with its comma, leaving the white space of its neighbours where it was: the
 * member and everything up to the next member go; the last member goes with everything from the
 * end of the one before it. A member that was the only one leaves `{}`, as Claude Code's
 * "default" choice does.
 */
const removeMember = (root: JsonNode, member: JsonNode): Edit => {
  const members = root.children ?? []
  const index = members.indexOf(member)
  if (index < 0) throw new Error("removeMember: the member is not in this tree")
  const next = members[index + 1]
  const previous = members[index - 1]
  if (next !== undefined) return { offset: member.offset, length: next.offset - member.offset, content: "" }
  if (previous !== undefined) {
    const from = previous.offset + previous.length
    return { offset: from, length: member.offset + member.length - from, content: "" }
  }
  return { offset: root.offset + 1, length: root.length - 2, content: "" }
}

/**
 * The check before anything is written: the new text must parse as an object holding exactly the
 * requested value (or no key after a reset). A failure here is a bug in `applyChange`, never the
 * user's document, so it is reported as such rather than written.
 */
export const verifyChange = (
  before: SettingsDocument,
  text: string,
  change: PolicyChange
): Either.Either<void, string> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return Either.left(`the edited document does not parse: ${String(error)}`)
  }
  if (!isObject(value)) return Either.left("the edited document is not an object")
  if (change._tag === "Set" ? value[settingsKey] !== change.value : Object.hasOwn(value, settingsKey)) {
    return Either.left(`the edited document does not hold the requested ${settingsKey}`)
  }
  const old: Record<string, unknown> = before.text.length === 0 ? {} : JSON.parse(before.text)
  const others = (object: Record<string, unknown>) =>
    JSON.stringify(Object.keys(object).filter((key) => key !== settingsKey).map((key) => [key, object[key]]))
  if (others(old) !== others(value)) return Either.left("the edit changed another setting")
  return Either.right(undefined)
}
