/**
 * `watch` reads what a change notification names, not the whole registry (issue 25), follows
 * what its path names when a link on the way is re-pointed (issue 26), and tells a reused pid
 * from the same process in records without `startedAt`. Memory world, `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestContext } from "effect"
import * as fc from "fast-check"
import type { Session } from "../src/domain/Session.js"
import type { SessionEvent } from "../src/domain/SessionEvent.js"
import * as Registry from "../src/services/Registry.js"
import * as Timing from "../src/services/Timing.js"
import { recordText } from "./support/records.js"
import { countingReads, interval, layerOf, makeWatchWorld, startWatch, summary, window, writeLive } from "./support/watchWorld.js"

describe("watch follows what its path names", () => {
  it.scoped("a sessions link re-pointed to another directory is followed within the interval", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const [a, b] = [world.processes.spawn(), world.processes.spawn()]
      // The registry directory is a link to one directory, then to another.
      const first = `${world.home}/profile-a`
      const second = `${world.home}/profile-b`
      world.files.makeDirectory(first, 0o700)
      world.files.makeDirectory(second, 0o700)
      world.files.remove(world.sessions)
      world.files.symlink(first, world.sessions)
      writeLive(world, a)
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([`appeared ${a.pid}`])
      world.files.writeFile(`${second}/${b.pid}.json`, recordText(b.pid, { procStart: b.startTime, pidDomain: world.pidDomain }))
      world.files.remove(world.sessions)
      world.files.symlink(second, world.sessions)
      const seen: Array<string> = []
      for (let elapsed = 0; elapsed <= interval + window && seen.length < 2; elapsed += 100) seen.push(...yield* watch.summaries(100))
      expect(seen).toEqual([`gone ${a.pid} removed`, `appeared ${b.pid}`])
      // And a change in the new directory is reported as any other.
      world.files.writeFile(`${second}/${b.pid}.json`, recordText(b.pid, { procStart: b.startTime, pidDomain: world.pidDomain, status: "busy" }))
      const later: Array<string> = []
      for (let elapsed = 0; elapsed <= interval && later.length === 0; elapsed += 100) later.push(...yield* watch.summaries(100))
      expect(later).toEqual([`changed ${b.pid}`])
    }))
})

describe("watch reads what a notification names", () => {
  it.scoped("a change to one record reads that record alone, never the whole registry", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const procs = Array.from({ length: 20 }, () => world.processes.spawn())
      for (const proc of procs) writeLive(world, proc)
      for (let i = 0; i < 50; i++) world.write(`${90000 + i}.json`, "{\"pid\":1,\"sessionId\":\"x\"") // stale torn records
      const counting = countingReads(world)
      let wholeReads = 0
      const watch = yield* startWatch(world, { files: counting.files, onRead: () => wholeReads++ })
      expect(watch.start).toHaveLength(20)
      const [readsBefore, wholeBefore] = [counting.total(), wholeReads]
      const target = procs[7]!
      writeLive(world, target, { status: "busy" })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`changed ${target.pid}`])
      expect(events[0]).toMatchObject({ session: { status: "busy" }, previous: { status: "idle" } })
      expect(wholeReads - wholeBefore).toBe(0)
      expect(counting.total() - readsBefore).toBe(1)
      expect(counting.reads.get(`${world.sessions}/${target.pid}.json`)).toBeGreaterThan(0)
      // A token file changes no verdict: nothing is read for it.
      world.write(`${target.pid}.abcdef.key`, "token")
      expect(yield* watch.advance(window)).toEqual([])
      expect(counting.total() - readsBefore).toBe(1)
    }))

  it.scoped("a name that becomes shared changes the other session's address too, as a whole read would", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const [a, b] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, a, { name: "api" })
      writeLive(world, b, { name: "docs" })
      const watch = yield* startWatch(world)
      expect(watch.start).toHaveLength(2)
      writeLive(world, b, { name: "Api" })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`changed ${a.pid}`, `changed ${b.pid}`])
      expect(events[0]).toMatchObject({ session: { address: `uds:/tmp/cc-socks/${a.pid}.sock` }, previous: { address: "api" } })
      expect(events[1]).toMatchObject({ session: { name: "Api", address: `uds:/tmp/cc-socks/${b.pid}.sock` } })
      // And back: both addresses are names again.
      world.remove(`${b.pid}.json`)
      const back = yield* watch.advance(window)
      expect(back.map(summary)).toEqual([`changed ${a.pid}`, `gone ${b.pid} removed`])
      expect(back[0]).toMatchObject({ session: { address: "api" } })
    }))

  it.scoped("a torn read of the named file is still read again, never gone and back", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world)
      writeLive(world, proc, { status: "busy" })
      world.files.tearNextReads(`${world.sessions}/${proc.pid}.json`, 10)
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`changed ${proc.pid}`])
    }))

  it.scoped("records without startedAt: a new process on the reused pid is gone pid_reused, then appeared, never changed", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "old-session", startedAt: undefined, procStart: undefined })
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([`appeared ${proc.pid}`])
      // The probe notes the pid's start time before the next read.
      expect(yield* watch.summaries(interval)).toEqual([])
      world.processes.kill(proc.pid)
      world.processes.reuse(proc.pid)
      writeLive(world, proc, { sessionId: "new-session", startedAt: undefined, procStart: undefined })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`gone ${proc.pid} pid_reused`, `appeared ${proc.pid}`])
      expect(events[0]!.session.sessionId).toBe("old-session")
      expect(events[1]!.session.sessionId).toBe("new-session")
    }))

  it.scoped("records without startedAt: the same process in another conversation is still changed", () =>
    Effect.gen(function*() {
      const world = makeWatchWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "first", startedAt: undefined, procStart: undefined })
      const watch = yield* startWatch(world)
      expect(yield* watch.summaries(interval)).toEqual([])
      writeLive(world, proc, { sessionId: "second", startedAt: undefined, procStart: undefined })
      expect(yield* watch.summaries(window)).toEqual([`changed ${proc.pid}`])
    }))

  // The guarantee that matters: whatever the files do, what the watch reports adds up to `list`.
  it.effect("property: after any sequence of record writes, renames and removals, the events add up to Registry.list", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              which: fc.integer({ min: 0, max: 3 }),
              op: fc.constantFrom<Op["op"]>("write", "remove", "kill", "reuse", "stale"),
              name: fc.constantFrom("api", "Api", "docs", "web"),
              status: fc.constantFrom("idle", "busy", "waiting"),
              startedAt: fc.boolean()
            }),
            { minLength: 1, maxLength: 12 }
          ),
          (ops) => Effect.runPromise(Effect.scoped(propertyRun(ops)).pipe(Effect.provide(TestContext.TestContext)))
        ),
        { numRuns: 15 }
      )
    ))
})

interface Op {
  readonly which: number
  readonly op: "write" | "remove" | "kill" | "reuse" | "stale"
  readonly name: string
  readonly status: string
  readonly startedAt: boolean
}

const propertyRun = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const world = makeWatchWorld()
    const procs = Array.from({ length: 4 }, () => world.processes.spawn())
    const watch = yield* startWatch(world)
    const model = new Map<number, Session>()
    const apply = (events: ReadonlyArray<SessionEvent>) => {
      for (const event of events) {
        if (event._tag === "gone") model.delete(event.session.pid)
        else model.set(event.session.pid, event.session)
      }
    }
    apply(watch.startEvents)
    let step = 0
    for (const { name, op, startedAt, status, which } of ops) {
      const proc = procs[which]!
      step++
      if (op === "write") writeLive(world, proc, { name, status, startedAt: startedAt ? 1796007021392 + step : undefined })
      else if (op === "remove" && world.exists(`${proc.pid}.json`)) world.remove(`${proc.pid}.json`)
      else if (op === "kill") world.processes.kill(proc.pid)
      else if (op === "reuse") {
        world.processes.kill(proc.pid)
        procs[which] = { pid: proc.pid, startTime: world.processes.reuse(proc.pid) }
      } else if (op === "stale") world.write(`${proc.pid}.json`, "{\"pid\":")
      // A process that died is reported within the interval; a torn file after its second read.
      apply(yield* watch.advance(interval + window))
      apply(yield* watch.advance(interval + window))
      // Read at once: the test's clock moves only when the test moves it.
      const listed = yield* Effect.flatMap(Registry.Registry, (r) => r.list).pipe(
        Effect.provide(layerOf(world)),
        Effect.provide(Timing.layer({ tornReadRetry: 0 }))
      )
      expect([...model.values()].sort((a, b) => a.pid - b.pid)).toEqual(listed)
    }
  })
