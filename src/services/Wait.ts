/**
 * Waiting for a session to reach a state: `idle`, `busy`, `waiting`, or `gone`.
 *
 * The rules:
 * - The session is resolved once, at the start, exactly as `Registry.resolve` resolves it (the same
 *   refusals), and from then on the wait follows that one process: its file (hence its pid), its
 *   start and its session id. A name that moves to another session, or a pid taken by another
 *   process, is never followed: that is the session ending (`pid_reused`), not a new one to wait on.
 * - The answer is the watch's (`Watch.sessions`), so that a wait agrees with `watch`, `list` and
 *   `inspect`: a record caught mid-rewrite is read again, a death that touches no file is seen
 *   within the interval.
 * - A new session id in the same process (the user cleared or resumed a conversation) is the end of
 *   the session that was asked for, with the verdict `session_replaced`: a caller waiting on a
 *   conversation must not be told that another one became idle.
 * - Every wait is on `Clock` (the timeout included), so a test drives it with `TestClock`.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { Ended, type IdentityMismatch, type NotLive, TimedOut, type WaitState } from "../domain/Errors.js"
import type { Session } from "../domain/Session.js"
import { candidateOf, queryOf } from "../domain/SessionIdentity.js"
import type { Status } from "../domain/Status.js"
import type { RegistryEntry } from "../domain/Verdict.js"
import { Registry, type ResolveQuery } from "./Registry.js"
import { sameProvenSession } from "./RegistryScan.js"
import * as Timing from "./Timing.js"
import { Watch } from "./Watch.js"

export interface WaitOptions {
  /** How long to wait before `TimedOut`; forever when absent. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The watch's interval: a process that dies without touching its file is seen within it (default: `Timing`'s). */
  readonly interval?: Duration.DurationInput | undefined
}

/** Why a followed session ended: a verdict of its file, `removed`, or `session_replaced` (see above). */
export type EndVerdict = string

export type WaitOutcome =
  /** The session is in `state`, as `session` shows it. */
  | { readonly _tag: "Reached"; readonly state: Status; readonly session: Session }
  /**
   * `gone` was asked and the session ended with `verdict`; `session` is it as last seen live, null
   * when it was not live at the start (then `verdict` is that of the first file that carried the
   * id or name, or `removed` when none did).
   */
  | { readonly _tag: "Gone"; readonly verdict: EndVerdict; readonly session: Session | null }

export type WaitError = NotLive | IdentityMismatch | TimedOut | Ended | PlatformError

export interface Wait {
  /**
   * Resolves `query` as `Registry.resolve` does, then returns as soon as that session is in one of
   * `until` (it may already be): `Reached` with the session, or `Gone` with the verdict that ended
   * it. Fails `NotLive` when the session is not live at the start (unless `gone` is asked: then it
   * is `Gone` at once), `Ended` when it ends while another state is awaited, `TimedOut` after
   * `timeout`. An empty `until` is a defect.
   */
  readonly waitFor: (
    query: ResolveQuery,
    until: ReadonlyArray<WaitState>,
    options?: WaitOptions
  ) => Effect.Effect<WaitOutcome, WaitError>
}

export const Wait = Context.GenericTag<Wait>("claude-peers/Wait")

/**
 * The state a session is in, if any. A stopped process (`SIGSTOP`, a suspended job) is in none:
 * its record still says what it was doing when it stopped, and nothing it says will change until
 * it runs again.
 */
export const stateOf = (session: Session): Status | null => session.stopped ? null : session.status

/**
 * Whether `now` is still the session resolved at the start: the same process, in the same
 * conversation. A process that took the pid may carry the same id and `startedAt` (a resumed
 * conversation): the start times that proved the two records tell it apart, when both are known.
 */
const sameSession = (resolved: Session, now: Session): boolean =>
  sameProvenSession(resolved, now) &&
  (now.startedAtMs === null || resolved.startedAtMs === null || now.startedAtMs === resolved.startedAtMs)

/** What a wait learns from one look: nothing yet, the state reached, or the session's end. */
type Step = { readonly _tag: "Reached"; readonly state: Status; readonly session: Session } | { readonly _tag: "Ended"; readonly verdict: EndVerdict }

