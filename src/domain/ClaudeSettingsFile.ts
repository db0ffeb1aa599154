/**
 * One settings file as Claude Code 2.1.332 reads it, reduced to what it means for
 * `crossSessionInbound`.
 *
 * Claude Code's reader is more lenient than this project's own settings file editor
 * (`Settings.ts`), and the policy must follow Claude Code's, not ours: a byte-order mark is
 * stripped, a UTF-16LE file with its mark is decoded, white space alone reads as `{}`. It is
 * stricter elsewhere: a file over 2 MiB, or not a regular file, is skipped with an error. A file it
 * cannot parse as a JSON object is skipped as a whole, so it says nothing about the policy; but a
 * member with an unrecognized value is dropped with a warning, and that warning is what makes
 * Claude Code hold messages, so the two must never be confused.
 */
import { killSwitchInSettings } from "./ClaudeEnvironment.js"
import { settingsKey } from "./InboundPolicyNames.js"
import { isJsonObject, jsonPreview } from "./JsonText.js"
import type { ReadingProblem, SettingsSource, SourceReading } from "./Policy.js"
import { type ModeSettings, modeSettingsOfDocument } from "./PolicyPermissionMode.js"

/** Claude Code's size limit for a settings file. */
export const settingsFileMaxBytes = 2 * 1024 * 1024

export type ParsedSettings =
  | { readonly _tag: "Document"; readonly document: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Skipped"; readonly problem: ReadingProblem; readonly reason: string }

const utf8 = new TextDecoder("utf-8")
const utf16le = new TextDecoder("utf-16le")

/** Bytes to text as Claude Code decodes them: UTF-16LE when they start with its mark, else lossy UTF-8. */
export const decodeSettingsText = (bytes: Uint8Array): string =>
  bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe ? utf16le.decode(bytes) : utf8.decode(bytes)

/** Text to a settings object, or the reason Claude Code skips the whole file. */
export const parseSettingsText = (text: string): ParsedSettings => {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text
  if (body.trim() === "") return { _tag: "Document", document: {} }
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch (error) {
    return { _tag: "Skipped", problem: "invalid_json", reason: error instanceof Error ? error.message : String(error) }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { _tag: "Skipped", problem: "not_an_object", reason: "the document is not a JSON object" }
  }
  return { _tag: "Document", document: value as Record<string, unknown> }
}

const isInboundPolicy = (value: unknown): boolean => value === "accept" || value === "hold" || value === "refuse"

const permissionModes: ReadonlySet<unknown> = new Set(["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan", "manual"])

/**
 * A member Claude Code's settings schema refuses, which makes it skip the whole file ("Files with
 * errors are skipped entirely, not just the invalid settings"), or undefined. Only members seen
 * refused by Claude Code 2.1.332 are checked; an invalid member of another kind goes unseen here.
 */
export const schemaRefusal = (document: Readonly<Record<string, unknown>>): string | undefined => {
  const member = (key: string) => (Object.hasOwn(document, key) ? document[key] : undefined)
  const permissions = member("permissions")
  if (permissions !== undefined) {
    if (!isJsonObject(permissions)) return "its permissions member is not an object"
    if (Object.hasOwn(permissions, "defaultMode") && !permissionModes.has(permissions["defaultMode"])) {
      return "its permissions.defaultMode is not a permission mode"
    }
    for (const list of ["allow", "deny", "ask"]) {
      if (Object.hasOwn(permissions, list) && !Array.isArray(permissions[list])) return `its permissions.${list} is not an array`
    }
  }
  const env = member("env")
  if (env !== undefined && !isJsonObject(env)) return "its env member is not an object"
  const model = member("model")
  if (model !== undefined && typeof model !== "string") return "its model member is not a string"
  const skip = member("skipDangerousModePermissionPrompt")
  if (skip !== undefined && typeof skip !== "boolean") return "its skipDangerousModePermissionPrompt member is not a boolean"
  return undefined
}

/**
 * A value short enough to print: scalars as they are (long strings cut), anything else as a short
 * JSON text. The file is anybody's (a project's settings come with the repository), so the text is
 * made without `JSON.stringify`, which recurses: a value nested a few thousand levels deep would
 * overflow the stack and end the command.
 */
export const shortValue = (value: unknown): unknown => {
  if (typeof value === "string") return value.length <= 80 ? value : `${value.slice(0, 77)}...`
  if (typeof value !== "object" || value === null) return value
  return jsonPreview(value, 80)
}

/** The reading of a settings object Claude Code has parsed. */
export const readingOfDocument = (
  source: SettingsSource,
  path: string | null,
  document: Readonly<Record<string, unknown>>
): SourceReading => {
  if (!Object.hasOwn(document, settingsKey)) {
    return { source, path, value: null, state: "absent", problem: null, detail: null }
  }
  const value = document[settingsKey]
  if (isInboundPolicy(value)) return { source, path, value, state: "set", problem: null, detail: null }
  return {
    source,
    path,
    value: shortValue(value),
    state: "invalid",
    problem: "invalid_value",
    detail: source === "policySettings"
      ? "an unrecognized value in managed settings counts as refuse"
      : "an unrecognized value is dropped, and while it is present messages are at least held"
  }
}

/** What reading one file gave; the caller stats before it reads, so that a FIFO is never opened. */
export type FileRead =
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "NotAFile" }
  | { readonly _tag: "TooLarge"; readonly size: number }
  | { readonly _tag: "Failed"; readonly reason: string }

