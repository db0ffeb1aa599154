/**
 * The registry as a stream of changes: `appeared`, `changed`, `gone`.
 *
 * Four rules earn their place here.
 * - A file notification is not enough: a process that dies (SIGKILL, a crash) does not touch its
 *   file, so the live sessions' pids are also probed every interval. Whenever the registry is
 *   read, it is a whole `Registry.inspect` diffed against the previous one, so that `watch` can
 *   never disagree with `list` or `inspect`.
 * - An idle watch must cost next to nothing, and reading every record is what costs. The interval's
 *   probe reads the registry again only when a live session's process is not what it was just
 *   before the last read found it live: dead, another start time, or not yet probed. A start time
 *   noted *before* that read is the session's own, or it differs from the current one and forces
 *   another read; noted after it, a pid reused in between would pass for the session forever.
 *   Every other change of verdict comes with a change of the file, which the directory watch
 *   reports; a read every `rereadEveryIntervals` intervals makes up for a lost notification.
 * - A record caught in the middle of Claude Code's in-place rewrite is never reported gone and
 *   back. The registry re-reads a torn file once after 25 ms; on top of that, a live session whose
 *   file now reads `malformed` or `unreadable` is held as it was for one more read, and only a file
 *   that reads so twice in a row ends its session. That next read comes with the next
 *   notification, or at the latest one interval later.
 * - Sessions are keyed by file. A record whose pid differs from its file name's is never live
 *   (`pid_mismatch`), so for live sessions file and pid are one key; the file is what `removed`
 *   speaks of. A pid is the process, though, not the session: when the session in a file has
 *   another `startedAtMs` than before, another process took the pid between two reads and wrote
 *   its own record over the dead one's. That is the old session `gone` with `pid_reused` and the new
 *   one `appeared`, never `changed`, or a caller holding the old session would take the new process
 *   for it. A new `sessionId` with the same start is the same process in another conversation:
 *   `changed`. A missing start time proves nothing, as an unreadable one does for the registry.
 */
import type { PlatformError } from "@effect/platform/Error"
import { Duration, Effect, Equal, Fiber, Queue, Schedule, Schema, Stream } from "effect"
import { appeared, changed, gone, type SessionEvent } from "../domain/SessionEvent.js"
import { Session } from "../domain/Session.js"
import type { RegistryEntry, VerdictName } from "../domain/Verdict.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { Files } from "./Files.js"
import { ProcessProbe, type ProcessState } from "./ProcessProbe.js"
import { Registry } from "./Registry.js"

export interface WatchOptions {
  /**
   * How often the live sessions' pids are probed, in ms (default 2000): a process that dies
   * without touching its file is reported within this, plus the time to read the registry.
   */
  readonly intervalMillis?: number | undefined
  /**
   * How long a burst of notifications is gathered before the registry is read, in ms (default 75):
   * a file rewritten many times within it is read once, in its last state.
   */
  readonly debounceMillis?: number | undefined
}

export const defaultIntervalMillis = 2000
export const defaultDebounceMillis = 75

/**
 * Every this many intervals the registry is read even when nothing asked for it: a notification
 * can be lost (an overflowing inotify queue, a network file system that sends none), and a read
 * per minute costs next to nothing.
 */
export const rereadEveryIntervals = 30

/** How often an absent registry directory is looked for (at most; never less often than the interval). */
export const directoryPollMillis = 200

/** Verdicts that a write in progress or a removal in progress can produce: worth one more look. */
const inconclusive: ReadonlySet<VerdictName> = new Set(["malformed", "unreadable"])

interface Tracked {
  readonly session: Session
  /** The last read found the file inconclusive; one more such reading ends the session. */
  readonly doubted: boolean
  /** What the probe said of the pid just before the read that found the session live; undefined when it was not probed. */
  readonly process: ProcessState | undefined
}

/** The live sessions of the last read, by file. */
export type Tracking = ReadonlyMap<string, Tracked>

export const emptyTracking: Tracking = new Map()

const sameSession = Schema.equivalence(Session)

const sameProcess = (a: Session, b: Session): boolean =>
  a.startedAtMs === null || b.startedAtMs === null || a.startedAtMs === b.startedAtMs

const sameState = (a: ProcessState, b: ProcessState): boolean =>
  a._tag === "Dead" ? b._tag === "Dead" : b._tag === "Alive" && Equal.equals(a.startTime, b.startTime)

/**
 * One read: the events that lead from the sessions tracked so far to what `entries` say, sorted
 * by pid (a `gone` before the `appeared` of the same pid), and what to track from now on.
 * `processes` is what the probe said of the tracked pids just before the read.
 */
export const diffRegistry = (
  before: Tracking,
  entries: ReadonlyArray<RegistryEntry>,
  processes: ReadonlyMap<number, ProcessState> = new Map()
): readonly [Tracking, ReadonlyArray<SessionEvent>] => {
  const after = new Map<string, Tracked>()
  const events: Array<SessionEvent> = []
  const now = new Map(entries.map((entry) => [entry.file, entry]))
  for (const [file, tracked] of before) {
    const verdict = now.get(file)?.verdict
    if (verdict === undefined) events.push(gone(tracked.session, "removed"))
    else if (verdict._tag === "live") continue
    else if (inconclusive.has(verdict._tag) && !tracked.doubted) after.set(file, { ...tracked, doubted: true })
    else events.push(gone(tracked.session, verdict._tag))
  }
  for (const entry of entries) {
    if (entry.verdict._tag !== "live") continue
    const session = entry.verdict.session
    const previous = before.get(entry.file)?.session
    after.set(entry.file, { session, doubted: false, process: processes.get(session.pid) })
    if (previous === undefined) events.push(appeared(session))
    else if (!sameProcess(session, previous)) events.push(gone(previous, "pid_reused"), appeared(session))
    else if (!sameSession(session, previous)) events.push(changed(session, previous))
  }
  // Array.prototype.sort is stable: a pid's `gone` stays before its `appeared`.
  events.sort((a, b) => a.session.pid - b.session.pid)
  return [after, events]
}

