/**
 * The registry record: the only place that knows the vendor's spelling. Claude Code adds fields
 * over time and rewrites its records in place, so decoding is forgiving where it is safe (unknown
 * fields ignored, a descriptive field of the wrong type treated as absent) and strict where a wrong
 * answer would address the wrong process (pid, name, session id).
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Session } from "./Session.js"
import { statusFromRaw } from "./Status.js"
import type { Verdict } from "./Verdict.js"

/** Claude Code's own reader reads at most this much of a record. */
export const maxRecordBytes = 256 * 1024

const maxPid = 2147483647

/** `<pid>.json` with a canonical decimal pid, as Claude Code's reader takes them. */
const recordName = /^[1-9][0-9]*\.json$/

/** The pid a record's file name gives, or none when the name is not a record's. */
export const pidOfFileName = (name: string): Option.Option<number> =>
  // A canonical name past the pid range (`2147483648.json`) is still a record's name: its record
  // then fails `invalid_pid` or `pid_mismatch`, as the contract orders the checks.
  recordName.test(name) ? Option.some(Number(name.slice(0, -".json".length))) : Option.none()

type FieldType = "string" | "nonEmptyString" | "finiteNumber"

const isOfType: { readonly [T in FieldType]: (u: unknown) => boolean } = {
  string: (u) => typeof u === "string",
  nonEmptyString: (u) => typeof u === "string" && u.length > 0,
  finiteNumber: (u) => typeof u === "number" && Number.isFinite(u)
}

/**
 * The descriptive fields of a record: our name, the vendor's key, and the type a value must have to
 * count. This table is the one place that spells them: the decoder below and the `RecordDescription`
 * schema are both made from it. A value of the wrong type is absent (null), never a reason to discard
 * the record, because Claude Code checks each field on its own too.
 */
const descriptiveFields = {
  cwd: { key: "cwd", type: "string" },
  /** Missing, empty or not a string: the session's inbox did not start (`--restricted`); it is still a session. */
  socketPath: { key: "messagingSocketPath", type: "nonEmptyString" },
  rawStatus: { key: "status", type: "string" },
  statusUpdatedAtMs: { key: "statusUpdatedAt", type: "finiteNumber" },
  updatedAtMs: { key: "updatedAt", type: "finiteNumber" },
  startedAtMs: { key: "startedAt", type: "finiteNumber" },
  kind: { key: "kind", type: "string" },
  entrypoint: { key: "entrypoint", type: "string" },
  nameSource: { key: "nameSource", type: "string" },
  waitingFor: { key: "waitingFor", type: "string" },
  jobId: { key: "jobId", type: "string" },
  version: { key: "version", type: "string" },
  tmux: { key: "tmux", type: "string" }
} as const satisfies Record<string, { readonly key: string; readonly type: FieldType }>

type DescriptiveFields = typeof descriptiveFields
type ValueOf<T extends FieldType> = T extends "finiteNumber" ? number : string

/** The descriptive fields of a record in our spelling; null where absent or of the wrong type. */
export type RecordDescription = { readonly [K in keyof DescriptiveFields]: ValueOf<DescriptiveFields[K]["type"]> | null }

const fieldEntries = Object.entries(descriptiveFields) as ReadonlyArray<
  readonly [keyof DescriptiveFields, { readonly key: string; readonly type: FieldType }]
>

const hasOwn = Object.prototype.hasOwnProperty

/** One descriptive field of a record: its value when it is an own property of the field's type, else null. */
const fieldValue = <F extends DescriptiveFields[keyof DescriptiveFields]>(record: object, { key, type }: F): ValueOf<F["type"]> | null => {
  const value = hasOwn.call(record, key) ? (record as { readonly [key: string]: unknown })[key] : undefined
  return isOfType[type](value) ? (value as ValueOf<F["type"]>) : null
}

/**
 * Decodes the descriptive fields as `RecordDescription` (the schema) does: this runs for every
 * candidate record of a scan, where the schema's interpreter would cost several times more than
 * these checks. A property test holds the two to the same answers. It is one object literal, each
 * field read as the table says (an object filled in by a loop over the table is much slower). The
 * type still requires every field of the table.
 */
