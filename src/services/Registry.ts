/**
 * The session registry. Two rules earn their place here:
 * - a registry file is not a live session: files outlive a crash (SIGKILL leaves them) and pids are
 *   reused, so "live" is only ever the answer of a process check made now, against the start time
 *   the record carries;
 * - nothing here writes: the files, their directory and the sessions' sockets are Claude Code's.
 * A bad file never fails the scan: it gets its verdict and the scan goes on.
 */
import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Layer, Option } from "effect"
import * as path from "node:path"
import { IdentityMismatch, NotLive } from "../domain/Errors.js"
import { maxRecordBytes, parseRecordJson, pidOfFileName, readRecord, sameStartTime } from "../domain/Record.js"
import type { RecordReading } from "../domain/Record.js"
import type { Session } from "../domain/Session.js"
import { describeVerdict, type EntryType, type RegistryEntry, type Verdict } from "../domain/Verdict.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { type BoundedRead, Files } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"

/** Which session to resolve: by session id, or by its registry name (the cross-session address). */
export type SessionQuery =
  | { readonly sessionId: string; readonly name?: undefined }
  | { readonly name: string; readonly sessionId?: undefined }

export interface Registry {
  /** Every `*.json` entry of the registry directory with its verdict, sorted by file. */
  readonly inspect: Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError>
  /** The live sessions, sorted by pid. */
  readonly list: Effect.Effect<ReadonlyArray<Session>, PlatformError>
  /**
   * Re-reads the registry and returns the one live session that answers to the query, or refuses:
   * `NotLive` when none does (saying why, from the files that carried the id or name), and
   * `IdentityMismatch` when the id or the name belongs to more than one live record, because
   * delivering into the wrong session is worse than not delivering.
   */
  readonly resolve: (query: SessionQuery) => Effect.Effect<Session, NotLive | IdentityMismatch | PlatformError>
}

export const Registry = Context.GenericTag<Registry>("claude-peers/Registry")

/** Claude Code rewrites records in place; a read that caught a half-written file is retried once after this. */
export const tornReadRetryMillis = 25

type FileReading =
  | { readonly _tag: "Verdict"; readonly verdict: Verdict }
  | { readonly _tag: "Record"; readonly reading: RecordReading }

/** A read whose bytes did not parse: maybe Claude Code's in-place rewrite caught half way. */
type FirstReading = FileReading | { readonly _tag: "Unparsable"; readonly reason: string }

const describeFailure = (error: PlatformError): string =>
  error._tag === "SystemError" && error.reason === "NotFound" ? "it vanished during the scan" : error.message

const unreadable = (error: PlatformError): FileReading => ({
  _tag: "Verdict",
  verdict: { _tag: "unreadable", reason: describeFailure(error) }
})

const notARecord: FileReading = { _tag: "Verdict", verdict: { _tag: "not_a_record" } }