/** Whether the probe's answers leave every tracked session as the last read found it. */
const unchangedSince = (tracking: Tracking, processes: ReadonlyMap<number, ProcessState>): boolean =>
  [...tracking.values()].every(({ doubted, process, session }) => {
    const current = processes.get(session.pid)
    return !doubted && process !== undefined && current !== undefined && sameState(process, current)
  })

/** Why the registry is looked at: a change in its directory (read it), or the interval (probe first). */
type Look = "read" | "probe"

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/**
 * One element per burst: the first element opens a window of `window`, every element that arrives
 * in it joins, and one element leaves when it closes. Unlike `Stream.debounce`, whose timer
 * restarts with every element, a steady trickle (fifty sessions writing in turn) cannot hold the
 * read back past the window.
 */
const coalesceWithin = (window: Duration.Duration) => <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<void, E, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const arrived = yield* Queue.sliding<void>(1)
    const upstream = yield* self.pipe(Stream.runForEach(() => Queue.offer(arrived, undefined)), Effect.forkScoped)
    const burst = Queue.take(arrived).pipe(
      Effect.zipRight(Effect.sleep(window)),
      Effect.zipRight(Queue.takeAll(arrived))
    )
    return Stream.repeatEffect(Effect.asVoid(burst)).pipe(Stream.interruptWhen(Fiber.join(upstream)))
  }))

/**
 * A notification for every change in the registry directory, across its absence, removal and
 * re-creation; it never ends, and fails only when the directory cannot be watched for another
 * reason than being absent. Also one when a watch begins (files may have been written before it
 * did) and one when it ends (the directory was removed, and its sessions with it). While the
 * directory is absent, or once its watch has ended, it is looked for every `directoryPollMillis`
 * (or every interval, when that is shorter): a file written into a directory created late must be
 * reported within 500 ms like any other, a stat costs next to nothing, and the pause keeps a watch
 * that keeps ending from spinning.
 */
const directoryChanges = (files: Files, directory: string, interval: Duration.Duration): Stream.Stream<void, PlatformError> => {
  const lookAgain = Schedule.spaced(Duration.min(interval, Duration.millis(directoryPollMillis)))
  return Stream.unwrap(
    Effect.as(files.stat(directory), Stream.merge(Stream.succeed(undefined), Stream.as(files.watch(directory), undefined)))
  ).pipe(
    Stream.concat(Stream.succeed(undefined)),
    Stream.repeat(lookAgain),
    Stream.retry(lookAgain.pipe(Schedule.whileInput(isNotFound)))
  )
}

/**
 * The live sessions as a stream of changes: first one `appeared` per live session, sorted by pid,
 * then an event for each change seen. The registry is read one debounce window after a burst of
 * change notifications in its directory; every interval the live sessions' pids are probed, and
 * the registry read again when one of them changed; and every `rereadEveryIntervals` intervals it
 * is read regardless. The directory watch and the timers belong to the stream's scope and are
 * released when it closes.
 */
export const watchSessions = (
  options: WatchOptions = {}
): Stream.Stream<SessionEvent, PlatformError, Registry | Files | ProcessProbe | ClaudeHome> => {
  const intervalMillis = options.intervalMillis ?? defaultIntervalMillis
  const debounceMillis = options.debounceMillis ?? defaultDebounceMillis
  if (!(intervalMillis > 0) || !(debounceMillis >= 0)) {
    return Stream.die(new RangeError(`watchSessions: bad interval ${intervalMillis} ms or debounce ${debounceMillis} ms`))
  }
  const interval = Duration.millis(intervalMillis)
  return Stream.unwrap(Effect.gen(function*() {
    const registry = yield* Registry
    const files = yield* Files
    const probe = yield* ProcessProbe
    const home = yield* ClaudeHome

    const look = (tracking: Tracking, why: Look) =>
      Effect.gen(function*() {
        const pids = [...tracking.values()].map((tracked) => tracked.session.pid)
        const processes = yield* probe.check(pids, new Set(pids))
        if (why === "probe" && unchangedSince(tracking, processes)) return [tracking, []] as const
        return diffRegistry(tracking, yield* registry.inspect, processes)
      })

    const looks = Stream.mergeAll([
      directoryChanges(files, home.sessionsDirectory, interval).pipe(
        coalesceWithin(Duration.millis(debounceMillis)),
        Stream.as<Look>("read")
      ),
      Stream.fromSchedule(Schedule.spaced(interval)).pipe(Stream.as<Look>("probe")),
      Stream.fromSchedule(Schedule.spaced(Duration.times(interval, rereadEveryIntervals))).pipe(Stream.as<Look>("read"))
    ], { concurrency: "unbounded" })
    return Stream.succeed<Look>("read").pipe(
      Stream.concat(looks),
      Stream.mapAccumEffect(emptyTracking, look),
      Stream.flattenIterables
    )
  }))
}