export const decodeRecordDescription = (record: object): RecordDescription => ({
  cwd: fieldValue(record, descriptiveFields.cwd),
  socketPath: fieldValue(record, descriptiveFields.socketPath),
  rawStatus: fieldValue(record, descriptiveFields.rawStatus),
  statusUpdatedAtMs: fieldValue(record, descriptiveFields.statusUpdatedAtMs),
  updatedAtMs: fieldValue(record, descriptiveFields.updatedAtMs),
  startedAtMs: fieldValue(record, descriptiveFields.startedAtMs),
  kind: fieldValue(record, descriptiveFields.kind),
  entrypoint: fieldValue(record, descriptiveFields.entrypoint),
  nameSource: fieldValue(record, descriptiveFields.nameSource),
  waitingFor: fieldValue(record, descriptiveFields.waitingFor),
  jobId: fieldValue(record, descriptiveFields.jobId),
  version: fieldValue(record, descriptiveFields.version),
  tmux: fieldValue(record, descriptiveFields.tmux)
})

const schemaOfType = (type: FieldType): Schema.Schema<unknown> => {
  switch (type) {
    case "string":
      return Schema.String as Schema.Schema<unknown>
    case "nonEmptyString":
      return Schema.NonEmptyString as Schema.Schema<unknown>
    case "finiteNumber":
      return Schema.Number.pipe(Schema.filter(Number.isFinite)) as Schema.Schema<unknown>
  }
}

/** A field that is null unless the record holds a value of its type; encoding leaves a null out. */
const lenient = <A>(schema: Schema.Schema<A>, key: string) =>
  Schema.optionalToRequired(Schema.Unknown, Schema.NullOr(schema), {
    decode: (value) => (Option.isSome(value) && Schema.is(schema)(value.value) ? value.value : null),
    encode: (value) => (value === null ? Option.none() : Option.some(value))
  }).pipe(Schema.fromKey(key))

/**
 * The descriptive fields as a schema, vendor spelling in (`messagingSocketPath`, `updatedAt`), ours out
 * (`socketPath`, `updatedAtMs`), made from the same table as the decoder.
 */
export const RecordDescription: Schema.Schema<RecordDescription, { readonly [key: string]: unknown }> = Schema.Struct(
  Object.fromEntries(fieldEntries.map(([name, { key, type }]) => [name, lenient(schemaOfType(type), key)]))
) as never

/**
 * What a record's bytes say before any process is consulted: either a verdict that needs no
 * process (malformed … spare), or a candidate whose liveness the registry must still check.
 */
export type RecordReading =
  | {
    readonly _tag: "Rejected"
    readonly verdict: Verdict
    readonly pid: number | null
    readonly sessionId: string | null
    readonly name: string | null
    /** A parked window's `procStart` when it is a string, to tell whether its process still runs; else null. */
    readonly procStart: string | null
  }
  | {
    readonly _tag: "Candidate"
    readonly pid: number
    readonly sessionId: string
    readonly name: string
    /** `procStart` when it is a string; any other value is ignored, as Claude Code ignores it. */
    readonly procStart: string | null
    readonly pidDomain: string | null
    /**
     * The session as the record describes it, when asked for (`describedAs`); its `address` is
     * decided by the registry, against the other live sessions.
     */
    readonly session: Session | null
  }

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const nonEmptyString = (u: unknown): u is string => typeof u === "string" && u.length > 0

/** Parses a record's bytes as UTF-8 JSON; a byte-order mark is malformed, as it is for Claude Code. */
export const parseRecordJson = (bytes: Uint8Array): Either.Either<unknown, string> => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return Either.left("starts with a byte-order mark")
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Either.left("not valid UTF-8")
  }
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch (error) {
    // A document nested deeper than the parser's stack is not one Claude Code wrote either.
    return Either.left(error instanceof RangeError ? "nested too deeply to parse" : "not valid JSON")
  }
}

/** Longest text of a record quoted in a verdict: a detail names a value, it never reprints a file. */
const maxQuoted = 64

/**
 * A record's value in a few words. A string is cut to its first characters; anything else is named
 * by its type alone, without walking it: a value nested thousands of levels deep must not cost a
 * stack, and an array of a million items must not become a detail of a megabyte.
 */
