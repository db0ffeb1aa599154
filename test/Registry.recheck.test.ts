/**
 * `Registry.recheck`: the given sessions that are still the same live records, each one's file read
 * again and no other; `Registry.confirm`: those whose processes are still the ones their records
 * named, asking the processes alone (in-memory layers); and `Policy.list`, which reads the registry
 * once and then asks only its sessions' processes again.
 */
import type { PlatformError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Session } from "../src/domain/Session.js"
import { layerMemory, makeMemoryWorld, type MemoryOptions } from "../src/layers/Memory.js"
import { Policy } from "../src/services/Policy.js"
import { Registry } from "../src/services/Registry.js"
import { recordText } from "./support/records.js"

/** A memory world; `options` are its layer's (`claudeHomes`). */
const worldOf = (options: MemoryOptions = {}) => {
  const world = makeMemoryWorld()
  const fileOf = (pid: number, sessions = world.home.sessionsDirectory) => `${sessions}/${pid}.json`
  world.tree.makeDirectory(world.home.sessionsDirectory)
  /** A live process and its record (in `sessions`, by default the world's home's), with `fields` besides. */
  const live = (fields: Record<string, unknown> = {}, sessions = world.home.sessionsDirectory) => {
    const proc = world.processes.spawn()
    world.tree.writeFile(fileOf(proc.pid, sessions), recordText(proc.pid, { procStart: proc.startTime, ...fields }))
    return proc.pid
  }
  /** A record of a pid no process has. */
  const stale = (pid: number) => world.tree.writeFile(fileOf(pid), recordText(pid))
  /** Every path read through the port from now on, in order. */
  const reads = () => {
    const seen: Array<string> = []
    const hook = (path: string) => {
      seen.push(path)
      world.tree.onAfterRead(hook)
    }
    world.tree.onAfterRead(hook)
    return seen
  }
  const run = <A, E>(effect: Effect.Effect<A, E, Registry | Policy>) => Effect.provide(effect, layerMemory(world, { ...options, timing: { tornReadRetry: 0 } }))
  const list = run(Effect.flatMap(Registry, (r) => r.list))
  const recheck = (sessions: ReadonlyArray<Session>) => run(Effect.flatMap(Registry, (r) => r.recheck(sessions)))
  return { world, fileOf, live, stale, reads, run, list, recheck }
}

describe("Registry.recheck", () => {
  it.effect("gives back the unchanged sessions as they are, reading their records and no other", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pids = [w.live(), w.live(), w.live()]
      for (let i = 0; i < 20; i++) w.stale(900_000 + i)
      const sessions = yield* w.list
      expect(sessions.map((s) => s.pid)).toEqual(pids)
      const seen = w.reads()
      const kills = w.world.processes.stats.kills
      expect(yield* w.recheck(sessions)).toEqual(sessions.map((s) => ({ ...s, address: `uds:${s.socketPath}` })))
      expect([...seen].sort()).toEqual(pids.map((pid) => w.fileOf(pid)).sort())
      // Only the given sessions' pids are asked about, not the stale records' ones.
      expect(w.world.processes.stats.kills - kills).toBeLessThanOrEqual(2 * pids.length)
    }))

  it.effect("leaves out a session whose process ended, whose pid was reused, whose record went or names another session", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [ended, reused, removed, renewed, kept] = [w.live(), w.live(), w.live(), w.live(), w.live()]
      const sessions = yield* w.list
      expect(sessions).toHaveLength(5)
      w.world.processes.kill(ended!)
      w.world.processes.reuse(reused!)
      w.world.tree.remove(w.fileOf(removed!))
      // The same process's record, now of another session (`/clear`).
      w.world.tree.writeFile(
        w.fileOf(renewed!),
        recordText(renewed!, { procStart: w.world.processes.startTimeOf(renewed!), sessionId: "00000000-0000-4000-8000-0000000000ff" })
      )
      expect((yield* w.recheck(sessions)).map((s) => s.pid)).toEqual([kept])
    }))

  it.effect("a session comes as its record says now, addressed by its socket: only a full read can tell a name is unique", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pid = w.live({ name: "alpha", status: "idle" })
      const [before] = yield* w.list
      expect(before!.address).toBe("alpha")
      w.world.tree.writeFile(w.fileOf(pid), recordText(pid, { procStart: w.world.processes.startTimeOf(pid), name: "alpha", status: "busy" }))
      // A twin started since the list: a name kept from the list would now reach two sessions.
      w.live({ name: "alpha" })
      const [now] = yield* w.recheck([before!])
      expect([now!.status, now!.address]).toEqual(["busy", `uds:${before!.socketPath}`])
      expect((yield* w.list).map((s) => s.address)).not.toContain("alpha")
    }))

  it.effect("a session without a socket keeps its null address; a session given twice comes once", () =>
    Effect.gen(function*() {
      const w = worldOf()
      w.live({ messagingSocketPath: undefined })
      w.live()
      const sessions = yield* w.list
      expect(sessions.map((s) => s.address === null)).toEqual([true, false])
      const again = yield* w.recheck([...sessions, ...sessions])
      expect(again.map((s) => [s.pid, s.address])).toEqual([[sessions[0]!.pid, null], [sessions[1]!.pid, `uds:${sessions[1]!.socketPath}`]])
    }))

  it.effect("over one home, a session whose record is elsewhere is left out, and no file of the home read for it", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [inside, other] = [w.live(), w.live()]
      const sessions = yield* w.list
      // Named as a record of the home is named, but elsewhere: the home's file of that name is not its.
      const stranger = { ...sessions.find((s) => s.pid === other)!, file: w.fileOf(other!, "/elsewhere/sessions") }
      const seen = w.reads()
      expect((yield* w.recheck([sessions.find((s) => s.pid === inside)!, stranger])).map((s) => s.pid)).toEqual([inside])
      expect(seen).toEqual([w.fileOf(inside!)])
    }))

  it.effect("over several homes, each session is read again in its own home and keeps its home", () =>
    Effect.gen(function*() {
      const second = "/home/user/second-home"
      const w = worldOf({ claudeHomes: [second] })
      w.world.tree.makeDirectory(`${second}/sessions`)
      const here = w.live()
      const there = w.live({}, `${second}/sessions`)
      const sessions = yield* w.list
      expect(sessions.map((s) => [s.pid, s.home])).toEqual([[here, w.world.home.root], [there, second]])
      const seen = w.reads()
      const again = yield* w.recheck(sessions)
      expect(again.map((s) => [s.pid, s.home, s.address])).toEqual(sessions.map((s) => [s.pid, s.home, `uds:${s.socketPath}`]))
      expect([...seen].sort()).toEqual([w.fileOf(here), w.fileOf(there, `${second}/sessions`)].sort())
    }))
})

