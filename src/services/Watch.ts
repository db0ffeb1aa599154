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
 *   back. The registry re-reads a torn file once after 25 ms when its name's pid has a process (a
 *   dead pid's file, which nobody rewrites, costs no wait); on top of that, a live session whose
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
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { SessionEvent } from "../domain/SessionEvent.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { Files } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"
import { Registry } from "./Registry.js"
import * as Timing from "./Timing.js"
import { diffRegistry, emptyTracking, type Tracking, unchangedSince } from "./WatchDiff.js"

export interface WatchOptions {
  /**
   * How often the live sessions' pids are probed (default: `Timing`'s `watchInterval`, 2 s): a
   * process that dies without touching its file is reported within this, plus the time to read the
   * registry.
   */
  readonly interval?: Duration.DurationInput | undefined
  /**
   * Called once when the system refuses change notifications for the registry directory (Linux's
   * inotify limits: `EMFILE`, `ENOSPC`). The watch goes on without them, reading the registry every
   * interval instead, so a change is then reported within the interval rather than within 500 ms;
   * nothing else tells the caller (the watch logs it at debug level only).
   */
  readonly onNotificationsRefused?: ((refusal: NotificationsRefused) => Effect.Effect<void>) | undefined
}

/** Why a watch reads the registry every interval rather than on change notifications. */
export interface NotificationsRefused {
  readonly directory: string
  /** The file port's refusal. */
  readonly error: PlatformError
  /** How often the registry is read from now on. */
  readonly interval: Duration.Duration
}

export interface Watch {
  /**
   * The live sessions as a stream of changes: first one `appeared` per live session, sorted by pid,
   * then an event for each change seen. The directory watch and the timers belong to the stream's
   * scope and are released when it closes. Fails only when the registry directory cannot be read
   * for another reason than being absent (an absent directory is waited for; one whose change
   * notifications the system refuses is read every interval, see `onNotificationsRefused`).
   */
  readonly sessions: (options?: WatchOptions) => Stream.Stream<SessionEvent, PlatformError>
}

export const Watch = Context.GenericTag<Watch>("claude-peers/Watch")

/**
 * Every this many intervals the registry is read even when nothing asked for it: a notification
 * can be lost (an overflowing inotify queue, a network file system that sends none), and a read
 * per minute costs next to nothing.
 */
export const rereadEveryIntervals = 30

/** Why the registry is looked at: a change in its directory (read it), or the interval (probe first). */
type Look = "read" | "probe"

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** One element after each wait, forever. */
const ticks = (every: Duration.Duration, waitsFor: string): Stream.Stream<void> => Stream.repeatEffect(Timing.sleep(every, waitsFor))

/**
 * An element at once for a notification that comes after a quiet `window`; the notifications that
 * come within `window` of the last element leave one more element when that window closes, however
 * many they are. A change is read as soon as it is seen, and a burst (fifty sessions writing in turn)
 * costs at most one read per window however long it lasts: unlike `Stream.debounce`, whose timer
 * restarts with every element, a steady trickle cannot hold a read back.
 */
const coalesceWithin = (window: Duration.Duration) => <A, E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<void, E, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const arrived = yield* Queue.sliding<void>(1)
    const upstream = yield* self.pipe(Stream.runForEach(() => Queue.offer(arrived, undefined)), Effect.forkScoped)
    /** When the last element left, on the Clock. */
    let last: number | undefined
    const next = Effect.gen(function*() {
      yield* Queue.take(arrived)
      const wait = last === undefined ? 0 : last + Duration.toMillis(window) - (yield* Clock.currentTimeMillis)
      if (wait > 0) {
        yield* Timing.sleep(Duration.millis(wait), "the window that gathers registry change notifications")
        yield* Queue.takeAll(arrived)
      }
      last = yield* Clock.currentTimeMillis
    })
    return Stream.repeatEffect(next).pipe(Stream.interruptWhen(Fiber.join(upstream)))
  }))

