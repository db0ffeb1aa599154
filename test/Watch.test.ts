/**
 * `watch` on the in-memory layers, with time driven by `TestClock`: every event kind, the order at
 * start, deaths that touch no file, reused pids, bursts of rewrites, torn reads, and a registry
 * directory that appears late, is removed and comes back. Nothing here waits on the wall clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Fiber, Layer, Queue, Stream, TestClock } from "effect"
import type { SessionEvent } from "../src/domain/SessionEvent.js"
import * as FilesMemory from "../src/layers/FilesMemory.js"
import * as ProcessProbeMemory from "../src/layers/ProcessProbeMemory.js"
import * as ClaudeHome from "../src/services/ClaudeHome.js"
import { Files } from "../src/services/Files.js"
import { ProcessProbe } from "../src/services/ProcessProbe.js"
import * as Registry from "../src/services/Registry.js"
import { defaults } from "../src/services/Timing.js"
import * as Watch from "../src/services/Watch.js"
import { type RecordOptions, recordText } from "./support/records.js"
import { makeMemoryRegistry, type Process } from "./support/worlds.js"

/** A memory world seen from its registry directory, with its tree and process table at hand. */
const makeMemoryWorld = () => {
  const world = makeMemoryRegistry()
  return { ...world, files: world.world.tree, processes: world.world.processes }
}
type MemoryWorld = ReturnType<typeof makeMemoryWorld>

const { rereadEveryIntervals } = Watch
const interval = Duration.toMillis(defaults.watchInterval)
const window = Duration.toMillis(defaults.watchWindow)
const directoryPollMillis = Duration.toMillis(defaults.directoryPoll)
/** The registry's wait before it re-reads a record that did not parse. */
const tornRetry = Duration.toMillis(defaults.tornReadRetry)

interface WatchOptions {
  readonly intervalMillis?: number
  readonly onNotificationsRefused?: Watch.WatchOptions["onNotificationsRefused"]
  readonly onFirstRead?: Watch.WatchOptions["onFirstRead"]
}

const watchSessions = (options: WatchOptions = {}) =>
  Stream.unwrap(Effect.map(Watch.Watch, (watch) =>
    watch.sessions({
      ...(options.intervalMillis === undefined ? {} : { interval: options.intervalMillis }),
      onNotificationsRefused: options.onNotificationsRefused,
      onFirstRead: options.onFirstRead
    })))

/** A record that is live in this world while `proc` runs. */
const writeLive = (world: MemoryWorld, proc: Process, options: RecordOptions = {}) =>
  world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, pidDomain: world.pidDomain, ...options }))

/** Another process takes `proc`'s pid and writes its own record of `options` there. */
const takeOver = (world: MemoryWorld, proc: Process, options: RecordOptions) => {
  world.processes.kill(proc.pid)
  const startTime = world.processes.reuse(proc.pid)
  writeLive(world, { pid: proc.pid, startTime }, options)
}

/** `appeared 1000`, `changed 1000`, `gone 1000 dead`: enough to compare sequences at a glance. */
const summary = (event: SessionEvent): string => event._tag === "gone" ? `gone ${event.session.pid} ${event.verdict}` : `${event._tag} ${event.session.pid}`

/** Doubles a test can put around the world's ports: a file port or a process probe of its own, a count of registry reads. */
interface Doubles {
  readonly files?: Files
  readonly probe?: ProcessProbe
  readonly onRead?: () => void
}

const layerOf = (world: MemoryWorld, doubles: Doubles = {}) => {
  const registry = Layer.effect(
    Registry.Registry,
    Effect.map(Registry.make, (registry) => ({
      ...registry,
      inspect: Effect.zipRight(Effect.sync(() => doubles.onRead?.()), registry.inspect)
    }))
  )
  return Watch.layer.pipe(
    Layer.provideMerge(registry),
    Layer.provideMerge(Layer.mergeAll(
      doubles.files === undefined ? FilesMemory.layer(world.files) : Layer.succeed(Files, doubles.files),
      doubles.probe === undefined ? ProcessProbeMemory.layer(world.processes) : Layer.succeed(ProcessProbe, doubles.probe),
      ClaudeHome.layer(world.home)
    ))
  )
}