describe("Registry.confirm", () => {
  /** `body` with the one registry that lists and confirms: what proved a session is its list's. */
  const withRegistry = <A>(w: ReturnType<typeof worldOf>, body: (registry: Registry) => Effect.Effect<A, PlatformError>) =>
    w.run(Effect.flatMap(Registry, body))

  it.effect("gives back the listed sessions as they are, reading no file, asking only their pids", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pids = [w.live(), w.live(), w.live()]
      for (let i = 0; i < 20; i++) w.stale(900_000 + i)
      yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions.map((s) => s.pid)).toEqual(pids)
          const seen = w.reads()
          const [kills, startTimes] = [w.world.processes.stats.kills, w.world.processes.stats.startTimeReads]
          expect(yield* registry.confirm([...sessions].reverse())).toEqual(sessions)
          expect(seen).toEqual([])
          expect(w.world.processes.stats.kills - kills).toBeLessThanOrEqual(pids.length)
          expect(w.world.processes.stats.startTimeReads - startTimes).toBe(pids.length)
        }))
    }))

  it.effect("leaves out a session whose process ended or whose pid another process holds now", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [ended, reused, kept] = [w.live(), w.live(), w.live()]
      const confirmed = yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions).toHaveLength(3)
          w.world.processes.kill(ended!)
          w.world.processes.reuse(reused!)
          return yield* registry.confirm(sessions)
        }))
      expect(confirmed.map((s) => s.pid)).toEqual([kept])
    }))

  it.effect("a record without a start time proves no process: its file is read again, as recheck reads it", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const proc = w.world.processes.spawn()
      w.world.tree.writeFile(w.fileOf(proc.pid), recordText(proc.pid))
      const proven = w.live()
      yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions.map((s) => s.pid)).toEqual([proc.pid, proven])
          const seen = w.reads()
          // The rechecked one as recheck gives it (its socket for an address), the proven one as listed.
          expect(yield* registry.confirm(sessions)).toEqual([{ ...sessions[0]!, address: `uds:${sessions[0]!.socketPath}` }, sessions[1]])
          expect(seen).toEqual([w.fileOf(proc.pid)])
          // Read again, its record is gone: left out.
          w.world.tree.remove(w.fileOf(proc.pid))
          expect((yield* registry.confirm(sessions)).map((s) => s.pid)).toEqual([proven])
        }))
    }))

  it.effect("another user's session without a socket is confirmed by its process alone", () =>
    Effect.gen(function*() {
      const w = worldOf()
      // Root's session, in a home root owns, read by this world's user: it runs as another user.
      const proc = w.world.processes.spawn({ uid: 0 })
      w.world.tree.writeFile(w.fileOf(proc.pid), recordText(proc.pid, { procStart: proc.startTime, messagingSocketPath: undefined }))
      for (const at of [w.world.home.root, w.world.home.sessionsDirectory]) w.world.tree.chmod(at, 0o755)
      for (const at of [w.world.home.root, w.world.home.sessionsDirectory, w.fileOf(proc.pid)]) w.world.tree.chown(at, 0, 0)
      yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions.map((s) => [s.pid, s.unaddressable])).toEqual([[proc.pid, "no_socket"]])
          const seen = w.reads()
          expect(yield* registry.confirm(sessions)).toEqual(sessions)
          expect(seen).toEqual([])
        }))
    }))

  it.effect("a process now another user's is rechecked, read again and judged as a scan judges it; one whose start time cannot be read is left out", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [switched, unreadable, kept] = [w.live(), w.live(), w.live()]
      yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions).toHaveLength(3)
          // The same start time, now another user's: a record this user wrote names someone else's process.
          w.world.processes.reuse(switched!, w.world.processes.startTimeOf(switched!), 0)
          w.world.processes.setStartTimeUnreadable(unreadable!)
          const seen = w.reads()
          const confirmed = yield* registry.confirm(sessions)
          // Proven by a start time that cannot be read now: nothing shows it is still that process
          // (a scan, which has none to compare, would let it pass).
          expect(confirmed.map((s) => s.pid)).toEqual([kept])
          expect(seen).toEqual([w.fileOf(switched!)])
          expect((yield* registry.recheck(sessions)).map((s) => s.pid)).toEqual([unreadable, kept])
        }))
    }))

  it.effect("a session another registry listed is read again", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pid = w.live()
      const sessions = yield* w.list
      const seen = w.reads()
      const confirmed = yield* withRegistry(w, (registry) => registry.confirm(sessions))
      expect(confirmed.map((s) => s.pid)).toEqual([pid])
      expect(seen).toEqual([w.fileOf(pid)])
    }))

  it.effect("over several homes, a listed session is confirmed with its home", () =>
    Effect.gen(function*() {
      const second = "/home/user/second-home"
      const w = worldOf({ claudeHomes: [second] })
      w.world.tree.makeDirectory(`${second}/sessions`)
      w.live()
      const there = w.live({}, `${second}/sessions`)
      yield* withRegistry(w, (registry) =>
        Effect.gen(function*() {
          const sessions = yield* registry.list
          expect(sessions.map((s) => s.home)).toEqual([w.world.home.root, second])
          const seen = w.reads()
          expect(yield* registry.confirm(sessions)).toEqual(sessions)
          expect(seen).toEqual([])
          w.world.processes.reuse(there)
          expect((yield* registry.confirm(sessions)).map((s) => s.home)).toEqual([w.world.home.root])
        }))
    }))
})

