/**
 * Every wait the library makes, in one place: the torn-read retry, the settings lock's wait and
 * poll, `watch`'s interval and windows, and `send`'s timeout. All of them sleep on Effect's `Clock`, so a test on
 * `TestClock` drives them with `TestClock.adjust`, and all of them can be set through the composite
 * layers' `timing` option (`layerNode({ timing })`, `layerMemory(world, { timing })`).
 *
 * `Timing` is a `Context.Reference`: it has its defaults without being provided, so a service built
 * from its own `layer` needs nothing more than its ports.
 */
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface Timings {
  /** Claude Code rewrites its records in place: a read that does not parse is read once more after this (25 ms). */
  readonly tornReadRetry: Duration.Duration
  /** How long a live holder of the settings lock is waited for before the update gives up (2 s). */
  readonly lockWait: Duration.Duration
  /** How often a held settings lock is looked at again while waiting (20 ms). */
  readonly lockPoll: Duration.Duration
  /**
   * How long a settings lock whose holder cannot be checked here (another pid domain: a container
   * sharing the Claude home) must stay unchanged before it is broken (10 s).
   */
  readonly foreignLockWait: Duration.Duration
  /** `watch`: how often the live sessions' pids are probed (2 s), unless a call asks for another interval. */
  readonly watchInterval: Duration.Duration
  /**
   * `watch`: a change notification is read at once, and the notifications that follow within this
   * of a read are gathered into one more read when it has passed (75 ms).
   */
  readonly watchWindow: Duration.Duration
  /** `watch`: how often an absent registry directory is looked for (200 ms, or the interval when shorter). */
  readonly directoryPoll: Duration.Duration
  /** `send`: how long a relay may take from its start to `SendMessage`'s receipt before the send is `timed_out` (30 s). */
  readonly sendTimeout: Duration.Duration
}

/** Each wait as any `Duration` input (`"25 millis"`, `25`, `Duration.seconds(2)`); the ones left out keep their defaults. */
export type TimingOptions = { readonly [K in keyof Timings]?: Duration.DurationInput }

export const defaults: Timings = {
  tornReadRetry: Duration.millis(25),
  lockWait: Duration.seconds(2),
  lockPoll: Duration.millis(20),
  foreignLockWait: Duration.seconds(10),
  watchInterval: Duration.seconds(2),
  watchWindow: Duration.millis(75),
  directoryPoll: Duration.millis(200),
  sendTimeout: Duration.seconds(30)
}

export class Timing extends Context.Reference<Timing>()("claude-peers/Timing", { defaultValue: () => defaults }) {}

/** The defaults with `options` applied. A negative or infinite wait is a bug in the caller: it throws. */
export const make = (options: TimingOptions = {}): Timings => {
  const timings: Record<string, Duration.Duration> = { ...defaults }
  for (const [key, input] of Object.entries(options)) {
    if (input === undefined) continue
    const duration = Duration.decode(input)
    if (!Duration.isFinite(duration) || Duration.toMillis(duration) < 0) {
      throw new RangeError(`Timing.${key} must be a finite, non-negative duration, not ${String(input)}`)
    }
    timings[key] = duration
  }
  return timings as unknown as Timings
}

export const layer = (options: TimingOptions = {}): Layer.Layer<Timing> => Layer.sync(Timing, () => make(options))

/**
 * How long the program's `Clock` may stand still, in wall time, while a wait is pending before
 * `sleep` says why it might be stuck: a real clock never stands still that long, and the clue must
 * come well within a test runner's default timeout (vitest's 5 s), whatever the wait's length.
 */
const stillClockMillis = 1000

/**
 * Sleeps on the `Clock`. A wait still pending while the `Clock` has not moved for
 * `stillClockMillis` of wall time is on a `TestClock` that nobody moves (`it.effect` silences the
 * logger, and with it `TestClock`'s own warning), so it says once on stderr what it waits for and
 * how to move it: a test must never hang without a clue.
 */
export const sleep = (duration: Duration.Duration, waitsFor: string): Effect.Effect<void> => {
  const clue = Console.error(
    `claude-peers: still waiting for ${waitsFor} (${Duration.format(duration)} on Effect's Clock), and the Clock has not moved for ${
      stillClockMillis / 1000
    } s of wall time. On a TestClock, move it with TestClock.adjust, or shorten the wait with the layer's \`timing\` option.`
  )
  return Effect.raceFirst(Effect.sleep(duration), Effect.zipRight(clockStandsStill, Effect.zipRight(clue, Effect.never)))
}

/** Ends once the `Clock` has shown the same time across `stillClockMillis` of wall time. */
const clockStandsStill: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, function still(before): Effect.Effect<void> {
  return Effect.zipRight(
    wallClockDelay(stillClockMillis),
    Effect.flatMap(Clock.currentTimeMillis, (now) => (now === before ? Effect.void : still(now)))
  )
})

/** A delay on the real timer, whatever `Clock` the program is given. */
const wallClockDelay = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), millis)
    timer.unref?.()
    return Effect.sync(() => clearTimeout(timer))
  })
