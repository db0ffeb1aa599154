/**
 * The process probe's conformance suite, as a function of a layer: every layer of `ProcessProbe`
 * (the shipped `layerProcessProbe` of `claude-peers/node` and of `claude-peers/testing`, or a port
 * author's own) must pass it, so that a test written against the memory table holds against the OS.
 * The layer also provides a `ProcessController`, which starts and ends processes beneath the probe.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { layer as layerProcessProbe, makeMemoryProcesses, type MemoryProcessesOptions } from "../layers/ProcessProbeMemory.js"
import { notAskedFor, type ProcessEvidence, ProcessProbe, type ProcessState } from "../services/ProcessProbe.js"

/** The shipped memory probe over a fresh process table, and its controller. */
export const layerMemory = (options: MemoryProcessesOptions = {}): Layer.Layer<ProcessProbe | ProcessController> =>
  Layer.unwrapEffect(Effect.sync(() => {
    const processes = makeMemoryProcesses(options)
    return Layer.merge(
      layerProcessProbe(processes),
      Layer.succeed(ProcessController, {
        spawn: Effect.sync(() => processes.spawn().pid),
        kill: (pid) => Effect.sync(() => processes.kill(pid)),
        startTime: (pid) => processes.startTimeOf(pid)!,
        pidDomain: () => Option.some("linux:memory:pid:[1]"),
        kills: () => processes.stats.kills,
        startTimeReads: () => processes.stats.startTimeReads,
        zombie: Effect.sync(() => {
          const { pid } = processes.spawn()
          processes.exitUnreaped(pid)
          return pid
        }),
        self: processes.self,
        stop: (pid) => Effect.sync(() => processes.stop(pid)),
        resume: (pid) => Effect.sync(() => processes.resume(pid)),
        otherUsersProcess: Effect.sync(() => processes.spawn({ uid: (options.user?.uid ?? 1000) === 0 ? 1 : 0 }).pid),
        uid: Option.some(options.user?.uid ?? 1000)
      })
    )
  }))

/** What the suite needs from the world beneath the probe: processes it starts and ends without the probe. */
export class ProcessController extends Context.Tag("claude-peers/testing/ProcessController")<ProcessController, {
  /** A fresh live process; every one still running is killed when the suite ends. */
  readonly spawn: Effect.Effect<number>
  /** Kills and reaps it: afterwards no process has that pid (until the OS reuses it). */
  readonly kill: (pid: number) => Effect.Effect<void>
  /** Its start time, read without the probe. */
  readonly startTime: (pid: number) => string
  readonly pidDomain: () => Option.Option<string>
  /** `kill(pid, 0)` calls so far. */
  readonly kills: () => number
  /** Start-time reads so far, where they can be observed. */
  readonly startTimeReads?: () => number
  /** A process that has exited and is not reaped: a zombie. */
  readonly zombie: Effect.Effect<number>
  /** The process the probe runs as. */
  readonly self: { readonly pid: number; readonly startTime: string }
  /**
   * SIGSTOP, returning once the process reads as stopped beneath the probe; where it is given,
   * `resume` (SIGCONT, returning once it runs again) is too.
   */
  readonly stop?: (pid: number) => Effect.Effect<void>
  readonly resume?: (pid: number) => Effect.Effect<void>
  /** A live process of another user, which the probe's user may not signal (none where the probe runs as root). */
  readonly otherUsersProcess?: Effect.Effect<number>
  /** The uid the probe runs as, where the controller knows it. */
  readonly uid?: Option.Option<number>
}>() {}

const check = (pids: Iterable<number>, startTimeOf: Iterable<number> = []) => Effect.flatMap(ProcessProbe, (probe) => probe.check(pids, new Set(startTimeOf)))

const alive = (startTime?: string, seen: { readonly stopped?: boolean; readonly otherUser?: boolean } = {}): ProcessState => ({
  _tag: "Alive",
  startTime: startTime === undefined ? Option.none() : Option.some(startTime),
  stopped: seen.stopped ?? false,
  otherUser: seen.otherUser ?? false,
  hidden: false
})
const dead: ProcessState = { _tag: "Dead" }

