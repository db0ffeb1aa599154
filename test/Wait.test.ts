/**
 * `Wait.waitFor` on the memory world, time driven by `TestClock`: each state reached now or later,
 * the refusals of `resolve` at the start, timeouts, endings and their verdicts, and the identity
 * rule (the one process resolved at the start, never a name that moves).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, TestClock, TestContext } from "effect"
import * as fc from "fast-check"
import type { WaitState } from "../src/domain/Errors.js"
import type { Session } from "../src/domain/Session.js"
import * as Wait from "../src/services/Wait.js"
import type { RecordOptions } from "./support/records.js"
import { type Doubles, interval, layerOf, makeWatchWorld, type WatchWorld, window, writeLive } from "./support/watchWorld.js"

const layer = (world: WatchWorld, doubles: Doubles = {}) => Wait.layer.pipe(Layer.provideMerge(layerOf(world, doubles)))

/** The wait, forked, in the world; `step(ms)` moves the clock. */
const startWait = (
  world: WatchWorld,
  query: Parameters<Wait.Wait["waitFor"]>[0],
  until: ReadonlyArray<WaitState>,
  options: Wait.WaitOptions = {},
  doubles: Doubles = {}
) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.flatMap(Wait.Wait, (wait) => wait.waitFor(query, until, options)).pipe(
      Effect.provide(layer(world, doubles)),
      Effect.fork
    )
    yield* TestClock.adjust(2 * window)
    return fiber
  })

/** Moves the clock until the fiber is done (at most `limit` ms), then its exit. */
const settle = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, limit = 2 * interval + 2 * window) =>
  Effect.gen(function*() {
    for (let t = 0; t < limit; t += 50) {
      const done = yield* Fiber.poll(fiber)
      if (done._tag === "Some") return done.value
      yield* TestClock.adjust(50)
    }
    return yield* Fiber.poll(fiber).pipe(Effect.map((o) => (o._tag === "Some" ? o.value : undefined)))
  })

/** Another process takes `proc`'s pid and writes its own record of `fields` there. */
const takeOver = (world: WatchWorld, proc: { readonly pid: number }, fields: RecordOptions) => {
  world.processes.kill(proc.pid)
  const startTime = world.processes.reuse(proc.pid)
  writeLive(world, { pid: proc.pid, startTime }, fields)
}

const failureOf = (exit: Exit.Exit<unknown, unknown> | undefined) =>
  exit !== undefined && Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