/** How long `startWatch` lets the watch start for. */
const startMillis = 2 * window

/**
 * Runs the watch in the test's scope. `advance(ms)` moves the test clock and returns the events
 * emitted meanwhile; `TestClock.adjust` returns only once every fiber of the watch is suspended.
 * `start` holds the events of the first check, of the one a window later, when the directory watch
 * has begun, and of the window after that one: a test acts after them, so that each later check is
 * one its action caused, and a change it makes is read at once.
 */
const startWatch = (world: MemoryWorld, options: WatchOptions = {}, doubles: Doubles = {}) =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<SessionEvent>()
    const fiber = yield* watchSessions(options).pipe(
      Stream.runForEach((event) => Queue.offer(events, event)),
      Effect.provide(layerOf(world, doubles)),
      Effect.forkScoped
    )
    const advance = (millis: number) => TestClock.adjust(millis).pipe(Effect.zipRight(Queue.takeAll(events)), Effect.map(Chunk.toArray))
    const summaries = (millis: number) => Effect.map(advance(millis), (all) => all.map(summary))
    return { fiber, advance, summaries, start: yield* summaries(startMillis) }
  })

describe("watch", () => {
  it.scoped("starts with one appeared per live session, sorted by pid, and nothing for files that are not live", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const procs = [3001, 1500, 2200].map((pid) => world.processes.spawn({ pid }))
      for (const proc of procs) writeLive(world, proc)
      const dead = world.processes.spawn({ pid: 1700 })
      writeLive(world, dead)
      world.processes.kill(dead.pid)
      const parked = world.processes.spawn({ pid: 1800 })
      writeLive(world, parked, { parkedJobId: "d781d7b2" })
      world.write("foo.json", "{}")
      world.write("1900.json", "{not json")

      const watch = yield* startWatch(world)
      expect(watch.start).toEqual(["appeared 1500", "appeared 2200", "appeared 3001"])
      expect(yield* watch.summaries(5 * interval)).toEqual([])
    }))

  it.scoped("appeared: a new record is reported as soon as it is written", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([])
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "fresh" })
      const [event, ...rest] = yield* watch.advance(0)
      expect(rest).toEqual([])
      expect(event).toMatchObject({ _tag: "appeared", session: { pid: proc.pid, name: "fresh", status: "idle" } })
    }))

  it.scoped("changed: carries the previous session, and only when the session object differs", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([`appeared ${proc.pid}`])

      // The same bytes again, then a field that is not part of a session: no change to report.
      writeLive(world, proc)
      expect(yield* watch.summaries(window)).toEqual([])
      writeLive(world, proc, { peerFeatures: ["notify_idle"], nameSince: 1 })
      expect(yield* watch.summaries(window)).toEqual([])

      writeLive(world, proc, { status: "waiting", waitingFor: "dialog open" })
      const [event, ...rest] = yield* watch.advance(window)
      expect(rest).toEqual([])
      expect(event).toMatchObject({
        _tag: "changed",
        session: { pid: proc.pid, status: "waiting", waitingFor: "dialog open" },
        previous: { pid: proc.pid, status: "idle", waitingFor: null }
      })
    }))

  it.scoped("a record rewritten many times in a burst: read at once, then once more with the last state when the window closes", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      let reads = 0
      let fileReads = 0
      const port = FilesMemory.make(world.files)
      const files: Files = {
        ...port,
        readBounded: (path, options) => Effect.zipRight(Effect.sync(() => path.endsWith(`/${proc.pid}.json`) && fileReads++), port.readBounded(path, options))
      }
      const watch = yield* startWatch(world, {}, { onRead: () => reads++, files })
      const readsAtStart = reads
      const fileReadsAtStart = fileReads
      const step = Math.floor(window / 8)
      const states = ["busy", "waiting", "busy", "shell", "busy", "waiting", "busy"]
      const seen: Array<SessionEvent> = []
      for (const [i, status] of states.entries()) {
        writeLive(world, proc, { status, statusUpdatedAt: 1796007040000 + i })
        seen.push(...yield* watch.advance(step))
      }
      seen.push(...yield* watch.advance(window))
      expect(seen.map(summary)).toEqual([`changed ${proc.pid}`, `changed ${proc.pid}`])
      expect(seen[0]).toMatchObject({ session: { status: "busy", statusUpdatedAtMs: 1796007040000 }, previous: { status: "idle" } })
      expect(seen[1]).toMatchObject({ session: { status: "busy", statusUpdatedAtMs: 1796007040006 }, previous: { statusUpdatedAtMs: 1796007040000 } })
      // Two reads of the file the notifications named, and none of the whole registry.
      expect(fileReads - fileReadsAtStart).toBe(2)
      expect(reads - readsAtStart).toBe(0)
      expect(yield* watch.summaries(2 * interval)).toEqual([])
    }))

  it.scoped("a steady trickle of notifications cannot hold a check back past one window", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world)
      writeLive(world, proc, { status: "busy" })
      const seen: Array<string> = []
      // Another file is touched every 10 ms: a debounce that restarted on each would never fire.
      for (let t = 10; t <= window; t += 10) {
        world.write(`${proc.pid}.abc.key`, String(t))
        seen.push(...yield* watch.summaries(10))
      }
      seen.push(...yield* watch.summaries(window % 10))
      expect(seen).toEqual([`changed ${proc.pid}`])
    }))

  it.scoped("gone removed: the record's file is deleted", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { name: "leaving" })
      const watch = yield* startWatch(world)
      world.remove(`${proc.pid}.json`)
      const [event, ...rest] = yield* watch.advance(window)
      expect(rest).toEqual([])
      expect(event).toMatchObject({ _tag: "gone", verdict: "removed", session: { pid: proc.pid, name: "leaving" } })
    }))

  it.scoped("gone dead: a process that dies without touching its file is reported within one interval", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const [a, b] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, a)
      writeLive(world, b)
      const watch = yield* startWatch(world)
      expect(yield* watch.summaries(interval / 4)).toEqual([])
      world.processes.kill(a.pid)
      const seen: Array<string> = []
      for (let elapsed = 0; elapsed < interval && seen.length === 0; elapsed += 100) seen.push(...yield* watch.summaries(100))
      expect(seen).toEqual([`gone ${a.pid} dead`])
      expect(yield* watch.summaries(3 * interval)).toEqual([])
    }))

  it.scoped("an idle watch reads the registry only when a probe of the live pids finds a change", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const procs = [world.processes.spawn(), world.processes.spawn(), world.processes.spawn()]
      for (const proc of procs) writeLive(world, proc)
      let reads = 0
      const watch = yield* startWatch(world, {}, { onRead: () => reads++ })
      // The first read, and the one a window later when the directory watch began.
      expect(reads).toBe(2)
      expect(yield* watch.summaries(10 * interval)).toEqual([])
      expect(reads).toBe(2)
      world.processes.kill(procs[1]!.pid)
      expect(yield* watch.summaries(interval)).toEqual([`gone ${procs[1]!.pid} dead`])
      expect(reads).toBe(3)
    }))

  it.scoped("a lost notification is made up for by the read every rereadEveryIntervals intervals", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      // A directory watch that never reports anything, as on a network file system.
      const deaf: Files = { ...FilesMemory.make(world.files), watch: () => Stream.never }
      const watch = yield* startWatch(world, {}, { files: deaf })
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const reread = rereadEveryIntervals * interval
      expect(yield* watch.summaries(reread - startMillis - 1)).toEqual([])
      expect(yield* watch.summaries(1)).toEqual([`appeared ${proc.pid}`])
    }))

  it.scoped("a pid reused just after a read found its session live is still caught by the next probe", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      // Runs a hook right after a given probe call: here, the registry's own probe inside a read.
      let afterCall: { countdown: number; hook: () => void } | undefined
      const afterProbe = Effect.sync(() => {
        if (afterCall !== undefined && --afterCall.countdown === 0) {
          afterCall.hook()
          afterCall = undefined
        }
      })
      const inner = world.processes.probe
      const probe: ProcessProbe = {
        ...inner,
        check: (pids, startTimeOf) => Effect.tap(inner.check(pids, startTimeOf), () => afterProbe),
        checkLiveness: (pids) =>
          Effect.map(inner.checkLiveness(pids), (liveness) => ({
            ...liveness,
            states: (statePids, startTimeOf) => Effect.tap(liveness.states(statePids, startTimeOf), () => afterProbe)
          }))
      }
      const watch = yield* startWatch(world, {}, { probe })
      writeLive(world, proc, { status: "busy" })
      // A read is the watch's probe, then the registry's: the pid changes hands after the second,
      // while the record (procStart of the old process) stays as it is.
      afterCall = {
        countdown: 2,
        hook: () => {
          world.processes.kill(proc.pid)
          world.processes.reuse(proc.pid)
        }
      }
      expect(yield* watch.summaries(window)).toEqual([`changed ${proc.pid}`])
      expect(afterCall).toBeUndefined()
      expect(yield* watch.summaries(interval)).toEqual([`gone ${proc.pid} pid_reused`])
    }))

  it.scoped("gone parked: the window moved its session to a background job", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world)
      writeLive(world, proc, { parkedJobId: "d781d7b2" })
      expect(yield* watch.summaries(window)).toEqual([`gone ${proc.pid} parked`])
      // Taken back from the background: the same session is live again.
      writeLive(world, proc)
      expect(yield* watch.summaries(window)).toEqual([`appeared ${proc.pid}`])
    }))

  it.scoped("gone with any other verdict that ends a session, such as no_name or spare", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const [a, b] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, a)
      writeLive(world, b)
      const watch = yield* startWatch(world)
      writeLive(world, a, { name: "" })
      writeLive(world, b, { spare: true })
      expect(yield* watch.summaries(window)).toEqual([`gone ${a.pid} no_name`, `gone ${b.pid} spare`])
    }))

  it.scoped("a session that loses its socket is changed, not gone; a spare claimed by a task appears", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const [session, spare] = [world.processes.spawn(), world.processes.spawn()]
      writeLive(world, session)
      writeLive(world, spare, { kind: "bg", spare: true, name: "7d540b66", jobId: "7d540b66" })
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([`appeared ${session.pid}`])
      writeLive(world, session, { messagingSocketPath: undefined })
      writeLive(world, spare, { kind: "bg", name: "7d540b66", jobId: "7d540b66" })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`changed ${session.pid}`, `appeared ${spare.pid}`])
      expect(events[0]).toMatchObject({ session: { socketPath: null, address: null }, previous: { socketPath: `/tmp/cc-socks/${session.pid}.sock` } })
    }))

  it.scoped("gone pid_reused: the pid is taken by another process between two checks, the file untouched", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world)
      world.processes.kill(proc.pid)
      world.processes.reuse(proc.pid)
      expect(yield* watch.summaries(interval)).toEqual([`gone ${proc.pid} pid_reused`])
      expect(yield* watch.summaries(3 * interval)).toEqual([])
    }))

  it.scoped("a pid taken between the probe and a notification's read, same id and startedAt: gone pid_reused, then appeared", () =>
    Effect.gen(function*() {
      // The probe before the read still sees the old process; only the proof of the record read
      // (the new process's start) tells them apart, and the read's session is a copy with its address.
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "same-session", startedAt: 1796007021392, status: "busy" })
      const base = FilesMemory.make(world.files)
      let armed = false
      const files: Files = {
        ...base,
        readBounded: (...args: Parameters<Files["readBounded"]>) =>
          Effect.suspend(() => {
            if (armed) {
              armed = false
              takeOver(world, proc, { sessionId: "same-session", startedAt: 1796007021392, status: "idle" })
            }
            return base.readBounded(...args)
          })
      }
      const watch = yield* startWatch(world, {}, { files })
      expect(watch.start).toEqual([`appeared ${proc.pid}`])
      armed = true
      writeLive(world, proc, { sessionId: "same-session", startedAt: 1796007021392, status: "waiting" })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`gone ${proc.pid} pid_reused`, `appeared ${proc.pid}`])
    }))

  it.scoped("a new process on a reused pid that writes the same session id and startedAt: gone pid_reused, then appeared", () =>
    Effect.gen(function*() {
      // A resumed conversation keeps its id and, as a record may, its startedAt: only the start
      // time that proved each record tells the two processes apart.
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "same-session", startedAt: 1796007021392 })
      const watch = yield* startWatch(world)
      expect(watch.start).toEqual([`appeared ${proc.pid}`])
      takeOver(world, proc, { sessionId: "same-session", startedAt: 1796007021392, status: "idle" })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`gone ${proc.pid} pid_reused`, `appeared ${proc.pid}`])
    }))

  it.scoped("a new process on a reused pid that writes its own record: gone pid_reused, then appeared", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "old-session", startedAt: 1796007021392 })
      const watch = yield* startWatch(world)
      takeOver(world, proc, { sessionId: "new-session", startedAt: 1796009999999 })
      const events = yield* watch.advance(window)
      expect(events.map(summary)).toEqual([`gone ${proc.pid} pid_reused`, `appeared ${proc.pid}`])
      expect(events[0]!.session.sessionId).toBe("old-session")
      expect(events[1]!.session.sessionId).toBe("new-session")
    }))

  it.scoped("the same process in another conversation (a new session id, the same start) is changed", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc, { sessionId: "first" })
      const watch = yield* startWatch(world)
      writeLive(world, proc, { sessionId: "second" })
      const [event, ...rest] = yield* watch.advance(window)
      expect(rest).toEqual([])
      expect(event).toMatchObject({ _tag: "changed", session: { sessionId: "second" }, previous: { sessionId: "first" } })
    }))

  it.scoped("several changes in one check come out sorted by pid", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const [a, b, c] = [4000, 2000, 3000].map((pid) => world.processes.spawn({ pid })) as [Process, Process, Process]
      writeLive(world, a)
      writeLive(world, c)
      const watch = yield* startWatch(world)
      writeLive(world, b)
      world.remove(`${a.pid}.json`)
      writeLive(world, c, { status: "busy" })
      expect(yield* watch.summaries(window)).toEqual(["appeared 2000", "changed 3000", "gone 4000 removed"])
    }))

  describe("a record caught in the middle of a rewrite", () => {
    it.scoped("is read again after 25 ms and is not reported", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        world.files.tearNextReads(`${world.sessions}/${proc.pid}.json`, 17)
        expect(yield* watch.summaries(window)).toEqual([])
        expect(yield* watch.summaries(tornRetry)).toEqual([])
        expect(yield* watch.summaries(3 * interval)).toEqual([])
      }))

    it.scoped("torn on both reads of a check: held as it was, never gone and back", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        world.files.tearNextReads(`${world.sessions}/${proc.pid}.json`, 17, 2)
        const seen = yield* watch.summaries(window + tornRetry)
        seen.push(...yield* watch.summaries(3 * interval))
        expect(seen).toEqual([])
      }))

    it.scoped("torn while it changes: held through the torn read, then one changed, with no gone in between", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        writeLive(world, proc, { status: "busy" })
        world.files.tearNextReads(`${world.sessions}/${proc.pid}.json`, 40, 2)
        // The read at once and its retry 25 ms later are both torn: the session is held as it was.
        expect(yield* watch.summaries(tornRetry)).toEqual([])
        const events = yield* watch.advance(window + interval)
        expect(events.map(summary)).toEqual([`changed ${proc.pid}`])
        expect(events[0]).toMatchObject({ session: { status: "busy" }, previous: { status: "idle" } })
      }))

    it.scoped("a held session still shares its name: a torn rewrite never hands the name to the other one", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const [a, b] = [world.processes.spawn(), world.processes.spawn()]
        writeLive(world, a, { name: "x" })
        writeLive(world, b, { name: "x" })
        const watch = yield* startWatch(world)
        writeLive(world, b, { name: "x", status: "busy" })
        world.files.tearNextReads(`${world.sessions}/${b.pid}.json`, 40, 2)
        const events = yield* watch.advance(tornRetry + window + 3 * interval)
        expect(events.map(summary)).toEqual([`changed ${b.pid}`])
        expect(events[0]).toMatchObject({ session: { status: "busy", address: `uds:/tmp/cc-socks/${b.pid}.sock` } })
      }))

    it.scoped("a held session whose name another session takes meanwhile is addressed by its socket at once", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const [a, b] = [world.processes.spawn(), world.processes.spawn()]
        writeLive(world, a, { name: "x" })
        const watch = yield* startWatch(world)
        writeLive(world, a, { name: "x", status: "busy" })
        world.files.tearNextReads(`${world.sessions}/${a.pid}.json`, 40, 2)
        writeLive(world, b, { name: "x" })
        // Before the interval's whole read: a is held, b appears, and a's name is no longer its alone.
        const events = yield* watch.advance(window + tornRetry + window)
        expect(events.map(summary)).toEqual([`changed ${a.pid}`, `appeared ${b.pid}`])
        expect(events[0]).toMatchObject({
          session: { status: "idle", address: `uds:/tmp/cc-socks/${a.pid}.sock` },
          previous: { address: "x" }
        })
        expect(events[1]).toMatchObject({ session: { address: `uds:/tmp/cc-socks/${b.pid}.sock` } })
      }))

    it.scoped("the same on a whole read: a session held there still shares its name", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const [a, b, c] = [world.processes.spawn(), world.processes.spawn(), world.processes.spawn()]
        writeLive(world, a, { name: "x" })
        writeLive(world, b, { name: "x" })
        writeLive(world, c, { name: "other" })
        const watch = yield* startWatch(world)
        // No file changes: stopping c makes the interval's probe read the whole registry, which finds b torn.
        world.files.tearNextReads(`${world.sessions}/${b.pid}.json`, 40, 2)
        world.processes.stop(c.pid)
        const events = yield* watch.advance(interval + tornRetry)
        expect(events.map(summary)).toEqual([`changed ${c.pid}`])
        expect(yield* watch.summaries(3 * interval)).toEqual([])
      }))

    it.scoped("torn on the read at once, whole on its retry: one changed, nothing held", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        writeLive(world, proc, { status: "busy" })
        world.files.tearNextReads(`${world.sessions}/${proc.pid}.json`, 40)
        expect(yield* watch.summaries(tornRetry - 1)).toEqual([])
        expect(yield* watch.summaries(1)).toEqual([`changed ${proc.pid}`])
        expect(yield* watch.summaries(3 * interval)).toEqual([])
      }))

    it.scoped("a torn record of a dead pid is not read again: a change beside it is reported at once", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const dead = world.processes.spawn()
        world.processes.kill(dead.pid)
        world.write(`${dead.pid}.json`, "{\"pid\":")
        const watch = yield* startWatch(world)
        const proc = world.processes.spawn()
        writeLive(world, proc)
        // With a retry of the dead pid's file, this read would end only after the retry's pause.
        expect(yield* watch.summaries(0)).toEqual([`appeared ${proc.pid}`])
      }))

    it.scoped("a record that stays malformed is gone (malformed) at the second check, not the first", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        world.write(`${proc.pid}.json`, "{\"pid\":")
        expect(yield* watch.summaries(window + tornRetry)).toEqual([])
        expect(yield* watch.summaries(interval)).toEqual([`gone ${proc.pid} malformed`])
      }))

    it.scoped("a record that stays unreadable is gone (unreadable) at the second check", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        world.files.setUnreadable(`${world.sessions}/${proc.pid}.json`)
        expect(yield* watch.summaries(window)).toEqual([])
        expect(yield* watch.summaries(interval)).toEqual([`gone ${proc.pid} unreadable`])
      }))
  })

  describe("the registry directory", () => {
    it.scoped("created late: waited for, then watched", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        world.files.remove(world.sessions)
        const watch = yield* startWatch(world)
        expect(watch.start).toEqual([])
        expect(yield* watch.summaries(3 * interval)).toEqual([])

        const proc = world.processes.spawn()
        writeLive(world, proc)
        expect(yield* watch.summaries(directoryPollMillis + window)).toEqual([`appeared ${proc.pid}`])
        // From now on a change is seen within a window, not at the next interval: the watch is on.
        writeLive(world, proc, { status: "busy" })
        expect(yield* watch.summaries(window)).toEqual([`changed ${proc.pid}`])
      }))

    it.scoped("removed: its sessions are gone (removed); re-created: found at the next look and watched again", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const [a, b] = [world.processes.spawn(), world.processes.spawn()]
        writeLive(world, a)
        writeLive(world, b)
        const watch = yield* startWatch(world)
        expect(watch.start).toEqual([`appeared ${a.pid}`, `appeared ${b.pid}`])

        expect(yield* watch.summaries(1900 - window)).toEqual([])
        world.files.remove(world.sessions)
        expect(yield* watch.summaries(window)).toEqual([`gone ${a.pid} removed`, `gone ${b.pid} removed`])
        expect(yield* watch.summaries(4050 - 1900 - window)).toEqual([])

        world.files.makeDirectory(world.sessions, 0o700)
        writeLive(world, b)
        // Looked for every 200 ms while absent: found, watched, and read one window later, long
        // before the next interval's check (6000 ms), and within the contract's 500 ms.
        expect(yield* watch.summaries(directoryPollMillis + window)).toEqual([`appeared ${b.pid}`])
        writeLive(world, b, { status: "busy" })
        expect(yield* watch.summaries(window)).toEqual([`changed ${b.pid}`])
        world.remove(`${b.pid}.json`)
        expect(yield* watch.summaries(window)).toEqual([`gone ${b.pid} removed`])
      }))

    it.scoped("removed between the first read and the directory watch: its sessions are gone at once, not at the full read", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const events = yield* Queue.unbounded<SessionEvent>()
        yield* watchSessions({ onFirstRead: () => Effect.sync(() => world.files.remove(world.sessions)) }).pipe(
          Stream.runForEach((event) => Queue.offer(events, event)),
          Effect.provide(layerOf(world, {})),
          Effect.forkScoped
        )
        yield* TestClock.adjust(2 * window)
        expect(Chunk.toArray(yield* Queue.takeAll(events)).map(summary)).toEqual([`appeared ${proc.pid}`, `gone ${proc.pid} removed`])
      }))

    it.scoped("removed and re-created at once, between two notifications: the sessions read again are still live", () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const proc = world.processes.spawn()
        writeLive(world, proc)
        const watch = yield* startWatch(world)
        world.files.remove(world.sessions)
        world.files.makeDirectory(world.sessions, 0o700)
        writeLive(world, proc)
        expect(yield* watch.summaries(interval + window)).toEqual([])
        writeLive(world, proc, { status: "busy" })
        expect(yield* watch.summaries(window)).toEqual([`changed ${proc.pid}`])
      }))
  })

  it.scoped("the interval is an option", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      const watch = yield* startWatch(world, { intervalMillis: 200 })
      world.processes.kill(proc.pid)
      expect(yield* watch.summaries(200 - startMillis - 1)).toEqual([])
      expect(yield* watch.summaries(1)).toEqual([`gone ${proc.pid} dead`])
    }))

  // TestClock keeps an interrupted sleep in its list, so the timers are checked on the real OS
  // (Watch.integration.test.ts); here, the directory watch.
  it.scoped("the directory watch is released when the stream's scope closes", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      writeLive(world, proc)
      let openWatches = 0
      const port = FilesMemory.make(world.files)
      const counted: Files = {
        ...port,
        watch: (path) =>
          Stream.acquireRelease(Effect.sync(() => openWatches++), () => Effect.sync(() => openWatches--)).pipe(
            Stream.flatMap(() => port.watch(path))
          )
      }
      const watch = yield* startWatch(world, {}, { files: counted })
      yield* watch.summaries(window)
      expect(openWatches).toBe(1)
      yield* Fiber.interrupt(watch.fiber)
      expect(openWatches).toBe(0)

      // A consumer that stops reading closes the stream's scope just the same.
      const first = yield* watchSessions().pipe(Stream.take(1), Stream.runCollect, Effect.provide(layerOf(world, { files: counted })))
      expect(Chunk.toArray(first).map(summary)).toEqual([`appeared ${proc.pid}`])
      expect(openWatches).toBe(0)
    }))

  it.scoped("a bad interval is a defect, not a busy loop", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const exit = yield* watchSessions({ intervalMillis: 0 }).pipe(Stream.runDrain, Effect.provide(layerOf(world)), Effect.exit)
      expect(exit._tag).toBe("Failure")
    }))
})