describe("Policy.list reads the registry once, then asks only its sessions' processes again", () => {
  it.effect("a session whose pid another process took while its evidence was read has no policy", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [reused, kept] = [w.live(), w.live()]
      w.world.processes.onNextEvidence(reused, () => w.world.processes.reuse(reused))
      const policies = yield* w.run(Effect.flatMap(Policy, (p) => p.list))
      expect(policies.map((p) => p.pid)).toEqual([kept])
    }))

  it.effect("nor one whose pid another process took, whose start time cannot be read, while its evidence was read", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const [reused, kept] = [w.live(), w.live()]
      w.world.processes.onNextEvidence(reused, () => {
        w.world.processes.reuse(reused)
        w.world.processes.setStartTimeUnreadable(reused)
      })
      const policies = yield* w.run(Effect.flatMap(Policy, (p) => p.list))
      expect(policies.map((p) => p.pid)).toEqual([kept])
    }))

  it.effect("on a stale registry, no stale record is read, and each live session's record once", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const pids = [w.live(), w.live()]
      // Records of live pids that are not sessions of this home's: read once by the scan, not again.
      const mismatched = w.world.processes.spawn().pid
      w.world.tree.writeFile(w.fileOf(mismatched), recordText(mismatched + 1))
      for (let i = 0; i < 20; i++) w.stale(900_000 + i)
      const seen = w.reads()
      const policies = yield* w.run(Effect.flatMap(Policy, (p) => p.list))
      expect(policies.map((p) => p.pid)).toEqual(pids)
      const records = seen.filter((file) => file.startsWith(`${w.world.home.sessionsDirectory}/`))
      expect(records.filter((file) => file === w.fileOf(mismatched))).toHaveLength(1)
      expect([...records].sort()).toEqual([...pids, mismatched].map((pid) => w.fileOf(pid)).sort())
    }))
})