export const make = Effect.gen(function*() {
  const registry = yield* Registry
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const timings = yield* Timing.Timing
  const directory = home.sessionsDirectory

  /**
   * A notification for every change in the registry directory, across its absence, removal and
   * re-creation; it never ends, and fails only when the directory cannot be watched for another
   * reason than being absent. Also one when a watch begins (files may have been written before it
   * did), a window later, once the watch is in place, and one when it ends (the directory was
   * removed, and its sessions with it). While the directory is absent, or once its watch has ended,
   * it is looked for every `directoryPoll` (or every interval, when that is shorter): a file written
   * into a directory created late must be reported within 500 ms like any other, a stat costs next
   * to nothing, and the pause keeps a watch that keeps ending from spinning.
   *
   * A directory that exists but whose notifications the system refuses (inotify instances or
   * watches used up by other programs) is not a reason to stop watching: from then on it yields one
   * notification per interval, for good, and says so once through `onRefused`. A watch that failed
   * there would leave its caller blind, while reading costs only the time of a read.
   */
  const directoryChanges = (
    interval: Duration.Duration,
    onRefused: WatchOptions["onNotificationsRefused"]
  ): Stream.Stream<void, PlatformError> => {
    const refused = (error: PlatformError): Stream.Stream<void> =>
      Stream.execute(
        Effect.logDebug(`claude-peers: change notifications refused for ${directory}; reading it every interval`, error).pipe(
          Effect.zipRight(onRefused?.({ directory, error, interval }) ?? Effect.void)
        )
      ).pipe(Stream.concat(ticks(interval, `the next read of ${directory}, whose change notifications were refused`)))
    const notifications = files.watch(directory).pipe(
      Stream.catchAll((error) => (isNotFound(error) ? Stream.fail(error) : refused(error)))
    )
    // The notification for a watch that begins comes a window later: a change is read at once
    // (see `coalesceWithin`), and a read made before the system's watch is in place would miss a
    // file written between that read and it. The Node port sets its watch up synchronously when the
    // stream starts (never behind the thread pool), which this window leaves time for.
    const begun = Stream.fromEffect(Timing.sleep(timings.watchWindow, "the registry directory's watch to be in place"))
    const watchedOnce = Stream.unwrap(
      Effect.as(files.stat(directory), Stream.merge(begun, Stream.as(notifications, undefined)))
    ).pipe(Stream.concat(Stream.succeed(undefined)), Stream.catchAll((error) => (isNotFound(error) ? Stream.empty : Stream.fail(error))))
    const lookAgain = Timing.sleep(Duration.min(interval, timings.directoryPoll), `the registry directory ${directory} to appear again`)
    return Stream.forever(Stream.concat(watchedOnce, Stream.execute(lookAgain)))
  }

  const sessions = (options: WatchOptions = {}): Stream.Stream<SessionEvent, PlatformError> => {
    const interval = options.interval === undefined ? timings.watchInterval : Duration.decode(options.interval)
    if (!Duration.isFinite(interval) || Duration.toMillis(interval) <= 0) {
      return Stream.die(new RangeError(`Watch.sessions: the interval must be a positive, finite duration, not ${Duration.format(interval)}`))
    }
    const look = (tracking: Tracking, why: Look) =>
      Effect.gen(function*() {
        const pids = [...tracking.values()].map((tracked) => tracked.session.pid)
        const processes = yield* probe.check(pids, new Set(pids))
        if (why === "probe" && unchangedSince(tracking, processes)) return [tracking, []] as const
        return diffRegistry(tracking, yield* registry.inspect, processes)
      })
    const looks = Stream.mergeAll([
      directoryChanges(interval, options.onNotificationsRefused).pipe(coalesceWithin(timings.watchWindow), Stream.as<Look>("read")),
      ticks(interval, "the watch interval").pipe(Stream.as<Look>("probe")),
      ticks(Duration.times(interval, rereadEveryIntervals), "the watch's periodic full read").pipe(Stream.as<Look>("read"))
    ], { concurrency: "unbounded" })
    return Stream.succeed<Look>("read").pipe(
      Stream.concat(looks),
      Stream.mapAccumEffect(emptyTracking, look),
      Stream.flattenIterables,
      Stream.withSpan("Watch.sessions")
    )
  }

  return Watch.of({ sessions })
})

/** The watch over the registry and the ports it reads and watches. */
export const layer: Layer.Layer<Watch, never, Registry | Files | ProcessProbe | ClaudeHome> = Layer.effect(Watch, make)