describe("watch when the system refuses change notifications", () => {
  const refusals = (code: "EMFILE" | "ENOSPC") =>
    it.scoped(`${code}: it says so once and reads the registry every interval, for as long as it runs`, () =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const first = world.processes.spawn()
        writeLive(world, first)
        world.files.refuseWatches(code)
        const said: Array<Watch.NotificationsRefused> = []
        const watch = yield* startWatch(world, { onNotificationsRefused: (refusal) => Effect.sync(() => said.push(refusal)) })
        expect(watch.start).toEqual([`appeared ${first.pid}`])
        expect(said.map((refusal) => [refusal.directory, Duration.toMillis(refusal.interval)])).toEqual([[world.sessions, interval]])
        expect(said[0]!.error._tag === "SystemError" && said[0]!.error.description).toMatch(new RegExp(`^${code}`))

        // Without notifications a new record waits for the next read, one interval at most.
        const second = world.processes.spawn()
        writeLive(world, second)
        expect(yield* watch.summaries(window)).toEqual([])
        expect(yield* watch.summaries(interval)).toEqual([`appeared ${second.pid}`])
        writeLive(world, second, { status: "busy" })
        world.remove(`${first.pid}.json`)
        expect(yield* watch.summaries(interval + window)).toEqual([`gone ${first.pid} removed`, `changed ${second.pid}`])
        // Lifting the limit later changes nothing: the watch said what it does, and does it.
        world.files.refuseWatches(undefined)
        world.processes.kill(second.pid)
        expect(yield* watch.summaries(interval + window)).toEqual([`gone ${second.pid} dead`])
        expect(said).toHaveLength(1)
        expect(watch.fiber.unsafePoll()).toBe(null)
      }))
  refusals("EMFILE")
  refusals("ENOSPC")

  it.scoped("a registry directory that appears late is read every interval once its notifications are refused", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      world.files.remove(world.sessions)
      world.files.refuseWatches("EMFILE")
      let said = 0
      const watch = yield* startWatch(world, { onNotificationsRefused: () => Effect.sync(() => void said++) })
      expect(said).toBe(0)
      const proc = world.processes.spawn()
      writeLive(world, proc)
      expect(yield* watch.summaries(directoryPollMillis + window)).toEqual([`appeared ${proc.pid}`])
      expect(said).toBe(1)
      world.processes.kill(proc.pid)
      expect(yield* watch.summaries(interval + window)).toEqual([`gone ${proc.pid} dead`])
      expect(said).toBe(1)
    }))
})
