/**
 * The scan reads and judges a registry a batch at a time (`RegistryScan.ts`), and asks what some
 * verdicts need of the machine (its pid domain, the home's owner) once, on the first record that
 * needs it. These hold the verdicts of records that need it only after the first batch, or only on
 * the second read of a record caught mid-rewrite (in-memory layers).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { RegistryEntry } from "../src/domain/Verdict.js"
import { layerMemory, makeMemoryWorld, type MemoryWorldOptions } from "../src/layers/Memory.js"
import * as Registry from "../src/services/Registry.js"
import { scanBatchSize } from "../src/services/ScanBatches.js"
import { recordText } from "./support/records.js"

const here = "linux:memory:pid:[1]"
const elsewhere = "linux:elsewhere:pid:[9]"
const alice = 2000

const worldOf = (options: MemoryWorldOptions = {}) => {
  const world = makeMemoryWorld(options)
  const sessions = world.home.sessionsDirectory
  world.tree.makeDirectory(sessions)
  const fileOf = (pid: number) => `${sessions}/${pid}.json`
  /** A live process and its record, owned by `owner`; the record names `fields` besides. */
  const live = (owner: number, fields: Record<string, unknown> = {}) => {
    const proc = world.processes.spawn({ uid: owner })
    world.tree.writeFile(fileOf(proc.pid), recordText(proc.pid, { procStart: proc.startTime, ...fields }))
    world.tree.chown(fileOf(proc.pid), owner, owner)
    return proc.pid
  }
  const inspect = Effect.provide(
    Effect.flatMap(Registry.Registry, (r) => r.inspect),
    layerMemory(world, { timing: { tornReadRetry: 0 } })
  )
  const verdictOf = (entries: ReadonlyArray<RegistryEntry>, pid: number) => entries.find((e) => e.pid === pid)?.verdict
  return { world, fileOf, live, inspect, verdictOf }
}

/** More records than one batch holds, each of `owner`, before the one a test is about. */
const fillFirstBatch = (live: (owner: number, fields?: Record<string, unknown>) => number, owner: number) => {
  const pids = Array.from({ length: scanBatchSize }, () => live(owner))
  expect(pids.length).toBeGreaterThanOrEqual(scanBatchSize)
  return pids
}

describe("verdicts that need the machine, after the first batch", () => {
  it.effect("a record of another pid domain is other_pid_domain when no record before it named one", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const before = fillFirstBatch(w.live, 1000)
      // Its pid has a process here, so only the domain keeps it from being live.
      const other = w.live(1000, { pidDomain: elsewhere })
      const same = w.live(1000, { pidDomain: here })
      const entries = yield* w.inspect
      expect(Math.max(...before)).toBeLessThan(other)
      expect(w.verdictOf(entries, other)).toEqual({ _tag: "other_pid_domain", pidDomain: elsewhere, here })
      expect(w.verdictOf(entries, same)?._tag).toBe("live")
      expect(entries.filter((e) => e.verdict._tag === "live")).toHaveLength(before.length + 1)
    }))

  it.effect("root reading a user's home: the owner's record after a batch of root's is live, a third user's is foreign_owner", () =>
    Effect.gen(function*() {
      const w = worldOf({ user: { uid: 0, gid: 0 } })
      for (const dir of ["/home/user", "/home/user/.claude"]) w.world.tree.chown(dir, 1000, 1000)
      fillFirstBatch(w.live, 0)
      const owners = w.live(1000)
      const third = w.live(alice)
      const entries = yield* w.inspect
      expect(w.verdictOf(entries, owners)?._tag).toBe("live")
      expect(w.verdictOf(entries, third)).toEqual({ _tag: "foreign_owner", owner: alice, reader: 0, homeOwner: 1000 })
    }))
})

describe("a record caught mid-rewrite, judged on its second read", () => {
  /** `pid`'s record reads torn once, and is rewritten by `rewrite` right after that first read. */
  const tornThen = (w: ReturnType<typeof worldOf>, pid: number, rewrite: () => void) => {
    w.world.tree.tearNextReads(w.fileOf(pid), 10, 1)
    let first = true
    const hook = (path: string) => {
      if (path !== w.fileOf(pid)) return w.world.tree.onAfterRead(hook)
      if (first) {
        first = false
        rewrite()
      }
    }
    w.world.tree.onAfterRead(hook)
  }

  it.effect("whole again, of another pid domain (the only record naming one): other_pid_domain", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pid = w.live(1000)
      tornThen(w, pid, () => w.world.tree.writeFile(w.fileOf(pid), recordText(pid, { procStart: w.world.processes.startTimeOf(pid), pidDomain: elsewhere })))
      expect(w.verdictOf(yield* w.inspect, pid)).toEqual({ _tag: "other_pid_domain", pidDomain: elsewhere, here })
    }))

  it.effect("whole again, but another user's file now: foreign_owner with the home's owner", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pid = w.live(1000)
      tornThen(w, pid, () => w.world.tree.chown(w.fileOf(pid), alice, alice))
      expect(w.verdictOf(yield* w.inspect, pid)).toEqual({ _tag: "foreign_owner", owner: alice, reader: 1000, homeOwner: 1000 })
    }))

  it.effect("gone before the second read: unreadable; still torn: malformed; whole: live", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const vanished = w.live(1000)
      const torn = w.live(1000)
      const whole = w.live(1000)
      tornThen(w, vanished, () => w.world.tree.remove(w.fileOf(vanished)))
      w.world.tree.tearNextReads(w.fileOf(torn), 10, 2)
      w.world.tree.tearNextReads(w.fileOf(whole), 10, 1)
      const entries = yield* w.inspect
      expect(w.verdictOf(entries, vanished)).toEqual({ _tag: "unreadable", reason: "it vanished during the scan" })
      expect(w.verdictOf(entries, torn)?._tag).toBe("malformed")
      expect(w.verdictOf(entries, whole)?._tag).toBe("live")
      expect(entries.map((e) => e.file)).toEqual([w.fileOf(vanished), w.fileOf(torn), w.fileOf(whole)].sort())
    }))
})