/**
 * Declares the suite (`describe(name, …)` with `@effect/vitest`'s `it.live`: real processes take
 * real time) for a layer of `ProcessProbe` and its `ProcessController`, built afresh for each test.
 */
export const processProbeConformance = <E>(name: string, layer: Layer.Layer<ProcessProbe | ProcessController, E>): void => {
  describe(name, () => {
    const test = (title: string, body: (controller: Context.Tag.Service<ProcessController>) => Effect.Effect<void, never, ProcessProbe>) =>
      it.live(title, () => Effect.provide(Effect.flatMap(ProcessController, body), layer))

    test("a running process is alive with its start time", (controller) =>
      Effect.gen(function*() {
        const pid = yield* controller.spawn
        const states = yield* check([pid], [pid])
        expect(states.get(pid)).toEqual(alive(controller.startTime(pid)))
        expect(states.size).toBe(1)
      }))

    test("a killed process is dead, whether or not its start time is asked", (controller) =>
      Effect.gen(function*() {
        const pid = yield* controller.spawn
        yield* controller.kill(pid)
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, dead]]))
        expect(yield* check([pid])).toEqual(new Map([[pid, dead]]))
      }))

    test("each distinct pid is checked once and answered once", (controller) =>
      Effect.gen(function*() {
        const live = yield* controller.spawn
        const gone = yield* controller.spawn
        yield* controller.kill(gone)
        const before = controller.kills()
        const states = yield* check([live, gone, live, live, gone], [live, gone])
        expect(controller.kills() - before).toBe(2)
        expect([...states.keys()]).toEqual([live, gone])
        expect(states.get(live)).toEqual(alive(controller.startTime(live)))
        expect(states.get(gone)).toEqual(dead)
      }))

    test("no start time is read for a pid not in startTimeOf", (controller) =>
      Effect.gen(function*() {
        const asked = yield* controller.spawn
        const notAsked = yield* controller.spawn
        const before = controller.startTimeReads?.()
        const states = yield* check([asked, notAsked], [asked])
        if (before !== undefined) expect(controller.startTimeReads!() - before).toBe(1)
        expect(states.get(asked)).toEqual(alive(controller.startTime(asked)))
        expect(states.get(notAsked)).toEqual(alive())
        const beforeNone = controller.startTimeReads?.()
        yield* check([asked, notAsked])
        if (beforeNone !== undefined) expect(controller.startTimeReads!() - beforeNone).toBe(0)
      }))

    test("a pid in startTimeOf but not in pids is not checked", (controller) =>
      Effect.gen(function*() {
        const pid = yield* controller.spawn
        const before = controller.kills()
        expect(yield* check([], [pid])).toEqual(new Map())
        expect(controller.kills() - before).toBe(0)
      }))

    test("what is not a process id is dead without a kill (0 and negatives address process groups)", (controller) =>
      Effect.gen(function*() {
        const before = controller.kills()
        const bogus = [0, -1, -4242, 1.5, Number.NaN, 2 ** 31, Number.MAX_SAFE_INTEGER + 2]
        const states = yield* check(bogus, bogus)
        expect(controller.kills() - before).toBe(0)
        expect(states).toEqual(new Map(bogus.map((pid) => [pid, dead])))
      }))

    test("checkLiveness: one kill per distinct pid; states later read start times without a second kill", (controller) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        const asked = yield* controller.spawn
        const notAsked = yield* controller.spawn
        const gone = yield* controller.spawn
        yield* controller.kill(gone)
        const killsBefore = controller.kills()
        const liveness = yield* probe.checkLiveness([asked, gone, notAsked, asked, gone])
        expect(controller.kills() - killsBefore).toBe(3)
        expect([asked, notAsked, gone].map(liveness.isAlive)).toEqual([true, true, false])
        const readsBefore = controller.startTimeReads?.()
        const states = yield* liveness.states([asked, notAsked, gone], new Set([asked, gone]))
        expect(controller.kills() - killsBefore).toBe(3)
        if (readsBefore !== undefined) expect(controller.startTimeReads!() - readsBefore).toBe(1)
        expect(states).toEqual(new Map([[asked, alive(controller.startTime(asked))], [notAsked, alive()], [gone, dead]]))
      }))

    test("checkLiveness: states answers only for the pids asked; one not checked is dead", (controller) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        const checked = yield* controller.spawn
        const unchecked = yield* controller.spawn
        const liveness = yield* probe.checkLiveness([checked])
        expect(yield* liveness.states([], new Set([checked]))).toEqual(new Map())
        expect(yield* liveness.states([unchecked], new Set())).toEqual(new Map([[unchecked, dead]]))
        expect(liveness.isAlive(unchecked)).toBe(false)
      }))

    test("a zombie (exited, not reaped) is dead, whether or not its start time is asked", (controller) =>
      Effect.gen(function*() {
        const pid = yield* controller.zombie
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, dead]]))
        expect(yield* check([pid])).toEqual(new Map([[pid, dead]]))
        const liveness = yield* Effect.flatMap(ProcessProbe, (probe) => probe.checkLiveness([pid]))
        expect(yield* liveness.states([pid], new Set([pid]))).toEqual(new Map([[pid, dead]]))
      }))

    test("evidence in parts: each part asked for as the whole evidence shows it; the rest not asked for, or as the whole shows it", (controller) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        const pid = controller.self.pid
        const all = yield* probe.evidence(pid)
        const parts = ["environment", "workingDirectory"] as const
        const some = yield* probe.evidence(pid, parts)
        // Compared by their variables: a layer's environment may be a map class of its own.
        const variables = ({ environment }: ProcessEvidence) => environment._tag === "Read" ? [...environment.value] : environment
        expect(variables(some)).toEqual(variables(all))
        expect(some.workingDirectory).toEqual(all.workingDirectory)
        // A layer may answer more than it is asked: a part not asked for is either.
        expect([notAskedFor, all.arguments]).toContainEqual(some.arguments)
        expect([notAskedFor, all.mountNamespace]).toContainEqual(some.mountNamespace)
      }))

    test("self is the process the probe runs as, alive, with its start time", (controller) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        expect(yield* probe.self).toEqual({ pid: controller.self.pid, startTime: Option.some(controller.self.startTime) })
        expect((yield* check([controller.self.pid], [controller.self.pid])).get(controller.self.pid)).toEqual(alive(controller.self.startTime))
      }))

    test("a stopped process is alive and stopped; continued, it runs again", (controller) =>
      Effect.gen(function*() {
        if (controller.stop === undefined || controller.resume === undefined) return
        const pid = yield* controller.spawn
        yield* controller.stop(pid)
        expect((yield* check([pid], [pid])).get(pid)).toEqual(alive(controller.startTime(pid), { stopped: true }))
        expect((yield* check([pid])).get(pid)).toEqual(alive(undefined, { stopped: true }))
        const liveness = yield* Effect.flatMap(ProcessProbe, (probe) => probe.checkLiveness([pid]))
        expect(liveness.isAlive(pid)).toBe(true)
        expect((yield* liveness.states([pid], new Set())).get(pid)).toEqual(alive(undefined, { stopped: true }))
        yield* controller.resume(pid)
        expect((yield* check([pid], [pid])).get(pid)).toEqual(alive(controller.startTime(pid)))
        yield* controller.kill(pid)
      }))

    test("another user's process (kill answers EPERM) is alive and marked otherUser", (controller) =>
      Effect.gen(function*() {
        if (controller.otherUsersProcess === undefined) return
        const pid = yield* controller.otherUsersProcess
        const state = (yield* check([pid], [pid])).get(pid)
        expect(state?._tag === "Alive" && state.otherUser).toBe(true)
        const liveness = yield* Effect.flatMap(ProcessProbe, (probe) => probe.checkLiveness([pid]))
        expect(liveness.isAlive(pid)).toBe(true)
      }))

    test("user is the uid the probe runs as", (controller) =>
      Effect.gen(function*() {
        if (controller.uid === undefined) return
        expect(yield* Effect.flatMap(ProcessProbe, (probe) => probe.user)).toEqual(controller.uid)
      }))

    test("pidDomain is this machine's", (controller) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        expect(yield* probe.pidDomain).toEqual(controller.pidDomain())
        expect(yield* probe.pidDomain).toEqual(controller.pidDomain())
      }))
  })
}
