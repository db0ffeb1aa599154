/**
 * One pass over the registry directory: every `*.json` entry gets its verdict. The registry service
 * (`Registry.ts`) answers `inspect`, `list` and `resolve` from these passes.
 *
 * A bad file never fails the scan: whatever it holds, it gets its verdict and the scan goes on.
 * Nothing here writes: the files, their directory and the sessions' sockets are Claude Code's.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import { type AddressScope, withAddresses } from "../domain/Address.js"
import { describeValue, maxRecordBytes, parseRecordJson, pidOfFileName, readRecord, type RecordReading, sameStartTime } from "../domain/Record.js"
import type { Session } from "../domain/Session.js"
import type { EntryType, RegistryEntry, Verdict } from "../domain/Verdict.js"
import { type BoundedRead, byName, type Files } from "./Files.js"
import type { Liveness, ProcessProbe } from "./ProcessProbe.js"
import { inBatches, turnAfter } from "./ScanBatches.js"
import * as Timing from "./Timing.js"

type FileReading =
  | { readonly _tag: "Verdict"; readonly verdict: Verdict }
  /** `owner`: the uid owning the file read, where the file layer reports it. */
  | { readonly _tag: "Record"; readonly reading: RecordReading; readonly owner: number | null }

/** A read whose bytes did not parse: maybe Claude Code's in-place rewrite caught half way. */
type FirstReading = FileReading | { readonly _tag: "Unparsable"; readonly reason: string }

const verdict = (v: Verdict): FileReading => ({ _tag: "Verdict", verdict: v })

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

const unreadable = (error: PlatformError): FileReading =>
  verdict({ _tag: "unreadable", reason: isNotFound(error) ? "it vanished during the scan" : error.message })

/** What one bounded read's bytes say, before any process is consulted. */
const decodeRead = (read: BoundedRead, file: string, filePid: number): FirstReading => {
  switch (read._tag) {
    case "NotRegular":
      return verdict({ _tag: "not_a_file", type: read.type })
    case "TooLarge":
      return verdict({ _tag: "too_large", size: read.size })
    case "Read": {
      const json = parseRecordJson(read.bytes)
      return json._tag === "Left"
        ? { _tag: "Unparsable", reason: json.left }
        : { _tag: "Record", reading: readRecord(json.right, filePid, file), owner: read.owner?.uid ?? null }
    }
  }
}

interface Candidate {
  readonly file: string
  readonly type: EntryType
  /** The file name's pid; null for a name that is not a record's. */
  readonly pid: number | null
}

export { scanBatchSize } from "./ScanBatches.js"

/** Every live session's `address`, decided by the address rule (`Address.ts`) against the others. */
export { type AddressScope, withAddresses }

/**
 * Whose record files are the reader's sessions: those the reader's user owns, and those the Claude
 * home's owner owns (the home is theirs; root reading a user's home reads that user's sessions).
 */
interface Owners {
  readonly reader: number
  readonly homeOwner: number | null
}

/** A record that passed every check but its process's, and where its entry is. */
interface Pending {
  readonly index: number
  readonly session: Session
  readonly procStart: string | null
  readonly owner: number | null
}

/** The verdicts so far, and the records among them whose process is still to be asked. */
interface Judged {
  readonly entries: Array<RegistryEntry>
  readonly pending: Array<Pending>
}

/** `f` on each of `items`, one at a time (a fiber per file would cost more than its read), in batches. */
const eachInBatches = <A, B>(items: ReadonlyArray<A>, f: (item: A) => Effect.Effect<B>): Effect.Effect<Array<B>> =>
  Effect.map(inBatches(items, (batch) => Effect.forEach(batch, f)), (results) => results.flat())