/** A file's reading, and the value its `env` gives the kill switch. */
export interface FileOutcome {
  readonly reading: SourceReading
  /** A string when the file sets the variable, undefined when it does not, null when that is unknown. */
  readonly killSwitch: string | undefined | null
  /** What it says about permission modes, for the receiver's launch mode. */
  readonly permissions?: ModeSettings | undefined
}

/**
 * A file as Claude Code reads it. A skipped file gives nothing, its `env` included. A managed file
 * Claude Code would refuse to start on gives nothing known (see `Policy.ts`' `invalid`), and
 * neither does a file that could not be read.
 */
export const fileOutcome = (source: SettingsSource, path: string | null, read: FileRead): FileOutcome => {
  const unknownIfManaged = source === "policySettings" ? null : undefined
  switch (read._tag) {
    case "Missing":
      return { reading: absentReading(source, path), killSwitch: undefined }
    case "NotAFile":
      return { reading: skipped(source, path, "not_a_file", "it is not a regular file"), killSwitch: unknownIfManaged }
    case "TooLarge":
      return { reading: skipped(source, path, "too_large", "larger than 2 MiB"), killSwitch: unknownIfManaged }
    case "Failed":
      return { reading: unreadableReading(source, path, read.reason), killSwitch: null }
    case "Bytes": {
      if (read.bytes.length > settingsFileMaxBytes) return fileOutcome(source, path, { _tag: "TooLarge", size: read.bytes.length })
      const key = `${source}\0${path}`
      const outcomes = outcomesOfBytes.get(read) ?? new Map<string, FileOutcome>()
      const known = outcomes.get(key)
      if (known !== undefined) return known
      const parsed = parseSettingsText(decodeSettingsText(read.bytes))
      // Managed files are read with a lenient schema that drops a bad member and keeps the rest.
      const refusal = parsed._tag === "Document" && source !== "policySettings" ? schemaRefusal(parsed.document) : undefined
      const outcome: FileOutcome = parsed._tag === "Skipped"
        ? { reading: skipped(source, path, parsed.problem, parsed.reason), killSwitch: unknownIfManaged }
        : refusal === undefined
        ? {
          reading: readingOfDocument(source, path, parsed.document),
          killSwitch: killSwitchInSettings(parsed.document),
          permissions: modeSettingsOfDocument(parsed.document)
        }
        : { reading: refusedReading(source, path, parsed.document, refusal), killSwitch: unknownIfManaged }
      outcomesOfBytes.set(read, outcomes.set(key, outcome))
      return outcome
    }
  }
}

/**
 * A read's outcomes by source and path. The policy's file reader shares one read among every
 * session of a pass (the managed files, the user's), so the text is parsed once per read, not once
 * per session; a read is never changed, so the outcome is the same for every session that holds it.
 */
const outcomesOfBytes = new WeakMap<FileRead, Map<string, FileOutcome>>()

/**
 * A file whose schema Claude Code refuses: skipped whole, but its warning for an unrecognized
 * `crossSessionInbound` value is made before the schema is checked, so such a value still holds
 * messages.
 */
const refusedReading = (source: SettingsSource, path: string | null, document: Readonly<Record<string, unknown>>, refusal: string): SourceReading => {
  const reading = readingOfDocument(source, path, document)
  return reading.state === "invalid" ? reading : skipped(source, path, "invalid_settings", refusal)
}

/** A file Claude Code skips as a whole: it gives no value, and no warning that would hold messages. */
export const skipped = (
  source: SettingsSource,
  path: string | null,
  problem: ReadingProblem,
  reason: string
): SourceReading => ({
  source,
  path,
  value: null,
  state: "invalid",
  problem,
  detail: `Claude Code skips this file: ${reason}`
})

export const absentReading = (source: SettingsSource, path: string | null): SourceReading => ({
  source,
  path,
  value: null,
  state: "absent",
  problem: null,
  detail: null
})

export const unreadableReading = (source: SettingsSource, path: string | null, reason: string): SourceReading => ({
  source,
  path,
  value: null,
  state: "unreadable",
  problem: null,
  detail: reason
})

export const notApplicableReading = (source: SettingsSource, path: string | null, reason: string): SourceReading => ({
  source,
  path,
  value: null,
  state: "not_applicable",
  problem: null,
  detail: reason
})
