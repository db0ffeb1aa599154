/**
 * The registry as a stream of changes: `appeared`, `changed`, `gone`.
 *
 * Four rules earn their place here.
 * - A file notification is not enough: a process that dies (SIGKILL, a crash) does not touch its
 *   file, so the live sessions' pids are also probed every interval. Whenever the registry is
 *   read, it is a whole `Registry.inspect` diffed against the previous one, so that `watch` can
 *   never disagree with `list` or `inspect`.
 * - A change notification names the file that changed: only that file is read (with a stat of it,
 *   as the directory listing would have given its type), and the addresses of the sessions kept are
 *   worked out again over every live session, the one thing a single file can change in others. A
 *   notification that names no file, a watch that begins or ends, and the periodic read read the
 *   whole registry, so a watch costs per event what the event touched, not what the registry holds.
 * - The path is followed, not the directory it named when the watch began: a Claude home or a
 *   `sessions` that is a link re-pointed elsewhere ends the directory's watch within the interval
 *   (the file port looks at what the path names), and the whole registry is read again there.
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
 *   `changed`. The start time of the pid tells processes apart too, whatever the records say (a
 *   resumed conversation keeps its id and may keep its `startedAt`): the one that proved each record,
 *   else the probe's before each read. Another start time is another process; a start time missing
 *   from either proves nothing, as an unreadable one does for the registry.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import type { SessionEvent } from "../domain/SessionEvent.js"
import type { RegistryEntry } from "../domain/Verdict.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { type DirectoryEntry, Files } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"
import { Registry } from "./Registry.js"
import { makeScan } from "./RegistryScan.js"
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
  /**
   * Called once with every entry of the watch's first read of the registry, before the first
   * event: what a caller that asked about one session before the watch began needs to tell what
   * became of it meanwhile (the watch reports nothing of a session that was never live in it).
   * Over several homes, the first reads of every home the watch starts with, together, once the
   * last is read (a home read earlier may have given events by then).
   */
  readonly onFirstRead?: ((entries: ReadonlyArray<RegistryEntry>) => Effect.Effect<void>) | undefined
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

/**
 * What a change notification asks to read: the files it names (their names in the registry
 * directory), or everything (a notification that names no file, a watch that begins or ends).
 */
type Change = ReadonlySet<string> | "all"

const merge = (a: Change | undefined, b: Change): Change => a === undefined ? b : a === "all" || b === "all" ? "all" : new Set([...a, ...b])

/** Why the registry is looked at: a change in its directory (read what it names), or the interval (probe first). */
type Look = { readonly _tag: "read"; readonly names: Change } | { readonly _tag: "probe" }

const readAll: Look = { _tag: "read", names: "all" }
const probeLook: Look = { _tag: "probe" }

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** One element after each wait, forever. */
const ticks = (every: Duration.Duration, waitsFor: string): Stream.Stream<void> => Stream.repeatEffect(Timing.sleep(every, waitsFor))

/**
 * An element at once for a notification that comes after a quiet `window`; the notifications that
 * come within `window` of the last element leave one more element when that window closes, however
 * many they are, naming every file they named. A change is read as soon as it is seen, and a burst
 * (fifty sessions writing in turn) costs at most one read per window however long it lasts: unlike
 * `Stream.debounce`, whose timer restarts with every element, a steady trickle cannot hold a read back.
 */
const coalesceWithin = (window: Duration.Duration) => <E, R>(self: Stream.Stream<Change, E, R>): Stream.Stream<Change, E, R> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const arrived = yield* Queue.sliding<void>(1)
    /** What the notifications since the last element named. */
    let pending: Change | undefined
    const upstream = yield* self.pipe(
      Stream.runForEach((change) => Effect.suspend(() => ((pending = merge(pending, change)), Queue.offer(arrived, undefined)))),
      Effect.forkScoped
    )
    /** When the last element left, on the Clock. */
    let last: number | undefined
    const next = Effect.gen(function*() {
      yield* Queue.take(arrived)
      const wait = last === undefined ? 0 : last + Duration.toMillis(window) - (yield* Clock.currentTimeMillis)
      if (wait > 0) {
        yield* Timing.sleep(Duration.millis(wait), "the window that gathers registry change notifications")
        yield* Queue.takeAll(arrived)
      }
      const names = pending
      pending = undefined
      // A signal left over from notifications an earlier element already took names nothing.
      if (names === undefined) return Option.none<Change>()
      last = yield* Clock.currentTimeMillis
      return Option.some(names)
    })
    return Stream.repeatEffect(next).pipe(
      Stream.filterMap((names) => names),
      Stream.interruptWhen(Fiber.join(upstream))
    )
  }))