/** The scan over one registry directory, through the file and process ports. */
export const makeScan = (files: Files, probe: ProcessProbe, directory: string, timings: Timing.Timings, scope: AddressScope = { names: true }) => {
  /**
   * What `path.join(directory, name)` puts before a name, worked out once: a listed `*.json` name is
   * one plain component (no separator, never `.` or `..`), so the join is this and the name. A join
   * per entry would normalize the directory again for every entry of a large registry.
   */
  const beforeName = path.join(directory, "_").slice(0, -1)

  /**
   * A failed read is `unreadable` only when the earlier checks still pass: an unreadable file of
   * more than 256 KiB is `too_large`, as the contract orders them (the stat needs no read permission).
   */
  const readFailure = (file: string, error: PlatformError): Effect.Effect<FirstReading> =>
    Effect.match(files.stat(file), {
      onFailure: () => unreadable(error),
      onSuccess: (info): FirstReading =>
        info.type !== "File"
          ? verdict({ _tag: "not_a_file", type: info.type })
          : info.size > maxRecordBytes
          ? verdict({ _tag: "too_large", size: info.size })
          : unreadable(error)
    })

  /** One bounded read of a file that is (or was, a moment ago) regular, decoded as a record. */
  const readOnce = (file: string, filePid: number): Effect.Effect<FirstReading> =>
    Effect.matchEffect(files.readBounded(file, { maxBytes: maxRecordBytes, followLinks: true }), {
      onFailure: (error) => readFailure(file, error),
      onSuccess: (read) => Effect.succeed(decodeRead(read, file, filePid))
    })

  const readEntry = ({ file, pid, type }: Candidate): Effect.Effect<FirstReading> => {
    if (pid === null) return Effect.succeed(verdict({ _tag: "not_a_record" }))
    if (type === "File") return readOnce(file, pid)
    // The directory already says what it is unless it is a link or the file system cannot tell:
    // only those are stat'ed, so that a FIFO or a device is never opened.
    if (type !== "SymbolicLink" && type !== "Unknown") return Effect.succeed(verdict({ _tag: "not_a_file", type }))
    return Effect.matchEffect(files.stat(file), {
      onFailure: (error) =>
        Effect.succeed(
          type === "SymbolicLink" && isNotFound(error)
            ? verdict({ _tag: "unreadable", reason: "the link points to nothing" })
            : unreadable(error)
        ),
      onSuccess: (info) => info.type === "File" ? readOnce(file, pid) : Effect.succeed(verdict({ _tag: "not_a_file", type: info.type }))
    })
  }

  /**
   * Reads that did not parse are read once more, after one pause for all of them: a record rewritten
   * in place is whole again within milliseconds, and n torn files must not cost n pauses. Only a
   * file whose name's pid has a process is read again: nobody rewrites a dead pid's file, and a stale
   * torn record must not make every scan wait.
   */
  const readAll = (candidates: ReadonlyArray<Candidate>, liveness: Liveness): Effect.Effect<Array<FileReading>> =>
    Effect.gen(function*() {
      const first = yield* eachInBatches(candidates, readEntry)
      const torn = first.flatMap((reading, i) => reading._tag === "Unparsable" && liveness.isAlive(candidates[i]!.pid!) ? [i] : [])
      if (torn.length > 0) {
        yield* Timing.sleep(timings.tornReadRetry, `the second read of ${torn.length} registry record(s) caught mid-rewrite`)
        const again = yield* eachInBatches(torn, (i) => readOnce(candidates[i]!.file, candidates[i]!.pid!))
        torn.forEach((index, i) => (first[index] = again[i]!))
      }
      return first.map((reading) => reading._tag === "Unparsable" ? verdict({ _tag: "malformed", reason: reading.reason }) : reading)
    })

  /**
   * Verdicts that need no process but the liveness pass's, and the records left to check: the ones
   * whose every other check passed and whose pid the pass found, each judged `dead` until its
   * process answers. Judges `candidates[start…]` into `entries` and `pending`, which hold the
   * verdicts of those before.
   */
  const judgeReadings = (
    judged: Judged,
    candidates: ReadonlyArray<Candidate>,
    start: number,
    readings: ReadonlyArray<FileReading>,
    liveness: Liveness,
    here: Option.Option<string>,
    owners: Owners | null
  ): void => {
    const { entries, pending } = judged
    candidates.forEach(({ file, pid }, i) => {
      const reading = readings[start + i]!
      if (reading._tag === "Verdict") return void entries.push({ file, verdict: reading.verdict, pid, sessionId: null, name: null })
      const record = reading.reading
      if (record._tag === "Rejected") {
        const v = record.verdict._tag === "parked" && pid !== null
          ? { ...record.verdict, windowRunning: liveness.isAlive(pid) }
          : record.verdict
        return void entries.push({ file, verdict: v, pid, sessionId: record.sessionId, name: record.name })
      }
      const { session } = record
      const identity = { file, pid: session.pid, sessionId: session.sessionId, name: session.name }
      const owner = reading.owner
      if (owners !== null && owner !== null && owner !== owners.reader && owner !== owners.homeOwner) {
        return void entries.push({ ...identity, verdict: { _tag: "foreign_owner", owner, reader: owners.reader, homeOwner: owners.homeOwner } })
      }
      // A pid of another machine or container cannot be checked here; where this machine's domain
      // is unknown (macOS writes the bare `linux`) the check is skipped.
      if (record.pidDomain !== null && Option.isSome(here) && record.pidDomain !== here.value) {
        return void entries.push({ ...identity, verdict: { _tag: "other_pid_domain", pidDomain: describeValue(record.pidDomain), here: here.value } })
      }
      // A pid the liveness pass found dead is dead whatever its process would say: nothing to ask.
      if (liveness.isAlive(session.pid)) pending.push({ index: entries.length, session, procStart: record.procStart, owner })
      entries.push({ ...identity, verdict: { _tag: "dead" } })
    })
  }

  /**
   * The verdicts of `pending`, whose processes are asked for now (a start time only where the record
   * names one): `dead` stays for a process gone, `pid_reused` for another process at the pid; the rest
   * are live, and are returned with where their entries are.
   */
  const judgeProcesses = (
    entries: Array<RegistryEntry>,
    pending: ReadonlyArray<Pending>,
    liveness: Liveness,
    owners: Owners | null,
    startTimeMatched: Set<number> | undefined
  ): Effect.Effect<Array<{ readonly index: number; readonly session: Session }>> => {
    const startTimeOf = new Set(pending.flatMap((p) => (p.procStart === null ? [] : [p.session.pid])))
    return Effect.map(liveness.states(pending.map((p) => p.session.pid), startTimeOf), (states) =>
      pending.flatMap(({ index, owner, procStart, session }) => {
        const state = states.get(session.pid)
        if (state === undefined || state._tag === "Dead") return []
        // The reader's own processes are always signalable by it (and visible under hidepid): a
        // record its user wrote whose pid answers EPERM names another user's process now.
        if (state.otherUser && owners !== null && owner === owners.reader) {
          const actual = state.hidden ? "another user's process, which /proc hides from this one" : "another user's process"
          entries[index] = { ...entries[index]!, verdict: { _tag: "pid_reused", recorded: `uid ${owner}`, actual, proof: "owner" } }
          return []
        }
        if (procStart !== null && Option.isSome(state.startTime) && !sameStartTime(procStart, state.startTime.value)) {
          // A start time that cannot be read proves nothing; one that differs proves the pid was reused.
          entries[index] = { ...entries[index]!, verdict: { _tag: "pid_reused", recorded: describeValue(procStart), actual: state.startTime.value } }
          return []
        }
        if (procStart !== null && Option.isSome(state.startTime)) startTimeMatched?.add(session.pid)
        return [{ index, session: { ...session, stopped: state.stopped, unaddressable: state.otherUser ? "other_user" : session.unaddressable } }]
      }))
  }

  /**
   * The reader and the home's owner, or null where owners mean nothing (no uid here). The home is
   * stat'ed only when a record is owned by someone other than the reader, which is rare.
   */
  const ownersFor = (readings: ReadonlyArray<FileReading>): Effect.Effect<Owners | null> =>
    Effect.flatMap(probe.user, (user): Effect.Effect<Owners | null> => {
      if (Option.isNone(user)) return Effect.succeed(null)
      const reader = user.value
      const someoneElse = readings.some((r) => r._tag === "Record" && r.owner !== null && r.owner !== reader)
      if (!someoneElse) return Effect.succeed({ reader, homeOwner: null })
      return Effect.match(files.stat(path.dirname(directory)), {
        // Without the home's owner, only the reader's records are the reader's: fail closed.
        onFailure: () => ({ reader, homeOwner: null }),
        onSuccess: (info) => ({ reader, homeOwner: info.uid })
      })
    })

  /**
   * Every `*.json` entry with its verdict, sorted by file; with `onlyLivePids`, only the entries
   * whose file name is the pid of a live process. That is all `list` and a successful `resolve` need
   * (a record whose pid is dead cannot be live, and one naming another pid than its file's is
   * `pid_mismatch`), and most records of a registry are stale: their files are then never opened.
   * Either way the file names' pids are checked first, in one pass with one liveness check per pid,
   * so that every answer decides liveness alike; a start time is read only for the records that
   * passed every other check. The pids of the live sessions whose start time matched their
   * record's are added to `startTimeMatched`: those processes are proven to be the ones that wrote them.
   */
  const scan = (onlyLivePids: boolean, startTimeMatched?: Set<number>): Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError> =>
    Effect.gen(function*() {
      // A missing registry directory is an empty registry: no session has started yet.
      const listing = Option.getOrElse(yield* files.readDirectoryIfExists(directory), () => [])
      // Sorted here, by the short names (every file of a scan is in one directory), so that the
      // entries come out in file order.
      const records = listing.filter((entry) => entry.name.endsWith(".json")).sort(byName)
      const filePids = records.map((entry) => Option.getOrNull(pidOfFileName(entry.name)))
      yield* turnAfter(records.length)
      // One pass, not one per batch: the Node probe lists /proc once for a large pass.
      const liveness = yield* probe.checkLiveness([...new Set(filePids.filter((pid): pid is number => pid !== null))])
      const candidates = records.flatMap((entry, i): Array<Candidate> => {
        const pid = filePids[i] ?? null
        if (onlyLivePids && (pid === null || !liveness.isAlive(pid))) return []
        return [{ file: beforeName + entry.name, type: entry.type, pid }]
      })
      yield* turnAfter(records.length)
      const readings = yield* readAll(candidates, liveness)
      // This machine's pid domain is asked for only when a record names one (most never do).
      const namesDomain = readings.some((r) => r._tag !== "Verdict" && r.reading._tag !== "Rejected" && r.reading.pidDomain !== null)
      const here = namesDomain ? yield* probe.pidDomain : Option.none()
      const owners = yield* ownersFor(readings)
      const judged: Judged = { entries: [], pending: [] }
      yield* inBatches(candidates, (batch, start) => Effect.sync(() => judgeReadings(judged, batch, start, readings, liveness, here, owners)))
      const { entries, pending } = judged

      // Processes are consulted only for records that passed every other check and whose pid the
      // liveness pass found, once per pid, in one call: a platform's probe may start a process per call.
      const live = yield* judgeProcesses(entries, pending, liveness, owners, startTimeMatched)
      withAddresses(live.map((l) => l.session), scope).forEach((session, i) => {
        const index = live[i]!.index
        entries[index] = { ...entries[index]!, verdict: { _tag: "live", session } }
      })
      return entries
    })

  return scan
}

/** The live sessions among scanned entries, sorted by pid. */
export const liveSessions = (entries: ReadonlyArray<RegistryEntry>): Array<Session> =>
  entries.flatMap((entry) => (entry.verdict._tag === "live" ? [entry.verdict.session] : [])).sort((a, b) => a.pid - b.pid)
