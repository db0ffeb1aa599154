/**
 * The registry record: the only place that knows the vendor's spelling. Claude Code adds fields
 * over time and rewrites its records in place, so decoding is forgiving where it is safe
 * (unknown fields ignored, a descriptive field of the wrong type treated as absent) and strict
 * where a wrong answer would address the wrong process (pid, name, socket, session id).
 */
import { Either, Option, Schema } from "effect"
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

/**
 * A descriptive field: a value of the wrong type is absent (null), never a reason to discard the
 * record, because Claude Code checks each field on its own too.
 */
const lenient = <A>(schema: Schema.Schema<A>) =>
  Schema.optionalToRequired(Schema.Unknown, Schema.NullOr(schema), {
    decode: (value) => (Option.isSome(value) && Schema.is(schema)(value.value) ? value.value : null),
    encode: (value) => (value === null ? Option.none() : Option.some(value))
  })

const FiniteNumber = Schema.Number.pipe(Schema.filter(Number.isFinite))

/** The descriptive fields of a record, vendor spelling in, our spelling out. */
export const RecordDescription = Schema.Struct({
  cwd: lenient(Schema.String),
  rawStatus: lenient(Schema.String).pipe(Schema.fromKey("status")),
  statusUpdatedAtMs: lenient(FiniteNumber).pipe(Schema.fromKey("statusUpdatedAt")),
  updatedAtMs: lenient(FiniteNumber).pipe(Schema.fromKey("updatedAt")),
  startedAtMs: lenient(FiniteNumber).pipe(Schema.fromKey("startedAt")),
  kind: lenient(Schema.String),
  waitingFor: lenient(Schema.String),
  jobId: lenient(Schema.String),
  version: lenient(Schema.String),
  tmux: lenient(Schema.String)
})

/** What `RecordDescription` decodes to. */
export type RecordDescription = typeof RecordDescription.Type

const hasOwn = Object.prototype.hasOwnProperty

/** A descriptive string field: its value when it is an own string property, else null. */
const stringField = (record: object, key: string): string | null => {
  if (!hasOwn.call(record, key)) return null
  const value = (record as { readonly [key: string]: unknown })[key]
  return typeof value === "string" ? value : null
}

/** A descriptive number field: its value when it is an own finite number, else null. */
const finiteField = (record: object, key: string): number | null => {
  if (!hasOwn.call(record, key)) return null
  const value = (record as { readonly [key: string]: unknown })[key]
  return typeof value === "number" && Number.isFinite(value) ? value : null
}

/**
 * `RecordDescription`'s decoding, written out by hand: it runs once per candidate record, thousands
 * of times per scan, where Schema's interpreter costs several times more than these few checks (and
 * its parser is the slowest thing `list` would otherwise initialize on a cold start). Each field is
 * what the Schema gives: an own property of the right type (numbers finite) or null; `status` is kept
 * as its raw text. The Schema stays the documented shape; a test holds the two to the same answers.
 */
export const decodeRecordDescription = (record: object): RecordDescription => ({
  cwd: stringField(record, "cwd"),
  rawStatus: stringField(record, "status"),
  statusUpdatedAtMs: finiteField(record, "statusUpdatedAt"),
  updatedAtMs: finiteField(record, "updatedAt"),
  startedAtMs: finiteField(record, "startedAt"),
  kind: stringField(record, "kind"),
  waitingFor: stringField(record, "waitingFor"),
  jobId: stringField(record, "jobId"),
  version: stringField(record, "version"),
  tmux: stringField(record, "tmux")
})

/**
 * What a record's bytes say before any process is consulted: either a verdict that needs no
 * process (malformed … parked), or a candidate whose liveness the registry must still check.
 */
export type RecordReading =
  | {
    readonly _tag: "Rejected"
    readonly verdict: Verdict
    readonly pid: number | null
    readonly sessionId: string | null
    readonly name: string | null
  }
  | {
    readonly _tag: "Candidate"
    readonly session: Session
    /** `procStart` when it is a string; any other value is ignored, as Claude Code ignores it. */
    readonly procStart: string | null
    readonly pidDomain: string | null
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
  } catch {
    return Either.left("not valid JSON")
  }
}

/**
 * Reads a parsed record in the contract's order; the first check that fails names the verdict.
 * `filePid` is the pid from the file name, `file` the path the session will report.
 */
export const readRecord = (json: unknown, filePid: number, file: string): RecordReading => {
  const reject = (verdict: Verdict, pid: number | null = null, sessionId: string | null = null, name: string | null = null): RecordReading => ({
    _tag: "Rejected",
    verdict,
    pid,
    sessionId,
    name
  })
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return reject({ _tag: "malformed", reason: "not a JSON object" })
  }
  const record = json as { readonly [key: string]: unknown }
  const { messagingSocketPath, name, parkedJobId, pid, pidDomain, procStart, sessionId } = record
  const knownName = typeof name === "string" ? name : null
  if (typeof sessionId !== "string") return reject({ _tag: "malformed", reason: "sessionId is not a string" }, null, null, knownName)
  if (typeof pid !== "number") return reject({ _tag: "malformed", reason: "pid is not a number" }, null, sessionId, knownName)
  // 0 and negative pids would address a process group, not a process.
  if (!Number.isInteger(pid) || pid < 1 || pid > maxPid) return reject({ _tag: "invalid_pid", pid }, null, sessionId, knownName)
  if (pid !== filePid) return reject({ _tag: "pid_mismatch", pid, filePid }, pid, sessionId, knownName)
  if (!nonEmptyString(name)) return reject({ _tag: "no_name" }, pid, sessionId)
  if (!nonEmptyString(messagingSocketPath)) return reject({ _tag: "no_socket" }, pid, sessionId, name)
  if (sessionId === "") return reject({ _tag: "empty_session_id" }, pid, sessionId, name)
  // A parked window's conversation lives on in the background job that registers its own record.
  if (parkedJobId !== undefined && parkedJobId !== null) {
    const jobId = typeof parkedJobId === "string" ? parkedJobId : JSON.stringify(parkedJobId)
    return reject({ _tag: "parked", parkedJobId: jobId }, pid, sessionId, name)
  }
  const description = decodeRecordDescription(record)
  return {
    _tag: "Candidate",
    procStart: typeof procStart === "string" ? procStart : null,
    pidDomain: typeof pidDomain === "string" ? pidDomain : null,
    session: {
      pid,
      sessionId,
      name,
      cwd: description.cwd,
      socketPath: messagingSocketPath,
      status: statusFromRaw(description.rawStatus),
      rawStatus: description.rawStatus,
      statusUpdatedAtMs: description.statusUpdatedAtMs,
      updatedAtMs: description.updatedAtMs,
      startedAtMs: description.startedAtMs,
      kind: description.kind,
      waitingFor: description.waitingFor,
      jobId: description.jobId,
      version: description.version,
      tmux: description.tmux,
      file
    }
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

