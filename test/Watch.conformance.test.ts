/**
 * `watch` as one behaviour, run through the shipped composite layers on the memory world and on
 * the real OS (a temporary Claude home, real processes): every event kind in order, a process that
 * dies without touching its file, a reused pid, a record caught mid-rewrite, and a registry
 * directory that appears late, is removed and comes back. The waits are shortened through the
 * layers' `timing` option; the TestClock suite (Watch.test.ts) covers the exact timings in memory.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import type { SessionEvent } from "../src/domain/SessionEvent.js"
import * as Watch from "../src/services/Watch.js"
import { type RecordOptions, recordText } from "./support/records.js"
import { makeMemoryRegistry, makeNodeRegistry, type Process, type World } from "./support/worlds.js"

const interval = 300
/**
 * Far above the contract's 500 ms: these tests prove arrival and order, not speed, and the limit
 * only turns a hang into a clue before the test timeout, on a machine that may be very busy.
 */
const arrivalLimit = 20_000
const timing = { watchWindow: "10 millis", directoryPoll: "50 millis" } as const

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const summary = (event: SessionEvent): string => event._tag === "gone" ? `gone ${event.session.pid} ${event.verdict}` : `${event._tag} ${event.session.pid}`

const recordFor = (world: World, proc: Process, options: RecordOptions = {}) =>
  recordText(proc.pid, { procStart: proc.startTime, pidDomain: world.pidDomain, ...options })

/** The watch on the world's layer, its events collected as they arrive. */
const runWatch = (world: World) => {
  const events: Array<SessionEvent> = []
  const fiber = Effect.runFork(
    Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions({ interval }))).pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.provide(world.layerWith({ timing }))
    )
  )
  let read = 0
  /** The next event's summary, waited for; every event is consumed once, in order. */
  const next = async (limit = arrivalLimit): Promise<SessionEvent> => {
    const deadline = Date.now() + limit
    while (read >= events.length) {
      if (Date.now() > deadline) throw new Error(`no event within ${limit} ms; so far: ${events.map(summary).join(", ")}`)
      await sleep(5)
    }
    return events[read++]!
  }
  const nothingMore = () => events.slice(read).map(summary)
  return { next, nothingMore, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}

const suite = (name: string, makeWorld: () => World) =>
  describe(`watch conformance: ${name}`, { timeout: 60_000 }, () => {
    const withWatch = (body: (world: World, watch: ReturnType<typeof runWatch>) => Promise<void>, prepare?: (world: World) => void) => async () => {
      const world = makeWorld()
      prepare?.(world)
      const watch = runWatch(world)
      try {
        await body(world, watch)
      } finally {
        await watch.stop()
        await world.close()
      }
    }

    it(
      "starts with the live sessions sorted by pid, then appeared, changed, dead and removed, each in order",
      withWatch(async (world, watch) => {
        const [early, late] = [world.spawn(), world.spawn()].sort((a, b) => b.pid - a.pid)
        world.write(`${early!.pid}.json`, recordFor(world, early!, { name: "early" }))
        world.write(`${late!.pid}.json`, recordFor(world, late!, { name: "late" }))
        const first = [summary(await watch.next()), summary(await watch.next())]
        expect(first).toEqual([`appeared ${Math.min(early!.pid, late!.pid)}`, `appeared ${Math.max(early!.pid, late!.pid)}`])

        const proc = world.spawn()
        world.write(`${proc.pid}.json`, recordFor(world, proc, { name: "real" }))
        expect(await watch.next()).toMatchObject({ _tag: "appeared", session: { pid: proc.pid, name: "real", status: "idle" } })
        world.write(`${proc.pid}.json`, recordFor(world, proc, { name: "real", status: "busy" }))
        expect(await watch.next()).toMatchObject({ _tag: "changed", session: { status: "busy" }, previous: { status: "idle" } })
        // A process that dies touches no file: the interval's probe finds it.
        await world.kill(proc.pid)
        expect(summary(await watch.next(interval + arrivalLimit))).toBe(`gone ${proc.pid} dead`)
        world.remove(`${early!.pid}.json`)
        expect(summary(await watch.next())).toBe(`gone ${early!.pid} removed`)
        await sleep(2 * interval)
        expect(watch.nothingMore()).toEqual([])
      })
    )

    it(
      "another process in the same file (another start) is gone pid_reused and appeared, never changed",
      withWatch(async (world, watch) => {
        const proc = world.spawn()
        world.write(`${proc.pid}.json`, recordFor(world, proc, { startedAt: 1_000 }))
        expect(summary(await watch.next())).toBe(`appeared ${proc.pid}`)
        world.write(`${proc.pid}.json`, recordFor(world, proc, { startedAt: 2_000 }))
        expect([summary(await watch.next()), summary(await watch.next())]).toEqual([`gone ${proc.pid} pid_reused`, `appeared ${proc.pid}`])
      })
    )

    it(
      "a record caught half-written is read again, never reported gone and back",
      withWatch(async (world, watch) => {
        const proc = world.spawn()
        const whole = recordFor(world, proc)
        world.write(`${proc.pid}.json`, whole)
        expect(summary(await watch.next())).toBe(`appeared ${proc.pid}`)
        for (let i = 0; i < 20; i++) {
          // What Claude Code's in-place rewrite leaves for a moment: a prefix, then the whole record.
          world.write(`${proc.pid}.json`, whole.slice(0, 20 + i))
          await sleep(2)
          world.write(`${proc.pid}.json`, recordFor(world, proc, { status: i % 2 === 0 ? "busy" : "idle" }))
          await sleep(30)
        }
        await sleep(interval)
        const seen = watch.nothingMore()
        expect(seen.filter((line) => !line.startsWith("changed"))).toEqual([])
      })
    )

    it(
      "a registry directory created late, removed and re-created is followed",
      withWatch(async (world, watch) => {
        await sleep(2 * interval)
        expect(watch.nothingMore()).toEqual([])
        const proc = world.spawn()
        world.mkdir("")
        world.write(`${proc.pid}.json`, recordFor(world, proc))
        expect(summary(await watch.next())).toBe(`appeared ${proc.pid}`)
        world.write(`${proc.pid}.json`, recordFor(world, proc, { status: "busy" }))
        expect(summary(await watch.next())).toBe(`changed ${proc.pid}`)
        world.remove("")
        expect(summary(await watch.next())).toBe(`gone ${proc.pid} removed`)
        world.mkdir("")
        world.write(`${proc.pid}.json`, recordFor(world, proc))
        expect(summary(await watch.next())).toBe(`appeared ${proc.pid}`)
      }, (world) => world.remove(""))
    )

    it(
      "a spare claimed by a task appears; a session that loses its socket is changed",
      withWatch(async (world, watch) => {
        const [session, spare] = [world.spawn(), world.spawn()]
        world.write(`${session.pid}.json`, recordFor(world, session))
        const job = { kind: "bg", name: "7d540b66", jobId: "7d540b66" }
        world.write(`${spare.pid}.json`, recordFor(world, spare, { ...job, spare: true }))
        expect(summary(await watch.next())).toBe(`appeared ${session.pid}`)
        world.write(`${spare.pid}.json`, recordFor(world, spare, job))
        expect(summary(await watch.next())).toBe(`appeared ${spare.pid}`)
        world.write(`${session.pid}.json`, recordFor(world, session, { messagingSocketPath: undefined }))
        expect(await watch.next()).toMatchObject({ _tag: "changed", session: { pid: session.pid, socketPath: null, address: null } })
      })
    )
  })

suite("memory", makeMemoryRegistry)
suite("node", makeNodeRegistry)