export const make = Effect.gen(function*() {
  const registry = yield* Registry
  const watch = yield* Watch

  const waitFor = Effect.fn("Wait.waitFor")(function*(query: ResolveQuery, until: ReadonlyArray<WaitState>, options: WaitOptions = {}) {
    if (until.length === 0) return yield* Effect.die(new RangeError("Wait.waitFor: until must name at least one state"))
    const wanted = new Set<WaitState>(until)
    const states = [...wanted]
    // A session nothing can deliver to (no socket: `--restricted`) still has states to wait for; and
    // one whose name another session shares is still that one process by its id: nothing is sent.
    const start = yield* registry.resolve(query, { allowUnaddressable: true, allowSharedName: true }).pipe(
      // Not with `allowUnaddressable`: a defect if it ever were.
      Effect.catchTag("NotAddressable", Effect.die),
      Effect.map((session) => ({ _tag: "Live" as const, session })),
      Effect.catchIf((error): error is NotLive => error._tag === "NotLive" && wanted.has("gone"), (error) => Effect.succeed(error))
    )
    if (start._tag === "NotLive") {
      return { _tag: "Gone", verdict: start.reasons[0]?.verdict ?? "removed", session: null } satisfies WaitOutcome as WaitOutcome
    }
    const resolved = start.session
    const reachedBy = (session: Session): Step | undefined => {
      const state = stateOf(session)
      return state !== null && wanted.has(state) ? { _tag: "Reached", state, session } : undefined
    }
    let last = resolved
    const outcome = (step: Step): Effect.Effect<WaitOutcome, Ended> =>
      step._tag === "Reached"
        ? Effect.succeed(step)
        : wanted.has("gone")
        ? Effect.succeed({ _tag: "Gone", verdict: step.verdict, session: last })
        : Effect.fail(new Ended({ query: queryOf(query), until: states, session: candidateOf(last), verdict: step.verdict }))
    const now = reachedBy(resolved)
    if (now !== undefined) return yield* outcome(now)

    const steps = yield* Queue.unbounded<Step>()
    /** What the watch's first read says of the resolved session, which may have ended since it was resolved. */
    const onFirstRead = (entries: ReadonlyArray<RegistryEntry>) =>
      Effect.suspend(() => {
        const entry = entries.find((e) => e.file === resolved.file)
        if (entry === undefined) return Queue.offer(steps, { _tag: "Ended", verdict: "removed" })
        if (entry.verdict._tag !== "live") return Queue.offer(steps, { _tag: "Ended", verdict: entry.verdict._tag })
        if (!sameSession(resolved, entry.verdict.session)) {
          const verdict = entry.verdict.session.sessionId === resolved.sessionId ? "pid_reused" : "session_replaced"
          return Queue.offer(steps, { _tag: "Ended", verdict })
        }
        return Effect.void
      })
    const followed = watch.sessions({
      ...(options.interval === undefined ? {} : { interval: options.interval }),
      onFirstRead
    }).pipe(
      Stream.filter((event) => event.session.file === resolved.file),
      Stream.runForEach((event) =>
        Effect.suspend(() => {
          if (event._tag === "gone") return sameSession(resolved, event.session) ? Queue.offer(steps, { _tag: "Ended", verdict: event.verdict }) : Effect.void
          if (!sameSession(resolved, event.session)) {
            // Another conversation in the same process ends the one asked for; another process only
            // follows a `gone`, already taken.
            return event._tag === "changed" && sameSession(resolved, event.previous)
              ? Queue.offer(steps, { _tag: "Ended", verdict: "session_replaced" })
              : Effect.void
          }
          last = event.session
          const step = reachedBy(event.session)
          return step === undefined ? Effect.void : Queue.offer(steps, step)
        })
      )
    )
    // The watch never ends but by failing; the first step decides, and the watch is interrupted.
    const decided = Effect.raceFirst(Queue.take(steps), Effect.zipRight(followed, Effect.never))
    if (options.timeout === undefined) return yield* Effect.flatMap(decided, outcome)
    const timeout = Duration.decode(options.timeout)
    const timedOut = Effect.suspend(() =>
      Effect.fail(new TimedOut({ query: queryOf(query), until: states, timeoutMillis: Duration.toMillis(timeout), session: candidateOf(last) }))
    )
    return yield* Effect.flatMap(
      Effect.raceFirst(decided, Effect.zipRight(Timing.sleep(timeout, `the session to become ${states.join(" or ")}`), timedOut)),
      outcome
    )
  })

  return Wait.of({ waitFor })
})

/** The wait over the registry and the watch. */
export const layer: Layer.Layer<Wait, never, Registry | Watch> = Layer.effect(Wait, make)
