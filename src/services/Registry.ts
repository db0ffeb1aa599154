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
import { Files } from "./Files.js"
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

/** Enough reads in flight to keep the I/O thread pool busy on two cores, not so many that memory grows with the registry. */
const scanConcurrency = 16

type FileReading =
  | { readonly _tag: "Verdict"; readonly verdict: Verdict }
  | { readonly _tag: "Record"; readonly reading: RecordReading }

const describeFailure = (error: PlatformError): string =>
  error._tag === "SystemError" && error.reason === "NotFound" ? "it vanished during the scan" : error.message

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome

  const unreadable = (error: PlatformError): FileReading => ({
    _tag: "Verdict",
    verdict: { _tag: "unreadable", reason: describeFailure(error) }
  })

  /** One bounded read of a file that is (or was, a moment ago) regular, decoded as a record. */
  const readOnce = (file: string, filePid: number) =>
    files.readBounded(file, { maxBytes: maxRecordBytes, followLinks: true }).pipe(
      Effect.map((read): FileReading | { readonly _tag: "Unparsable"; readonly reason: string } => {
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
      }),
      Effect.catchAll((error) => Effect.succeed(unreadable(error)))
    )

  const readFile = (file: string, filePid: number): Effect.Effect<FileReading> =>
    readOnce(file, filePid).pipe(
      Effect.flatMap((first) =>
        first._tag !== "Unparsable"
          ? Effect.succeed(first)
          // A parse failure may be Claude Code's in-place rewrite caught half way: read once more.
          : Effect.sleep(tornReadRetryMillis).pipe(
            Effect.zipRight(readOnce(file, filePid)),
            Effect.map((second): FileReading =>
              second._tag !== "Unparsable" ? second : { _tag: "Verdict", verdict: { _tag: "malformed", reason: second.reason } }
            )
          )
      )
    )

  const readEntry = (name: string, type: EntryType): Effect.Effect<FileReading & { readonly pid: number | null }> => {
    const file = path.join(home.sessionsDirectory, name)
    const filePid = pidOfFileName(name)
    if (Option.isNone(filePid)) return Effect.succeed({ _tag: "Verdict", verdict: { _tag: "not_a_record" }, pid: null })
    const pid = filePid.value
    const withPid = (reading: FileReading) => ({ ...reading, pid })
    if (type === "File") return Effect.map(readFile(file, pid), withPid)
    // The directory already says what it is unless it is a link or the file system cannot tell:
    // only those are stat'ed, so that a FIFO or a device is never opened.
    if (type !== "SymbolicLink" && type !== "Unknown") {
      return Effect.succeed({ _tag: "Verdict", verdict: { _tag: "not_a_file", type }, pid })
    }
    return files.stat(file).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(withPid(unreadable(error))),
        onSuccess: (info) =>
          info.type === "File"
            ? Effect.map(readFile(file, pid), withPid)
            : Effect.succeed(withPid({ _tag: "Verdict", verdict: { _tag: "not_a_file", type: info.type } }))
      })
    )
  }

  const inspect: Registry["inspect"] = Effect.gen(function*() {
    const entries = yield* files.readDirectory(home.sessionsDirectory).pipe(
      // A missing registry directory is an empty registry: no session has started yet.
      Effect.catchIf(
        (error) => error._tag === "SystemError" && error.reason === "NotFound",
        () => Effect.succeed([])
      )
    )
    const candidates = entries.filter((entry) => entry.name.endsWith(".json"))
    const readings = yield* Effect.forEach(candidates, (entry) => readEntry(entry.name, entry.type), {
      concurrency: scanConcurrency
    })
    const here = yield* probe.pidDomain

    const results: Array<RegistryEntry> = []
    const pending: Array<{ readonly index: number; readonly session: Session; readonly procStart: string | null }> = []
    candidates.forEach((entry, i) => {
      const reading = readings[i]!
      const file = path.join(home.sessionsDirectory, entry.name)
      if (reading._tag === "Verdict") {
        results.push({ file, verdict: reading.verdict, pid: reading.pid, sessionId: null, name: null })
        return
      }
      const record = reading.reading
      if (record._tag === "Rejected") {
        results.push({ file, verdict: record.verdict, pid: reading.pid, sessionId: record.sessionId, name: record.name })
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
    const states = yield* probe.check(
      pending.map((p) => p.session.pid),
      new Set(pending.filter((p) => p.procStart !== null).map((p) => p.session.pid))
    )
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

  const liveSessions = (entries: ReadonlyArray<RegistryEntry>): Array<Session> =>
    entries.flatMap((entry) => (entry.verdict._tag === "live" ? [entry.verdict.session] : [])).sort((a, b) => a.pid - b.pid)

  const list: Registry["list"] = Effect.map(inspect, liveSessions)

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
