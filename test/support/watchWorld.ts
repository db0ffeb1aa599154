/**
 * A memory world for `watch` and `wait` tests, on `TestClock`: the world, the services over it, and
 * a watch run in the test's scope whose events each `advance` of the clock returns.
 */
import { Chunk, Duration, Effect, Layer, Queue, Stream, TestClock } from "effect"
import type { SessionEvent } from "../../src/domain/SessionEvent.js"
import * as FilesMemory from "../../src/layers/FilesMemory.js"
import * as ProcessProbeMemory from "../../src/layers/ProcessProbeMemory.js"
import * as ClaudeHome from "../../src/services/ClaudeHome.js"
import { Files } from "../../src/services/Files.js"
import * as Registry from "../../src/services/Registry.js"
import { defaults } from "../../src/services/Timing.js"
import * as Watch from "../../src/services/Watch.js"
import { type RecordOptions, recordText } from "./records.js"
import { makeMemoryRegistry, type Process } from "./worlds.js"

export const makeWatchWorld = () => {
  const world = makeMemoryRegistry()
  return { ...world, files: world.world.tree, processes: world.world.processes }
}
export type WatchWorld = ReturnType<typeof makeWatchWorld>

export const interval = Duration.toMillis(defaults.watchInterval)
export const window = Duration.toMillis(defaults.watchWindow)
export const startMillis = 2 * window

/** A record that is live in this world while `proc` runs. */
export const writeLive = (world: WatchWorld, proc: Process, options: RecordOptions = {}) =>
  world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, pidDomain: world.pidDomain, ...options }))

export const summary = (event: SessionEvent): string =>
  event._tag === "gone" ? `gone ${event.session.pid} ${event.verdict}` : `${event._tag} ${event.session.pid}`

export interface Doubles {
  readonly files?: Files
  /** Called for every whole read of the registry. */
  readonly onRead?: () => void
}

/** Watch and Registry over the world's ports. */
export const layerOf = (world: WatchWorld, doubles: Doubles = {}) => {
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
      ProcessProbeMemory.layer(world.processes),
      ClaudeHome.layer(world.home)
    ))
  )
}

/** The watch in the test's scope; `advance(ms)` moves the clock and returns the events meanwhile. */
export const startWatch = (world: WatchWorld, doubles: Doubles = {}) =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<SessionEvent>()
    const fiber = yield* Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions())).pipe(
      Stream.runForEach((event) => Queue.offer(events, event)),
      Effect.provide(layerOf(world, doubles)),
      Effect.forkScoped
    )
    const advance = (millis: number) => TestClock.adjust(millis).pipe(Effect.zipRight(Queue.takeAll(events)), Effect.map(Chunk.toArray))
    const summaries = (millis: number) => Effect.map(advance(millis), (all) => all.map(summary))
    const startEvents = yield* advance(startMillis)
    return { fiber, advance, summaries, startEvents, start: startEvents.map(summary) }
  })

/** A file port that counts the reads of each file. */
export const countingReads = (world: WatchWorld) => {
  const port = FilesMemory.make(world.files)
  const reads = new Map<string, number>()
  const files: Files = {
    ...port,
    readBounded: (path, options) => Effect.zipRight(Effect.sync(() => reads.set(path, (reads.get(path) ?? 0) + 1)), port.readBounded(path, options))
  }
  return { files, reads, total: () => [...reads.values()].reduce((a, b) => a + b, 0) }
}
