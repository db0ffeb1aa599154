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
import { type BoundedRead, byName, type DirectoryEntry, type Files } from "./Files.js"
import type { Liveness, ProcessProbe, ProcessState } from "./ProcessProbe.js"
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

/**
 * What one bounded read's bytes say, before any process is consulted but the liveness pass. A
 * session is described only for a candidate whose pid `alive` found: most records of a large
 * registry are stale, and their entry needs only the record's identity.
 */
const decodeRead = (read: BoundedRead, file: string, filePid: number, alive: boolean): FirstReading => {
  switch (read._tag) {
    case "NotRegular":
      return verdict({ _tag: "not_a_file", type: read.type })
    case "TooLarge":
      return verdict({ _tag: "too_large", size: read.size })
    case "Read": {
      const json = parseRecordJson(read.bytes)
      return json._tag === "Left"
        ? { _tag: "Unparsable", reason: json.left }
        : { _tag: "Record", reading: readRecord(json.right, filePid, alive ? file : null), owner: read.owner?.uid ?? null }
    }
  }
}

/**
 * A record's entry: one object literal, its keys in one order, not a spread of the record's identity
 * (a spread's object is several times larger, and a large registry holds one per file).
 */
const entryOf = (file: string, record: Extract<RecordReading, { readonly _tag: "Candidate" }>, verdict: Verdict): RegistryEntry => ({
  file,
  verdict,
  pid: record.pid,
  sessionId: record.sessionId,
  name: record.name
})

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

/** What a verdict needs of this machine: its pid domain, and whose record files are the reader's (null: no uids here). */
interface Context {
  readonly here: Option.Option<string>
  readonly owners: Owners | null
}

/** What a scan has asked of this machine so far; undefined where not yet asked. */
interface Known {
  here?: Option.Option<string>
  reader?: Option.Option<number>
  homeOwner?: number | null
}

/** The reader and the home's owner as asked so far; null where owners mean nothing (no uid here). */
const ownersOf = (known: Known): Owners | null => {
  const reader = known.reader === undefined ? undefined : Option.getOrUndefined(known.reader)
  return reader === undefined ? null : { reader, homeOwner: known.homeOwner ?? null }
}

/** A parked record whose pid the liveness pass found: whether its window still runs is asked with the pending ones. */
interface ParkedWindow {
  readonly index: number
  readonly pid: number
  readonly procStart: string | null
  readonly owner: number | null
}

/** The verdicts so far, and the records among them whose process is still to be asked. */
interface Judged {
  readonly entries: Array<RegistryEntry>
  readonly pending: Array<Pending>
  readonly parked: Array<ParkedWindow>
}

/** `f` on each of `items`, one at a time (a fiber per file would cost more than its read), in batches. */
const eachInBatches = <A, B>(items: ReadonlyArray<A>, f: (item: A) => Effect.Effect<B>): Effect.Effect<Array<B>> =>
  Effect.map(inBatches(items, (batch) => Effect.forEach(batch, f)), (results) => results.flat())

/**
 * What proved a live session: its process's start time, which matched its record's `procStart`,
 * and whether the process was another user's. A caller compares a later reading of the process
 * with it.
 */
export interface Proof {
  readonly startTime: string
  readonly otherUser: boolean
}

/** The proof of each live session a scan found; a session whose record names no start time, or whose process's could not be read, has none. */
export type ProvenStarts = WeakMap<Session, Proof>

/**
 * The start time that proved a live session, whichever scan found it: how a watch or a wait that
 * holds a session tells its process from another that took the pid since, when the records cannot
 * (the same `startedAt`, or none). A session copied from one so proven (its transcript added, its
 * home) is given it with `keepProvenStart`.
 */
const provenStarts = new WeakMap<Session, string>()

export const provenStartOf = (session: Session): string | undefined => provenStarts.get(session)

/**
 * The same pid and session id, and nothing that proves another process: the start times that proved
 * the two agree when both are known. A process that took the pid may write the old one's session
 * id (a resumed conversation).
 */
export const sameProvenSession = (a: Session, b: Session): boolean => {
  if (a.pid !== b.pid || a.sessionId !== b.sessionId) return false
  const started = provenStarts.get(a)
  const startedToo = provenStarts.get(b)
  return started === undefined || startedToo === undefined || started === startedToo
}