export const make = Effect.gen(function*() {
  const registry = yield* Registry
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const timings = yield* Timing.Timing
  const directory = home.sessionsDirectory

  /**
   * The scan of the named files alone, as if the directory listed nothing else: each name's entry
   * type is what a listing gives (an `lstat`), and a name with nothing behind it is not listed, so
   * its session is `removed`, as a whole read would say.
   */
  const scanNamed = (names: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError> => {
    const listed = Effect.map(
      Effect.forEach(names, (name) =>
        Effect.match(files.lstat(Path.join(directory, name)), {
          onFailure: (error): ReadonlyArray<DirectoryEntry> => (isNotFound(error) ? [] : [{ name, type: "Unknown" }]),
          onSuccess: (info): ReadonlyArray<DirectoryEntry> => [{ name, type: info.type }]
        })),
      (entries) => Option.some(entries.flat())
    )
    return makeScan({ ...files, readDirectoryIfExists: () => listed }, probe, directory, timings)(false)
  }

  /**
   * A notification for every change in the registry directory, across its absence, removal and
   * re-creation; it never ends, and fails only when the directory cannot be watched for another
   * reason than being absent. Each names the files the system named, or everything. Also one for
   * everything when a watch begins (files may have been written before it did), a window later,
   * once the watch is in place, and one when it ends (the directory was removed, and its sessions
   * with it, or the path now names another directory). While the directory is absent, or once its
   * watch has ended, it is looked for every `directoryPoll` (or every interval, when that is
   * shorter): a file written into a directory created late must be reported within 500 ms like any
   * other, a stat costs next to nothing, and the pause keeps a watch that keeps ending from spinning.
   *
   * A directory that exists but whose notifications the system refuses (inotify instances or
   * watches used up by other programs) is not a reason to stop watching: from then on it yields one
   * notification per interval, for good, and says so once through `onRefused`. A watch that failed
   * there would leave its caller blind, while reading costs only the time of a read.
   */
  const directoryChanges = (
    interval: Duration.Duration,
    onRefused: WatchOptions["onNotificationsRefused"]
  ): Stream.Stream<Change, PlatformError> => {
    const refused = (error: PlatformError): Stream.Stream<Change> =>
      Stream.execute(
        Effect.logDebug(`claude-peers: change notifications refused for ${directory}; reading it every interval`, error).pipe(
          Effect.zipRight(onRefused?.({ directory, error, interval }) ?? Effect.void)
        )
      ).pipe(Stream.concat(Stream.as(ticks(interval, `the next read of ${directory}, whose change notifications were refused`), "all" as const)))
    // The path is looked at every interval: a link re-pointed above the directory sends it nothing.
    const notifications = files.watch(directory, { recheckEvery: interval }).pipe(
      Stream.map(({ name }): Change => (name === null ? "all" : new Set([name]))),
      Stream.catchAll((error) => (isNotFound(error) ? Stream.fail(error) : refused(error)))
    )
    // The notification for a watch that begins comes a window later: a change is read at once
    // (see `coalesceWithin`), and a read made before the system's watch is in place would miss a
    // file written between that read and it. The Node port sets its watch up synchronously when the
    // stream starts (never behind the thread pool), which this window leaves time for.
    const begun = Stream.fromEffect(Effect.as(Timing.sleep(timings.watchWindow, "the registry directory's watch to be in place"), "all" as const))
    // Found absent where it was there before (removed before its watch began, say): everything is
    // read once, since the sessions read before are gone with it; while it stays absent, nothing.
    const watchedOnce = (absent: Ref.Ref<boolean>) =>
      Stream.unwrap(
        Effect.as(Effect.zipLeft(files.stat(directory), Ref.set(absent, false)), Stream.merge(begun, notifications))
      ).pipe(
        Stream.concat(Stream.succeed<Change>("all")),
        Stream.catchAll((error) =>
          isNotFound(error)
            ? Stream.unwrap(Effect.map(Ref.getAndSet(absent, true), (was): Stream.Stream<Change> => (was ? Stream.empty : Stream.succeed("all"))))
            : Stream.fail(error)
        )
      )
    const lookAgain = Timing.sleep(Duration.min(interval, timings.directoryPoll), `the registry directory ${directory} to appear again`)
    return Stream.unwrap(Effect.map(Ref.make(false), (absent) => Stream.forever(Stream.concat(watchedOnce(absent), Stream.execute(lookAgain)))))
  }

  /** Only records' names can change a verdict: a token file (`<pid>.<hash>.key`) or a temporary file cannot. */
  const recordNames = (names: ReadonlySet<string>): ReadonlyArray<string> =>
    [...names].filter((name) => name.endsWith(".json") && !name.includes("/") && name !== ".json")

  const sessions = (options: WatchOptions = {}): Stream.Stream<SessionEvent, PlatformError> => {
    const interval = options.interval === undefined ? timings.watchInterval : Duration.decode(options.interval)
    if (!Duration.isFinite(interval) || Duration.toMillis(interval) <= 0) {
      return Stream.die(new RangeError(`Watch.sessions: the interval must be a positive, finite duration, not ${Duration.format(interval)}`))
    }
    const look = (tracking: Tracking, why: Look) =>
      Effect.gen(function*() {
        if (why._tag === "read" && why.names !== "all") {
          const names = recordNames(why.names)
          if (names.length === 0) return [tracking, []] as const
          const scope = new Set(names.map((name) => Path.join(directory, name)))
          const pids = [...tracking.values()].flatMap((tracked) => (scope.has(tracked.session.file) ? [tracked.session.pid] : []))
          const processes = yield* probe.check(pids, new Set(pids))
          return diffRegistry(tracking, yield* scanNamed(names), processes, scope, { names: home.sendersHome })
        }
        const pids = [...tracking.values()].map((tracked) => tracked.session.pid)
        const processes = yield* probe.check(pids, new Set(pids))
        if (why._tag === "probe" && unchangedSince(tracking, processes)) return [tracking, []] as const
        return diffRegistry(tracking, yield* registry.inspect, processes, undefined, { names: home.sendersHome })
      })
    const looks = Stream.mergeAll([
      directoryChanges(interval, options.onNotificationsRefused).pipe(
        coalesceWithin(timings.watchWindow),
        Stream.map((names): Look => ({ _tag: "read", names }))
      ),
      ticks(interval, "the watch interval").pipe(Stream.as(probeLook)),
      ticks(Duration.times(interval, rereadEveryIntervals), "the watch's periodic full read").pipe(Stream.as(readAll))
    ], { concurrency: "unbounded" })
    const first = Effect.gen(function*() {
      const entries = yield* registry.inspect
      if (options.onFirstRead !== undefined) yield* options.onFirstRead(entries)
      return diffRegistry(emptyTracking, entries)
    })
    return Stream.unwrap(Effect.map(first, ([tracking, events]) =>
      Stream.fromIterable(events).pipe(
        Stream.concat(looks.pipe(Stream.mapAccumEffect(tracking, look), Stream.flattenIterables))
      ))).pipe(Stream.withSpan("Watch.sessions"))
  }

  return Watch.of({ sessions })
})

/** The watch over the registry and the ports it reads and watches. */
export const layer: Layer.Layer<Watch, never, Registry | Files | ProcessProbe | ClaudeHome> = Layer.effect(Watch, make)