describe("Wait.waitFor", () => {
  it.scoped("a session already in a state asked for is returned at once", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "idle" })
      const fiber = yield* startWait(world, { name: "app" }, ["busy", "idle"])
      const exit = yield* settle(fiber, 0)
      expect(exit).toEqual(Exit.succeed(expect.objectContaining({ _tag: "Reached", state: "idle" })))
    }))

  it.scoped("a session without a socket (--restricted) is waited for: nothing delivers to it, yet it has states", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "quiet", status: "busy", messagingSocketPath: undefined })
      const fiber = yield* startWait(world, { name: "quiet" }, ["idle"])
      writeLive(world, proc, { name: "quiet", status: "idle", messagingSocketPath: undefined })
      const exit = yield* settle(fiber)
      expect(exit).toEqual(Exit.succeed(expect.objectContaining({ _tag: "Reached", state: "idle", session: expect.objectContaining({ socketPath: null }) })))
    }))

  it.scoped("a session whose name another live session shares is waited for by its id: nothing is sent to it by name", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const [proc, other] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, proc, { name: "(backgrounded)", status: "busy" })
      writeLive(world, other, { name: "(backgrounded)", status: "busy" })
      const sessionId = `00000000-0000-4000-8000-${String(proc.pid).padStart(12, "0")}`
      const fiber = yield* startWait(world, { sessionId }, ["idle"])
      writeLive(world, other, { name: "(backgrounded)", status: "idle" })
      writeLive(world, proc, { name: "(backgrounded)", status: "idle" })
      const exit = yield* settle(fiber)
      expect(exit).toEqual(Exit.succeed(expect.objectContaining({ _tag: "Reached", state: "idle", session: expect.objectContaining({ pid: proc.pid }) })))
    }))

  it.scoped("each state is reached when the session's record says it", () =>
    Effect.gen(function*() {
      for (const [from, to] of [["idle", "busy"], ["busy", "idle"], ["busy", "waiting"], ["waiting", "idle"]] as const) {
        const world = makeWatchWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc, { name: "app", status: from })
        const fiber = yield* startWait(world, { sessionId: `00000000-0000-4000-8000-${String(proc.pid).padStart(12, "0")}` }, [to])
        expect((yield* Fiber.poll(fiber))._tag).toBe("None")
        writeLive(world, proc, { name: "app", status: to, waitingFor: to === "waiting" ? "permission" : undefined })
        const exit = yield* settle(fiber)
        expect(exit).toEqual(
          Exit.succeed(expect.objectContaining({ _tag: "Reached", state: to, session: expect.objectContaining({ pid: proc.pid, status: to }) }))
        )
      }
    }))

  it.scoped("timeout: TimedOut on the Clock, with the session as last seen", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "busy" })
      const fiber = yield* startWait(world, { name: "app" }, ["idle"], { timeout: 5000 })
      yield* TestClock.adjust(4000)
      expect((yield* Fiber.poll(fiber))._tag).toBe("None")
      yield* TestClock.adjust(1001)
      const error = failureOf(yield* settle(fiber, 0))
      expect(error).toMatchObject({ _tag: "TimedOut", reason: "timed_out", timeoutMillis: 5000, until: ["idle"], session: { pid: proc.pid, name: "app" } })
    }))

  it.scoped("gone: a process that dies without touching its file is Gone dead within the interval; waiting for another state it is Ended", () =>
    Effect.gen(function*() {
      for (const until of [["gone"], ["idle"]] as const) {
        const world = makeWatchWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc, { name: "app", status: "busy" })
        const fiber = yield* startWait(world, { name: "app" }, until)
        world.processes.kill(proc.pid)
        const exit = yield* settle(fiber, interval + window)
        if (until[0] === "gone") expect(exit).toEqual(Exit.succeed({ _tag: "Gone", verdict: "dead", session: expect.objectContaining({ pid: proc.pid }) }))
        else expect(failureOf(exit)).toMatchObject({ _tag: "Ended", reason: "ended", verdict: "dead", session: { pid: proc.pid } })
      }
    }))

  it.scoped("not live at the start: NotLive, unless gone is asked (then Gone with the file's verdict)", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app" })
      world.processes.kill(proc.pid)
      const refused = failureOf(yield* settle(yield* startWait(world, { name: "app" }, ["idle"]), 0))
      expect(refused).toMatchObject({ _tag: "NotLive", reason: "not_live" })
      const gone = yield* settle(yield* startWait(world, { name: "app" }, ["idle", "gone"]), 0)
      expect(gone).toEqual(Exit.succeed({ _tag: "Gone", verdict: "dead", session: null }))
      const never = yield* settle(yield* startWait(world, { name: "nobody" }, ["gone"]), 0)
      expect(never).toEqual(Exit.succeed({ _tag: "Gone", verdict: "removed", session: null }))
    }))

  it.scoped("the refusals of resolve: a shared name is identity_mismatch", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      for (const proc of [world.processes.spawn(), world.processes.spawn()]) writeLive(world, proc, { name: "app" })
      expect(failureOf(yield* settle(yield* startWait(world, { name: "app" }, ["idle"]), 0))).toMatchObject({ reason: "identity_mismatch" })
    }))

  it.scoped("never follows a name that moves: the session's file removed and another session named so is Ended removed", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const [a, b] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, a, { name: "app", status: "busy" })
      const fiber = yield* startWait(world, { name: "app" }, ["idle"])
      world.remove(`${a.pid}.json`)
      writeLive(world, b, { name: "app", status: "idle" })
      const exit = yield* settle(fiber)
      expect(failureOf(exit)).toMatchObject({ _tag: "Ended", verdict: "removed", session: { pid: a.pid } })
    }))

  it.scoped("a pid taken by another process that writes its own idle record is Ended pid_reused, not reached", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "busy", startedAt: 1796007021392 })
      const fiber = yield* startWait(world, { name: "app" }, ["idle"])
      takeOver(world, proc, { name: "app", status: "idle", sessionId: "another", startedAt: 1796009999999 })
      expect(failureOf(yield* settle(fiber))).toMatchObject({ _tag: "Ended", verdict: "pid_reused" })
    }))

  it.scoped("a pid taken by another process with the same session id and startedAt is Ended pid_reused, not reached", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "busy", sessionId: "same", startedAt: 1796007021392 })
      const fiber = yield* startWait(world, { sessionId: "same" }, ["idle"])
      takeOver(world, proc, { name: "app", status: "idle", sessionId: "same", startedAt: 1796007021392 })
      expect(failureOf(yield* settle(fiber))).toMatchObject({ _tag: "Ended", verdict: "pid_reused" })
    }))

  it.scoped("a pid taken (same id and startedAt) between the resolve and the watch's first read is Ended pid_reused", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "busy", sessionId: "same", startedAt: 1796007021392 })
      let reads = 0
      // The watch's first read is the registry's first `inspect`, after the resolve.
      const onRead = () => {
        if (reads++ === 0) takeOver(world, proc, { name: "app", status: "idle", sessionId: "same", startedAt: 1796007021392 })
      }
      const fiber = yield* startWait(world, { sessionId: "same" }, ["idle"], {}, { onRead })
      expect(failureOf(yield* settle(fiber))).toMatchObject({ _tag: "Ended", verdict: "pid_reused" })
      expect(reads).toBeGreaterThan(0)
    }))

  it.scoped("another conversation in the same process ends the session asked for: session_replaced", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "app", status: "busy" })
      const fiber = yield* startWait(world, { name: "app" }, ["idle"])
      writeLive(world, proc, { name: "app", status: "idle", sessionId: "cleared" })
      expect(failureOf(yield* settle(fiber))).toMatchObject({ _tag: "Ended", verdict: "session_replaced" })
    }))

  it("a stopped session is in no state", () => {
    const session = { status: "idle" } as Session
    expect(Wait.stateOf(session)).toBe("idle")
    expect(Wait.stateOf({ ...session, stopped: true } as Session)).toBe(null)
    expect(Wait.stateOf({ ...session, stopped: false } as Session)).toBe("idle")
  })

  // Whatever the followed session and a namesake do, the wait returns at the first state asked for
  // that the followed session reaches, and never on the namesake's.
  it.effect("property: the wait returns iff the followed session reaches a state asked for", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.subarray(["idle", "busy", "waiting"] as const, { minLength: 1 }),
          fc.array(fc.record({ followed: fc.boolean(), status: fc.constantFrom<"idle" | "busy" | "waiting">("idle", "busy", "waiting") }), { maxLength: 8 }),
          (until, steps) => Effect.runPromise(Effect.scoped(property(until, steps)).pipe(Effect.provide(TestContext.TestContext)))
        ),
        { numRuns: 20 }
      )
    ))
})

