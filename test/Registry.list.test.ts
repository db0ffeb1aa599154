/**
 * What `list` costs, in operations rather than time: it opens no file whose pid is dead (such a
 * record cannot be live), signals each pid once, and reads start times only for the records that
 * passed every other check, while returning exactly the live sessions `inspect` finds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as FilesMemory from "../src/layers/FilesMemory.js"
import { makeMemoryWorld } from "../src/layers/Memory.js"
import * as ProcessProbeMemory from "../src/layers/ProcessProbeMemory.js"
import * as ClaudeHome from "../src/services/ClaudeHome.js"
import { Files } from "../src/services/Files.js"
import { ProcessProbe } from "../src/services/ProcessProbe.js"
import * as Registry from "../src/services/Registry.js"
import { recordText } from "./support/records.js"

describe("Registry.list on a mostly stale registry", () => {
  const world = makeMemoryWorld()
  const { home, processes, tree: files } = world
  const write = (name: string, text: string) => files.writeFile(`${home.sessionsDirectory}/${name}`, text)
  const live = processes.spawn()
  const reused = processes.spawn()
  const aliveBadRecord = processes.spawn()
  write(`${live.pid}.json`, recordText(live.pid, { procStart: live.startTime }))
  write(`${reused.pid}.json`, recordText(reused.pid, { procStart: `${reused.startTime}0` }))
  write(`${aliveBadRecord.pid}.json`, recordText(aliveBadRecord.pid, { name: "" }))
  const deadPids = [900001, 900002, 900003, 900004]
  for (const pid of deadPids) write(`${pid}.json`, recordText(pid, { procStart: "1" }))
  write("foo.json", "{}")

  const reads: Array<string> = []
  const countingFiles = Layer.effect(
    Files,
    Effect.map(Files, (inner) => ({
      ...inner,
      readBounded: (path: string, options: { readonly maxBytes: number; readonly followLinks: boolean }) => {
        reads.push(path.slice(path.lastIndexOf("/") + 1))
        return inner.readBounded(path, options)
      }
    }))
  ).pipe(Layer.provide(FilesMemory.layer(files)))
  const layer = Registry.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(countingFiles, ProcessProbeMemory.layer(processes), Layer.succeed(ClaudeHome.ClaudeHome, home)))
  )

  it.effect("reads only the files of live pids, one kill per pid, start times only for records that passed", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.Registry
      reads.length = 0
      const before = processes.stats
      const sessions = yield* registry.list
      expect(sessions.map((s) => s.pid)).toEqual([live.pid])
      expect(reads.sort()).toEqual([`${live.pid}.json`, `${reused.pid}.json`, `${aliveBadRecord.pid}.json`].sort())
      expect(processes.stats.kills - before.kills).toBe(3 + deadPids.length)
      expect(processes.stats.startTimeReads - before.startTimeReads).toBe(2)
    }).pipe(Effect.provide(layer)))

  it.effect("agrees with inspect, which reads every record", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.Registry
      reads.length = 0
      const entries = yield* registry.inspect
      expect(reads.length).toBe(3 + deadPids.length)
      const liveInInspect = entries.flatMap((e) => (e.verdict._tag === "live" ? [e.verdict.session] : []))
      expect(yield* registry.list).toEqual(liveInInspect)
      expect(entries.find((e) => e.pid === reused.pid)?.verdict._tag).toBe("pid_reused")
      expect(entries.find((e) => e.pid === deadPids[0])?.verdict._tag).toBe("dead")
    }).pipe(Effect.provide(layer)))
})

describe("this machine's pid domain", () => {
  const world = makeMemoryWorld()
  const { home, processes, tree: files } = world
  const write = (name: string, text: string) => files.writeFile(`${home.sessionsDirectory}/${name}`, text)
  const live = processes.spawn()
  const other = processes.spawn()
  write(`${live.pid}.json`, recordText(live.pid, { procStart: live.startTime }))
  write("900001.json", recordText(900001))

  let domainReads = 0
  const countingProbe = Layer.effect(
    ProcessProbe,
    Effect.map(ProcessProbe, (inner) => ({
      ...inner,
      pidDomain: Effect.suspend(() => {
        domainReads += 1
        return inner.pidDomain
      })
    }))
  ).pipe(Layer.provide(ProcessProbeMemory.layer(processes)))
  const layer = Registry.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(FilesMemory.layer(files), countingProbe, Layer.succeed(ClaudeHome.ClaudeHome, home)))
  )

  it.effect("is read only when some record names a pid domain, and then decides", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.Registry
      domainReads = 0
      expect((yield* registry.list).map((s) => s.pid)).toEqual([live.pid])
      expect((yield* registry.inspect).map((e) => e.verdict._tag).sort()).toEqual(["dead", "live"])
      expect(domainReads).toBe(0)

      // A record naming another domain is refused, which only this machine's domain can tell.
      write(`${other.pid}.json`, recordText(other.pid, { pidDomain: "linux:another-machine:pid:[1]" }))
      expect((yield* registry.list).map((s) => s.pid)).toEqual([live.pid])
      const verdicts = (yield* registry.inspect).map((e) => [e.pid, e.verdict._tag])
      expect(verdicts).toContainEqual([other.pid, "other_pid_domain"])
      expect(domainReads).toBe(2)
    }).pipe(Effect.provide(layer)))
})
