/**
 * The one verdict each `*.json` entry of the registry directory gets. The checks run in the order
 * of this union and the first that fails names the verdict; `live` means all of them passed.
 * `inspect`, `watch` and `resolve`'s refusals all read this same value.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Schema from "effect/Schema"
import { Session } from "./Session.js"

/**
 * An entry's type, in `@effect/platform`'s words (`FileSystem.File.Type`), which is also how `--json`
 * spells it. The annotation checks both ways that the schema holds exactly those words.
 */
export const EntryType: Schema.Schema<FileSystem.File.Type> = Schema.Literal(
  "File",
  "Directory",
  "SymbolicLink",
  "FIFO",
  "Socket",
  "BlockDevice",
  "CharacterDevice",
  "Unknown"
)
export type EntryType = FileSystem.File.Type

export const NotARecord = Schema.TaggedStruct("not_a_record", {})
export const NotAFile = Schema.TaggedStruct("not_a_file", { type: EntryType })
export const TooLarge = Schema.TaggedStruct("too_large", { size: Schema.Number })
export const Unreadable = Schema.TaggedStruct("unreadable", { reason: Schema.String })
export const Malformed = Schema.TaggedStruct("malformed", { reason: Schema.String })
export const InvalidPid = Schema.TaggedStruct("invalid_pid", { pid: Schema.Number })
export const PidMismatch = Schema.TaggedStruct("pid_mismatch", { pid: Schema.Number, filePid: Schema.Number })
export const NoName = Schema.TaggedStruct("no_name", {})
export const EmptySessionId = Schema.TaggedStruct("empty_session_id", {})
/** `parkedJobId` is the job's id as the record spells it; a value that is not a string is described, never reprinted. */
export const Parked = Schema.TaggedStruct("parked", {
  parkedJobId: Schema.String,
  /** Whether a process still runs with the window's pid: a parked window whose process exited must not read as running. */
  windowRunning: Schema.Boolean
})
export const Spare = Schema.TaggedStruct("spare", {})
/**
 * The record file's owner is neither the reader nor the Claude home's owner: another user wrote it
 * (a shared directory whose `sessions/` they could write), so it names none of the reader's sessions.
 */
export const ForeignOwner = Schema.TaggedStruct("foreign_owner", {
  owner: Schema.Number,
  reader: Schema.Number,
  /** The home's owner; null where it could not be read. */
  homeOwner: Schema.NullOr(Schema.Number)
})
export const OtherPidDomain = Schema.TaggedStruct("other_pid_domain", { pidDomain: Schema.String, here: Schema.String })
export const Dead = Schema.TaggedStruct("dead", {})
/**
 * `recorded` and `actual` are the start times, or, with `proof: "owner"`, who wrote the record and
 * who runs the pid now: a record the reader's user wrote, whose pid another user's process holds
 * (`kill(pid, 0)` answers EPERM; under `hidepid` its start time cannot be read), was not written by
 * that process, as a user's own processes are always visible to it and signalable by it.
 */
export const PidReused = Schema.TaggedStruct("pid_reused", {
  recorded: Schema.String,
  actual: Schema.String,
  proof: Schema.optionalWith(Schema.Literal("owner"), { exact: true })
})
export const Live = Schema.TaggedStruct("live", { session: Session })

export const Verdict = Schema.Union(
  NotARecord,
  NotAFile,
  TooLarge,
  Unreadable,
  Malformed,
  InvalidPid,
  PidMismatch,
  NoName,
  EmptySessionId,
  Parked,
  Spare,
  ForeignOwner,
  OtherPidDomain,
  Dead,
  PidReused,
  Live
)
export type Verdict = typeof Verdict.Type

/** Every verdict name, in the order the contract's checks run. */
export const VerdictName = Schema.Literal(
  "not_a_record",
  "not_a_file",
  "too_large",
  "unreadable",
  "malformed",
  "invalid_pid",
  "pid_mismatch",
  "no_name",
  "empty_session_id",
  "parked",
  "spare",
  "foreign_owner",
  "other_pid_domain",
  "dead",
  "pid_reused",
  "live"
)
export type VerdictName = typeof VerdictName.Type

// The names and the union cannot drift apart: this stops compiling when one has a verdict the other lacks.
const sameNames: [VerdictName] extends [Verdict["_tag"]] ? [Verdict["_tag"]] extends [VerdictName] ? true : never : never = true
void sameNames

export const verdictNames: ReadonlyArray<VerdictName> = VerdictName.literals

export { describeVerdict, entryTypeWords } from "./VerdictWords.js"

/**
 * One registry file and its verdict, with whatever identity the file carried (so that a refusal
 * can say why a session id is not live). `pid`, `sessionId` and `name` are null where unknown.
 */
export const RegistryEntry = Schema.Struct({
  file: Schema.String,
  verdict: Verdict,
  pid: Schema.NullOr(Schema.Number),
  sessionId: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  /** The Claude home the file is in: present when several homes are read. */
  home: Schema.optionalWith(Schema.String, { exact: true })
})
export type RegistryEntry = typeof RegistryEntry.Type