const property = (
  until: ReadonlyArray<"idle" | "busy" | "waiting">,
  steps: ReadonlyArray<{ readonly followed: boolean; readonly status: "idle" | "busy" | "waiting" }>
) =>
  Effect.gen(function*() {
    const world = makeWatchWorld()
    const followed = world.processes.spawn()
    const namesake = world.processes.spawn()
    const start = (["idle", "busy", "waiting"] as const).find((s) => !until.includes(s))
    if (start === undefined) return
    writeLive(world, followed, { name: "app", status: start })
    const fiber = yield* startWait(world, { name: "app" }, until, { timeout: 10_000 })
    let expected: string | undefined
    for (const { followed: isFollowed, status } of steps) {
      // The namesake's record is another file, another process: its name is never followed.
      writeLive(world, isFollowed ? followed : namesake, { name: isFollowed ? "app" : "other", status })
      yield* TestClock.adjust(window)
      if (expected === undefined && isFollowed && until.includes(status)) expected = status
      if (expected !== undefined) break
    }
    if (expected === undefined) yield* TestClock.adjust(10_000)
    const exit = yield* settle(fiber, window)
    if (expected === undefined) expect(failureOf(exit)).toMatchObject({ _tag: "TimedOut" })
    else {expect(exit).toEqual(
        Exit.succeed(expect.objectContaining({ _tag: "Reached", state: expected, session: expect.objectContaining({ pid: followed.pid }) }))
      )}
  })