/** What one bounded read's bytes say, before any process is consulted. */
const decodeRead = (read: BoundedRead, file: string, filePid: number): FirstReading => {
  switch (read._tag) {
    case "NotRegular":
      return { _tag: "Verdict", verdict: { _tag: "not_a_file", type: read.type } }
    case "TooLarge":
      return { _tag: "Verdict", verdict: { _tag: "too_large", size: read.size } }
    case "Read": {
      const json = parseRecordJson(read.bytes)
      return json._tag === "Left"
        ? { _tag: "Unparsable", reason: json.left }
        : { _tag: "Record", reading: readRecord(json.right, filePid, file) }
    }
  }
}

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const directory = home.sessionsDirectory

  /**
   * A failed read is `unreadable` only when the earlier checks still pass: an unreadable file of
   * more than 256 KiB is `too_large`, as the contract orders them (the stat needs no read permission).
   */
  const readFailure = (file: string, error: PlatformError): Effect.Effect<FirstReading> =>
    Effect.match(files.stat(file), {
      onFailure: () => unreadable(error),
      onSuccess: (info): FirstReading =>
        info.type !== "File"
          ? { _tag: "Verdict", verdict: { _tag: "not_a_file", type: info.type } }
          : info.size > maxRecordBytes
          ? { _tag: "Verdict", verdict: { _tag: "too_large", size: info.size } }
          : unreadable(error)
    })

  /** One bounded read of a file that is (or was, a moment ago) regular, decoded as a record. */
  const readOnce = (file: string, filePid: number): Effect.Effect<FirstReading> =>
    Effect.matchEffect(files.readBounded(file, { maxBytes: maxRecordBytes, followLinks: true }), {
      onFailure: (error) => readFailure(file, error),
      onSuccess: (read) => Effect.succeed(decodeRead(read, file, filePid))
    })

  const readEntry = (file: string, filePid: number, type: EntryType): Effect.Effect<FirstReading> => {
    if (type === "File") return readOnce(file, filePid)
    // The directory already says what it is unless it is a link or the file system cannot tell:
    // only those are stat'ed, so that a FIFO or a device is never opened.
    if (type !== "SymbolicLink" && type !== "Unknown") {
      return Effect.succeed({ _tag: "Verdict", verdict: { _tag: "not_a_file", type } })
    }
    return Effect.matchEffect(files.stat(file), {
      onFailure: (error) =>
        Effect.succeed(
          type === "SymbolicLink" && error._tag === "SystemError" && error.reason === "NotFound"
            ? { _tag: "Verdict", verdict: { _tag: "unreadable", reason: "the link points to nothing" } }
            : unreadable(error)
        ),
      onSuccess: (info) =>
        info.type === "File"
          ? readOnce(file, filePid)
          : Effect.succeed<FirstReading>({ _tag: "Verdict", verdict: { _tag: "not_a_file", type: info.type } })
    })
  }

  /**
   * Every `*.json` entry with its verdict; with `onlyLivePids`, only the entries whose file name is
   * the pid of a live process. That is all `list` needs (a record whose pid is dead cannot be live,
   * and a record naming another pid than its file's is `pid_mismatch`), and most records of a
   * registry are stale: their files are then never opened. Either way the file names' pids are
   * checked first, in one pass with one `kill` per pid, so that `list` and `inspect` decide
   * liveness by the same answers; a start time is read only for the records that passed every
   * other check.
   */
  const scan = (onlyLivePids: boolean): Effect.Effect<Array<RegistryEntry>, PlatformError> =>
    Effect.gen(function*() {
      const entries = yield* files.readDirectory(directory).pipe(
        // A missing registry directory is an empty registry: no session has started yet.
        Effect.catchIf(
          (error) => error._tag === "SystemError" && error.reason === "NotFound",
          () => Effect.succeed([])
        )
      )
      const records = entries.filter((entry) => entry.name.endsWith(".json"))
      const filePids = records.map((entry) => Option.getOrNull(pidOfFileName(entry.name)))
      const liveness = yield* probe.checkLiveness(filePids.filter((pid): pid is number => pid !== null))
      const candidates: Array<{ readonly file: string; readonly type: EntryType; readonly pid: number | null }> = []
      records.forEach((entry, i) => {
        const pid = filePids[i] ?? null
        if (onlyLivePids && (pid === null || !liveness.isAlive(pid))) return
        candidates.push({ file: path.join(directory, entry.name), type: entry.type, pid })
      })

      // One file at a time: the Node layer's reads are synchronous (see `FilesNode`), and a fiber
      // per file would cost more than the read itself.
      const readings: Array<FirstReading> = yield* Effect.forEach(
        candidates,
        (c) => (c.pid === null ? Effect.succeed(notARecord) : readEntry(c.file, c.pid, c.type))
      )
      // Reads that did not parse are retried once, after one pause for all of them: a record
      // rewritten in place is whole again within milliseconds, and n torn files must not cost n pauses.
      const torn = readings.flatMap((reading, i) => (reading._tag === "Unparsable" ? [i] : []))
      if (torn.length > 0) {
        yield* Effect.sleep(tornReadRetryMillis)
        yield* Effect.forEach(torn, (i) => {
          const { file, pid } = candidates[i]!
          return Effect.map(readOnce(file, pid!), (second) => {
            readings[i] = second._tag !== "Unparsable"
              ? second
              : { _tag: "Verdict", verdict: { _tag: "malformed", reason: second.reason } }
          })
        }, { discard: true })
      }
      const here = yield* probe.pidDomain

      const results: Array<RegistryEntry> = []
      const pending: Array<{ readonly index: number; readonly session: Session; readonly procStart: string | null }> = []
      candidates.forEach(({ file, pid }, i) => {
        const reading = readings[i]!
        if (reading._tag !== "Record") {
          const verdict: Verdict = reading._tag === "Verdict" ? reading.verdict : { _tag: "malformed", reason: reading.reason }
          results.push({ file, verdict, pid, sessionId: null, name: null })
          return
        }
        const record = reading.reading
        if (record._tag === "Rejected") {
          results.push({ file, verdict: record.verdict, pid, sessionId: record.sessionId, name: record.name })
          return
        }
        const { session } = record
        const identity = { file, pid: session.pid, sessionId: session.sessionId, name: session.name }
        // A pid of another machine or container cannot be checked here; where this machine's
        // domain is unknown (macOS writes the bare `linux`) the check is skipped.
        if (record.pidDomain !== null && Option.isSome(here) && record.pidDomain !== here.value) {
          results.push({ ...identity, verdict: { _tag: "other_pid_domain", pidDomain: record.pidDomain, here: here.value } })
          return
        }
        pending.push({ index: results.length, session, procStart: record.procStart })
        results.push({ ...identity, verdict: { _tag: "dead" } })
      })

      // Processes are consulted only for records that passed every other check, once per pid.
      const pids = pending.map((p) => p.session.pid)
      const startTimeOf = new Set(pending.filter((p) => p.procStart !== null).map((p) => p.session.pid))
      const states = yield* liveness.states(pids, startTimeOf)
      for (const { index, procStart, session } of pending) {
        const state = states.get(session.pid)
        const entry = results[index]!
        if (state === undefined || state._tag === "Dead") continue
        // A start time that cannot be read proves nothing; one that differs proves the pid was reused.
        if (procStart !== null && Option.isSome(state.startTime) && !sameStartTime(procStart, state.startTime.value)) {
          results[index] = { ...entry, verdict: { _tag: "pid_reused", recorded: procStart, actual: state.startTime.value } }
        } else {
          results[index] = { ...entry, verdict: { _tag: "live", session } }
        }
      }
      return results.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    })

  const inspect: Registry["inspect"] = scan(false)

  const liveSessions = (entries: ReadonlyArray<RegistryEntry>): Array<Session> =>
    entries.flatMap((entry) => (entry.verdict._tag === "live" ? [entry.verdict.session] : [])).sort((a, b) => a.pid - b.pid)

  const list: Registry["list"] = Effect.map(scan(true), liveSessions)

  const resolve: Registry["resolve"] = (query) =>
    Effect.gen(function*() {
      const entries = yield* inspect
      const live = liveSessions(entries)
      const key = query.sessionId !== undefined ? { sessionId: query.sessionId, name: null } : { sessionId: null, name: query.name }
      const asked = key.sessionId !== null ? `session id ${JSON.stringify(key.sessionId)}` : `name ${JSON.stringify(key.name)}`
      const matches = live.filter((s) => key.sessionId !== null ? s.sessionId === key.sessionId : s.name === key.name)
      if (matches.length === 0) {
        const reasons = entries
          .filter((e) => e.verdict._tag !== "live" && (key.sessionId !== null ? e.sessionId === key.sessionId : e.name === key.name))
          .map((e) => ({ file: e.file, verdict: e.verdict._tag, detail: describeVerdict(e.verdict) }))
        const why = reasons.length === 0
          ? "no registry file carries it"
          : reasons.map((r) => `${path.basename(r.file)}: ${r.detail}`).join("; ")
        return yield* new NotLive({ query: key, reasons, message: `no live session has ${asked}: ${why}` })
      }
      if (matches.length > 1) {
        return yield* new IdentityMismatch({
          query: key,
          pids: matches.map((s) => s.pid),
          message: `${asked} belongs to ${matches.length} live sessions (pids ${matches.map((s) => s.pid).join(", ")}): refusing to pick one`
        })
      }
      const session = matches[0]!
      // The name is the cross-session address and the id the conversation: both must point at
      // this one process, or a message could land in another session.
      const rivals = live.filter((s) =>
        s !== session && (s.name === session.name || s.sessionId === session.sessionId)
      )
      if (rivals.length > 0) {
        const pids = [session.pid, ...rivals.map((s) => s.pid)].sort((a, b) => a - b)
        return yield* new IdentityMismatch({
          query: key,
          pids,
          message: `${asked} resolves to pid ${session.pid}, but its identity (name ${JSON.stringify(session.name)}, session id ${
            JSON.stringify(session.sessionId)
          }) is also carried by live pid${rivals.length > 1 ? "s" : ""} ${rivals.map((s) => s.pid).join(", ")}: refusing to pick one`
        })
      }
      return session
    })

  return Registry.of({ inspect, list, resolve })
})

/** The registry over whatever `Files`, `ProcessProbe` and `ClaudeHome` the program provides. */
export const layer = Layer.effect(Registry, make)