export const keepProvenStart = (from: Session, to: Session): Session => {
  const start = provenStarts.get(from)
  if (start !== undefined) provenStarts.set(to, start)
  return to
}

/** The scan over one registry directory, through the file and process ports. */
export const makeScan = (
  files: Files,
  probe: ProcessProbe,
  directory: string,
  timings: Timing.Timings,
  scope: AddressScope = { names: true },
  proven: ProvenStarts = new WeakMap()
) => {
  /**
   * What `path.join(directory, name)` puts before a name, worked out once: a listed `*.json` name is
   * one plain component (no separator, never `.` or `..`), so the join is this and the name. A join
   * per entry would normalize the directory again for every entry of a large registry.
   */
  const beforeName = path.join(directory, "_").slice(0, -1)
  /** The directory as its files' paths name it (`path.dirname` of `beforeName` and a name). */
  const ownDirectory = path.dirname(`${beforeName}_`)

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
  const readOnce = (file: string, filePid: number, liveness: Liveness): Effect.Effect<FirstReading> =>
    Effect.matchEffect(files.readBounded(file, { maxBytes: maxRecordBytes, followLinks: true }), {
      onFailure: (error) => readFailure(file, error),
      onSuccess: (read) => Effect.succeed(decodeRead(read, file, filePid, liveness.isAlive(filePid)))
    })

  const readEntry = ({ file, pid, type }: Candidate, liveness: Liveness): Effect.Effect<FirstReading> => {
    if (pid === null) return Effect.succeed(verdict({ _tag: "not_a_record" }))
    if (type === "File") return readOnce(file, pid, liveness)
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
      onSuccess: (info) => info.type === "File" ? readOnce(file, pid, liveness) : Effect.succeed(verdict({ _tag: "not_a_file", type: info.type }))
    })
  }

  /**
   * A read that did not parse, of a file whose name's pid has a process: maybe Claude Code's in-place
   * rewrite caught half way, so the scan reads it once more. Nobody rewrites a dead pid's file: that
   * one is malformed at once, and a stale torn record never makes a scan wait.
   */
  const mayBeTorn = (reading: FirstReading, candidate: Candidate, liveness: Liveness): boolean =>
    reading._tag === "Unparsable" && liveness.isAlive(candidate.pid!)

  /** A reading as final: one that did not parse is `malformed`. */
  const settled = (reading: FirstReading): FileReading => reading._tag === "Unparsable" ? verdict({ _tag: "malformed", reason: reading.reason }) : reading

  /**
   * The verdict of one reading that needs no process but the liveness pass's, at `index`: a record
   * whose every other check passed and whose pid the pass found is `dead` until its process answers,
   * and joins `pending`.
   */
  const judgeReading = (
    judged: Judged,
    index: number,
    { file, pid }: Candidate,
    reading: FileReading,
    liveness: Liveness,
    context: Context
  ): void => {
    const { entries, parked, pending } = judged
    if (reading._tag === "Verdict") return void (entries[index] = { file, verdict: reading.verdict, pid, sessionId: null, name: null })
    const record = reading.reading
    if (record._tag === "Rejected") {
      // A parked window reads as running only once its process proves to be the record's (below):
      // a zombie or a reused pid passes the liveness pass too.
      if (record.verdict._tag === "parked" && pid !== null && liveness.isAlive(pid)) {
        parked.push({ index, pid, procStart: record.procStart, owner: reading.owner })
      }
      return void (entries[index] = { file, verdict: record.verdict, pid, sessionId: record.sessionId, name: record.name })
    }
    const entry = (v: Verdict) => entryOf(file, record, v)
    const owner = reading.owner
    const { here, owners } = context
    if (owners !== null && owner !== null && owner !== owners.reader && owner !== owners.homeOwner) {
      return void (entries[index] = entry({ _tag: "foreign_owner", owner, reader: owners.reader, homeOwner: owners.homeOwner }))
    }
    // A pid of another machine or container cannot be checked here; where this machine's domain
    // is unknown (macOS writes the bare `linux`) the check is skipped.
    if (record.pidDomain !== null && Option.isSome(here) && record.pidDomain !== here.value) {
      return void (entries[index] = entry({ _tag: "other_pid_domain", pidDomain: describeValue(record.pidDomain), here: here.value }))
    }
    // A pid the liveness pass found dead is dead whatever its process would say: nothing to ask. Only
    // a record whose pid it found was described as a session (`decodeRead`), so that is the test.
    if (record.session !== null) pending.push({ index, session: record.session, procStart: record.procStart, owner })
    entries[index] = entry({ _tag: "dead" })
  }

  /**
   * Why the live process `state` at a record's pid is not the one that wrote it (a record of
   * `owner` naming `procStart`): a `pid_reused` verdict; null when it may be the record's.
   */
  const reusedBy = (
    state: Extract<ProcessState, { readonly _tag: "Alive" }>,
    procStart: string | null,
    owner: number | null,
    owners: Owners | null
  ): Extract<Verdict, { readonly _tag: "pid_reused" }> | null => {
    // The reader's own processes are always signalable by it (and visible under hidepid): a
    // record its user wrote whose pid answers EPERM names another user's process now.
    if (state.otherUser && owners !== null && owner === owners.reader) {
      const actual = state.hidden ? "another user's process, which /proc hides from this one" : "another user's process"
      return { _tag: "pid_reused", recorded: `uid ${owner}`, actual, proof: "owner" }
    }
    // A start time that cannot be read proves nothing; one that differs proves the pid was reused.
    if (procStart !== null && Option.isSome(state.startTime) && !sameStartTime(procStart, state.startTime.value)) {
      return { _tag: "pid_reused", recorded: describeValue(procStart), actual: state.startTime.value }
    }
    return null
  }

  /**
   * The verdicts of `pending` and `parked`, whose processes are asked for now, in one call (a start
   * time only where the record names one): `dead` stays for a process gone, `pid_reused` for
   * another process at the pid; the rest are live, and are returned with where their entries are.
   * A parked window runs only where its pid's process is alive and may still be the record's.
   */
  const judgeProcesses = (
    { entries, parked, pending }: Judged,
    liveness: Liveness,
    owners: Owners | null
  ): Effect.Effect<Array<{ readonly index: number; readonly session: Session; readonly proof: Proof | null }>> => {
    const asked = [...pending.map((p) => ({ pid: p.session.pid, procStart: p.procStart })), ...parked]
    const startTimeOf = new Set(asked.flatMap((p) => (p.procStart === null ? [] : [p.pid])))
    return Effect.map(liveness.states(asked.map((p) => p.pid), startTimeOf), (states) => {
      for (const { index, owner, pid, procStart } of parked) {
        const state = states.get(pid)
        const entry = entries[index]!
        if (state?._tag === "Alive" && entry.verdict._tag === "parked" && reusedBy(state, procStart, owner, owners) === null) {
          entries[index] = { ...entry, verdict: { ...entry.verdict, windowRunning: true } }
        }
      }
      return pending.flatMap(({ index, owner, procStart, session }) => {
        const state = states.get(session.pid)
        if (state === undefined || state._tag === "Dead") return []
        const reused = reusedBy(state, procStart, owner, owners)
        if (reused !== null) {
          entries[index] = { ...entries[index]!, verdict: reused }
          return []
        }
        // Here a start time on both sides is one that matched: the process proven to be the record's.
        const proof = procStart !== null && Option.isSome(state.startTime) ? { startTime: state.startTime.value, otherUser: state.otherUser } : null
        const live = { ...session, stopped: state.stopped, unaddressable: state.otherUser ? "other_user" as const : session.unaddressable }
        return [{ index, session: live, proof }]
      })
    })
  }

  /**
   * What the verdicts of `readings` need to know of this machine, asked only when one of them needs
   * it, once per scan: this machine's pid domain when a record names one (most never do), and the
   * home's owner when a record is owned by someone other than the reader (rare). `known` holds
   * what earlier batches asked.
   */
  const contextFor = (readings: ReadonlyArray<FileReading>, known: Known): Effect.Effect<Context> =>
    Effect.gen(function*() {
      if (known.here === undefined && readings.some((r) => r._tag !== "Verdict" && r.reading._tag !== "Rejected" && r.reading.pidDomain !== null)) {
        known.here = yield* probe.pidDomain
      }
      if (known.reader === undefined) known.reader = yield* probe.user
      const reader = Option.getOrUndefined(known.reader)
      if (reader !== undefined && known.homeOwner === undefined && readings.some((r) => r._tag === "Record" && r.owner !== null && r.owner !== reader)) {
        // Without the home's owner, only the reader's records are the reader's: fail closed.
        known.homeOwner = yield* Effect.match(files.stat(path.dirname(directory)), { onFailure: () => null, onSuccess: (info) => info.uid })
      }
      return { here: known.here ?? Option.none(), owners: ownersOf(known) }
    })

  /**
   * Every `*.json` entry with its verdict, sorted by file; with `onlyLivePids`, only the entries
   * whose file name is the pid of a live process. That is all `list` and a successful `resolve` need
   * (a record whose pid is dead cannot be live, and one naming another pid than its file's is
   * `pid_mismatch`), and most records of a registry are stale: their files are then never opened.
   * Either way the file names' pids are checked first, in one pass with one liveness check per pid,
   * so that every answer decides liveness alike; a start time is read only for the records that
   * passed every other check. Each live session whose start time matched its record's gets its
   * proof in `proven`: that process is proven to be the one that wrote it. With `only` (paths of
   * files), the directory is not listed: those of them that are in it stand for its listing, once
   * each (a file gone since is `unreadable`), each as one whose type the directory does not say, so
   * stat'ed before it is read.
   */
  const scan = (
    onlyLivePids: boolean,
    only?: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError> =>
    Effect.gen(function*() {
      // A missing registry directory is an empty registry: no session has started yet.
      const listing: ReadonlyArray<DirectoryEntry> = only !== undefined
        ? [...new Set(only.filter((file) => path.dirname(file) === ownDirectory))].map((file) => ({ name: path.basename(file), type: "Unknown" }))
        : Option.getOrElse(yield* files.readDirectoryIfExists(directory), () => [])
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
      // Each batch is read and judged before the next is read, so that a scan holds the verdicts
      // of a large registry, not every record it read.
      // Every index is set once: by its batch, or after the second read for a record caught mid-rewrite.
      const judged: Judged = { entries: new Array(candidates.length), pending: [], parked: [] }
      const known: Known = {}
      const torn: Array<number> = []
      yield* inBatches(candidates, (batch, start) =>
        Effect.gen(function*() {
          const first = yield* Effect.forEach(batch, (candidate) => readEntry(candidate, liveness))
          const readings = first.map((reading, i) => {
            if (!mayBeTorn(reading, batch[i]!, liveness)) return settled(reading)
            torn.push(start + i)
            return null
          })
          const context = yield* contextFor(readings.filter((r): r is FileReading => r !== null), known)
          readings.forEach((reading, i) => reading !== null && judgeReading(judged, start + i, batch[i]!, reading, liveness, context))
        }))
      if (torn.length > 0) {
        // One pause for all of them: a record rewritten in place is whole again within
        // milliseconds, and n torn files must not cost n pauses.
        yield* Timing.sleep(timings.tornReadRetry, `the second read of ${torn.length} registry record(s) caught mid-rewrite`)
        const again = yield* eachInBatches(torn, (i) => Effect.map(readOnce(candidates[i]!.file, candidates[i]!.pid!, liveness), settled))
        const context = yield* contextFor(again, known)
        torn.forEach((index, i) => judgeReading(judged, index, candidates[index]!, again[i]!, liveness, context))
      }
      const { entries, parked } = judged
      const owners = ownersOf(known)
      // Only a caller that shows stale entries (inspect, a refusal's reasons) tells a parked window's state.
      if (onlyLivePids) parked.length = 0

      // Processes are consulted only for records that passed every other check (and parked windows)
      // whose pid the liveness pass found, once per pid, in one call: a platform's probe may start a
      // process per call.
      const live = yield* judgeProcesses(judged, liveness, owners)
      withAddresses(live.map((l) => l.session), scope).forEach((session, i) => {
        const { index, proof } = live[i]!
        if (proof !== null) {
          proven.set(session, proof)
          provenStarts.set(session, proof.startTime)
        }
        entries[index] = { ...entries[index]!, verdict: { _tag: "live", session } }
      })
      return entries
    })

  return scan
}

/** The live sessions among scanned entries, sorted by pid. */
export const liveSessions = (entries: ReadonlyArray<RegistryEntry>): Array<Session> =>
  entries.flatMap((entry) => (entry.verdict._tag === "live" ? [entry.verdict.session] : [])).sort((a, b) => a.pid - b.pid)