export const describeValue = (value: unknown): string => {
  if (typeof value === "string") return value.length <= maxQuoted ? value : `${value.slice(0, maxQuoted)}…`
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  if (typeof value === "object") return "an object"
  return `${typeof value === "number" || typeof value === "boolean" ? String(value) : `a ${typeof value}`}`
}

/**
 * Reads a parsed record in the contract's order; the first check that fails names the verdict.
 * `filePid` is the pid from the file name. A candidate's session is described only with
 * `describedAs`, the path it will report: a record whose pid has no process needs only its identity.
 */
export const readRecord = (json: unknown, filePid: number, describedAs: string | null): RecordReading => {
  const reject = (verdict: Verdict, pid: number | null = null, sessionId: string | null = null, name: string | null = null): RecordReading => ({
    _tag: "Rejected",
    verdict,
    pid,
    sessionId,
    name,
    procStart: null
  })
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return reject({ _tag: "malformed", reason: "not a JSON object" })
  }
  const record = json as { readonly [key: string]: unknown }
  const { name, parkedJobId, pid, pidDomain, procStart, sessionId, spare } = record
  const knownName = typeof name === "string" ? name : null
  if (typeof sessionId !== "string") return reject({ _tag: "malformed", reason: "sessionId is not a string" }, null, null, knownName)
  if (typeof pid !== "number") return reject({ _tag: "malformed", reason: "pid is not a number" }, null, sessionId, knownName)
  // 0 and negative pids would address a process group, not a process.
  if (!Number.isInteger(pid) || pid < 1 || pid > maxPid) return reject({ _tag: "invalid_pid", pid }, null, sessionId, knownName)
  if (pid !== filePid) return reject({ _tag: "pid_mismatch", pid, filePid }, pid, sessionId, knownName)
  if (!nonEmptyString(name)) return reject({ _tag: "no_name" }, pid, sessionId)
  if (sessionId === "") return reject({ _tag: "empty_session_id" }, pid, sessionId, name)
  // A parked window's conversation lives on in the background job that registers its own record.
  if (parkedJobId !== undefined && parkedJobId !== null) {
    return {
      ...reject({ _tag: "parked", parkedJobId: describeValue(parkedJobId), windowRunning: false }, pid, sessionId, name),
      procStart: typeof procStart === "string" ? procStart : null
    }
  }
  // A spare holds no conversation yet, and Claude Code addresses none: listing it would offer a
  // sender a session that nobody is in. Claimed by a task, it is rewritten without `spare`.
  if (spare === true) return reject({ _tag: "spare" }, pid, sessionId, name)
  return {
    _tag: "Candidate",
    pid,
    sessionId,
    name,
    procStart: typeof procStart === "string" ? procStart : null,
    pidDomain: typeof pidDomain === "string" ? pidDomain : null,
    session: describedAs === null ? null : sessionOf(record, pid, sessionId, name, describedAs)
  }
}

const sessionOf = (record: object, pid: number, sessionId: string, name: string, file: string): Session => {
  const description = decodeRecordDescription(record)
  return {
    pid,
    sessionId,
    name,
    address: null,
    cwd: description.cwd,
    socketPath: description.socketPath,
    status: statusFromRaw(description.rawStatus),
    rawStatus: description.rawStatus,
    statusUpdatedAtMs: description.statusUpdatedAtMs,
    updatedAtMs: description.updatedAtMs,
    startedAtMs: description.startedAtMs,
    kind: description.kind,
    entrypoint: description.entrypoint,
    nameSource: description.nameSource,
    waitingFor: description.waitingFor,
    jobId: description.jobId,
    version: description.version,
    tmux: description.tmux,
    file,
    stopped: false,
    unaddressable: description.socketPath === null ? "no_socket" : null
  }
}

/**
 * Start times compare word by word: on Linux the recorded text is one word (field 22 of
 * `/proc/<pid>/stat`), on macOS it is `ps -o lstart=` output whose spacing may differ.
 */
export const sameStartTime = (recorded: string, actual: string): boolean => {
  const a = recorded.trim().split(/\s+/)
  const b = actual.trim().split(/\s+/)
  return a.length === b.length && a.every((word, i) => word === b[i])
}
