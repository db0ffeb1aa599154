/**
 * Whose sessions a reader sees, and what it can do with them, on the memory world: another user's
 * live session (listed, no address, refused by `resolve`), a pid that another user's process took
 * over (hidden or not), a record another user wrote into the reader's home, stopped sessions, and
 * names Claude Code would read as another address.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream, TestClock } from "effect"
import * as fc from "fast-check"
import { addressOf, parsedAsAddress } from "../src/domain/Address.js"
import type { NotAddressable, NotLive } from "../src/domain/Errors.js"
import type { Session } from "../src/domain/Session.js"
import { describeVerdict } from "../src/domain/Verdict.js"
import { layerMemory, makeMemoryWorld, type MemoryWorldOptions } from "../src/layers/Memory.js"
import * as Registry from "../src/services/Registry.js"
import * as Watch from "../src/services/Watch.js"
import { recordText } from "./support/records.js"

const alice = 2000

const worldOf = (options: MemoryWorldOptions = {}) => {
  const world = makeMemoryWorld(options)
  const sessions = world.home.sessionsDirectory
  const write = (pid: number, fields: Record<string, unknown> = {}) => world.tree.writeFile(`${sessions}/${pid}.json`, recordText(pid, fields))
  const run = <A, E>(effect: Effect.Effect<A, E, Registry.Registry | Watch.Watch>) => Effect.provide(effect, layerMemory(world))
  return { world, sessions, write, run }
}

const entryOf = (pid: number) => Effect.map(Effect.flatMap(Registry.Registry, (r) => r.inspect), (entries) => entries.find((e) => e.pid === pid))
const list = Effect.flatMap(Registry.Registry, (r) => r.list)
const resolve = (sessionId: string) => Effect.flatMap(Registry.Registry, (r) => r.resolve({ sessionId }))
const idOf = (pid: number) => `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`

describe("another user's live session", () => {
  /** The reader (uid 1000) reads alice's home: her records, her processes (EPERM for the reader). */
  const alicesHome = () => {
    const w = worldOf({ claudeHome: "/home/alice/.claude" })
    w.world.tree.makeDirectory(w.sessions)
    for (const dir of ["/home/alice", "/home/alice/.claude", w.sessions]) w.world.tree.chown(dir, alice, alice)
    const proc = w.world.processes.spawn({ uid: alice })
    w.write(proc.pid, { procStart: proc.startTime })
    w.world.tree.chown(`${w.sessions}/${proc.pid}.json`, alice, alice)
    return { ...w, proc }
  }

  it.effect("is listed live with no address, its socket kept, and the reason other_user", () =>
    Effect.gen(function*() {
      const { proc, run } = alicesHome()
      const [session] = yield* run(list)
      expect(session).toMatchObject({
        pid: proc.pid,
        address: null,
        socketPath: `/tmp/cc-socks/${proc.pid}.sock`,
        unaddressable: "other_user",
        stopped: false
      })
    }))

  it.effect("resolve refuses it with not_addressable, saying that it is another user's", () =>
    Effect.gen(function*() {
      const { proc, run } = alicesHome()
      const error = (yield* Effect.flip(run(resolve(idOf(proc.pid))))) as NotAddressable
      expect(error._tag).toBe("NotAddressable")
      expect(error.because).toBe("other_user")
      expect(error.message).toMatch(/another user's/)
    }))

  it.effect("root reads it as an addressable session (root may signal and connect to every process)", () =>
    Effect.gen(function*() {
      const w = worldOf({ user: { uid: 0, gid: 0 } })
      w.world.tree.makeDirectory(w.sessions)
      for (const dir of ["/home/user", "/home/user/.claude", w.sessions]) w.world.tree.chown(dir, 1000, 1000)
      const proc = w.world.processes.spawn({ uid: alice })
      w.write(proc.pid, { procStart: proc.startTime })
      w.world.tree.chown(`${w.sessions}/${proc.pid}.json`, 1000, 1000)
      const [session] = yield* w.run(list)
      expect(session).toMatchObject({ address: `work-${proc.pid}`, unaddressable: null })
    }))
})

describe("a pid another user's process took over", () => {
  const reusedByAlice = (hidePid: boolean, procStart: "recorded" | "absent") => {
    const w = worldOf()
    const proc = w.world.processes.spawn()
    w.write(proc.pid, procStart === "recorded" ? { procStart: proc.startTime } : {})
    w.world.processes.kill(proc.pid)
    w.world.processes.reuse(proc.pid, undefined, alice)
    w.world.processes.setHidePid(hidePid)
    return { ...w, proc }
  }

  for (const hidePid of [true, false]) {
    for (const procStart of ["recorded", "absent"] as const) {
      it.effect(`is pid_reused for a record of the reader's own user (hidepid ${hidePid}, procStart ${procStart})`, () =>
        Effect.gen(function*() {
          const { proc, run } = reusedByAlice(hidePid, procStart)
          const entry = yield* run(entryOf(proc.pid))
          expect(entry?.verdict).toMatchObject({ _tag: "pid_reused", proof: "owner" })
          expect(describeVerdict(entry!.verdict)).toMatch(/^pid reused: the record was written by this user \(uid 1000\)/)
          if (hidePid) expect(describeVerdict(entry!.verdict)).toMatch(/hides/)
          expect(yield* run(list)).toEqual([])
          const error = (yield* Effect.flip(run(resolve(idOf(proc.pid))))) as NotLive
          expect(error._tag).toBe("NotLive")
        }))
    }
  }

  it.effect("a start time hidden from the reader proves nothing by itself: a hidden process of the home's owner stays live", () =>
    Effect.gen(function*() {
      // The reader (1000) reads alice's home; alice's own process is hidden from it (hidepid=2).
      const w = worldOf({ claudeHome: "/home/alice/.claude" })
      w.world.tree.makeDirectory(w.sessions)
      for (const dir of ["/home/alice", "/home/alice/.claude", w.sessions]) w.world.tree.chown(dir, alice, alice)
      const proc = w.world.processes.spawn({ uid: alice })
      w.write(proc.pid, { procStart: proc.startTime })
      w.world.tree.chown(`${w.sessions}/${proc.pid}.json`, alice, alice)
      w.world.processes.setHidePid()
      const [session] = yield* w.run(list)
      expect(session).toMatchObject({ pid: proc.pid, unaddressable: "other_user", address: null })
    }))
})

describe("a record another user wrote into the reader's home", () => {
  const foreign = (readerUid: number) => {
    const w = worldOf({ user: { uid: readerUid, gid: readerUid } })
    w.world.tree.makeDirectory(w.sessions)
    for (const dir of ["/home/user", "/home/user/.claude"]) w.world.tree.chown(dir, 1000, 1000)
    // The attacker made sessions/ first, and wrote a record for their own process, named like the victim's session.
    w.world.tree.chown(w.sessions, alice, alice)
    const proc = w.world.processes.spawn({ uid: alice })
    w.write(proc.pid, { procStart: proc.startTime, name: "api" })
    w.world.tree.chown(`${w.sessions}/${proc.pid}.json`, alice, alice)
    return { ...w, proc }
  }

  for (const reader of [1000, 0]) {
    it.effect(`is foreign_owner, not live, for reader uid ${reader}`, () =>
      Effect.gen(function*() {
        const { proc, run } = foreign(reader)
        const entry = yield* run(entryOf(proc.pid))
        expect(entry?.verdict).toEqual({ _tag: "foreign_owner", owner: alice, reader, homeOwner: 1000 })
        expect(entry).toMatchObject({ sessionId: idOf(proc.pid), name: "api" })
        expect(describeVerdict(entry!.verdict)).toMatch(/^owned by another user \(uid 2000\)/)
        expect(yield* run(list)).toEqual([])
        const error = (yield* Effect.flip(run(resolve(idOf(proc.pid))))) as NotLive
        expect(error._tag).toBe("NotLive")
        expect(error.message).toMatch(/owned by another user/)
      }))
  }

  it.effect("a record of the home's owner read by root, and one of the reader in another user's home, are not foreign", () =>
    Effect.gen(function*() {
      const w = worldOf({ user: { uid: 0, gid: 0 } })
      w.world.tree.makeDirectory(w.sessions)
      for (const dir of ["/home/user", "/home/user/.claude", w.sessions]) w.world.tree.chown(dir, 1000, 1000)
      const own = w.world.processes.spawn({ uid: 1000 })
      w.write(own.pid, { procStart: own.startTime })
      w.world.tree.chown(`${w.sessions}/${own.pid}.json`, 1000, 1000)
      const root = w.world.processes.spawn({ uid: 0 })
      w.write(root.pid, { procStart: root.startTime })
      w.world.tree.chown(`${w.sessions}/${root.pid}.json`, 0, 0)
      const sessions = yield* w.run(list)
      expect(sessions.map((s) => s.pid)).toEqual([own.pid, root.pid].sort((a, b) => a - b))
    }))
})

describe("stopped sessions", () => {
  it.effect("a stopped process's session is live with stopped: true, still resolves, and is false again once continued", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const proc = w.world.processes.spawn()
      w.write(proc.pid, { procStart: proc.startTime })
      w.world.processes.stop(proc.pid)
      expect((yield* w.run(list))[0]).toMatchObject({ pid: proc.pid, stopped: true, address: `work-${proc.pid}` })
      expect(yield* w.run(resolve(idOf(proc.pid)))).toMatchObject({ pid: proc.pid, stopped: true })
      w.world.processes.resume(proc.pid)
      expect((yield* w.run(list))[0]).toMatchObject({ pid: proc.pid, stopped: false })
    }))

  it.scoped("watch reports stopping and continuing as changes, with no file touched", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const proc = w.world.processes.spawn()
      w.write(proc.pid, { procStart: proc.startTime })
      const fiber = yield* Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions({ interval: 1000 }))).pipe(
        Stream.take(3),
        Stream.runCollect,
        Effect.provide(layerMemory(w.world)),
        Effect.fork
      )
      yield* TestClock.adjust(3000)
      w.world.processes.stop(proc.pid)
      yield* TestClock.adjust(3000)
      w.world.processes.resume(proc.pid)
      yield* TestClock.adjust(3000)
      const events = Chunk.toArray(yield* Fiber.join(fiber))
      expect(events.map((e) => [e._tag, e.session.stopped])).toEqual([["appeared", false], ["changed", true], ["changed", false]])
    }))
})

describe("the address rule", () => {
  const session = (name: string): Pick<Session, "name" | "socketPath"> => ({ name, socketPath: "/tmp/s/1.sock" })
  const alone = { name: false, sessionId: false }

  // Each is a `to` Claude Code 2.1.332 parses as something else than a name (its `SendMessage`).
  const addressLike = [
    "uds:/tmp/other.sock",
    "UDS:x",
    "bridge:session_01ABCDEFGHJKLMNPQRSTUVWX",
    "did:key:z6Mk",
    "/tmp/other.sock",
    "/run/user/1000/x.sock.old",
    "//./pipe/name",
    "session_01123456789abcdefghijkmn",
    "cse_staging_01123456789abcdefghijkmn",
    "local_0123abcd-0123-4567-89ab-0123456789ab",
    "work [session_01ABCDEFGHJKLMNPQRSTUVWX]",
    "work [local_0123abcd-0123]",
    "notes 【session_01123456789abcdefghijkmn】"
  ]

  it("a name Claude Code would parse as another address is addressed by its socket", () => {
    for (const name of addressLike) {
      expect(parsedAsAddress(name), name).toBe(true)
      expect(addressOf(session(name), null, alone), name).toEqual({ address: "uds:/tmp/s/1.sock", unaddressable: null })
    }
  })

  it("ordinary names, derived names and user names are addresses", () => {
    for (const name of ["work-8f", "api-server", "(backgrounded)", "my session", "sock", "a.sock", "tmp/x.sock", "uds", "session_01"]) {
      expect(parsedAsAddress(name), name).toBe(false)
      expect(addressOf(session(name), null, alone).address).toBe(name)
    }
  })

  it("a shared name or a shared id is addressed by the socket; no socket or another user's process has none", () => {
    expect(addressOf(session("work"), null, { name: true, sessionId: false }).address).toBe("uds:/tmp/s/1.sock")
    expect(addressOf(session("work"), null, { name: false, sessionId: true }).address).toBe("uds:/tmp/s/1.sock")
    expect(addressOf({ name: "work", socketPath: null }, null, alone)).toEqual({ address: null, unaddressable: "no_socket" })
    expect(addressOf(session("work"), "other_user", alone)).toEqual({ address: null, unaddressable: "other_user" })
  })

  it("property: the address is the name only when the name is not address-like and nothing is shared", () =>
    fc.assert(
      fc.property(fc.string(), fc.boolean(), fc.boolean(), (name, sharedName, sharedId) => {
        const { address } = addressOf(session(name), null, { name: sharedName, sessionId: sharedId })
        expect(address).toBe(!sharedName && !sharedId && !parsedAsAddress(name) ? name : "uds:/tmp/s/1.sock")
        if (name.startsWith("uds:") || name.startsWith("bridge:") || name.startsWith("did:")) expect(address).not.toBe(name)
      })
    ))

  it.effect("two live processes with one session id (--continue, --resume) are both addressed by their sockets", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const first = w.world.processes.spawn()
      const second = w.world.processes.spawn()
      w.write(first.pid, { procStart: first.startTime, sessionId: "shared-id", name: "one" })
      w.write(second.pid, { procStart: second.startTime, sessionId: "shared-id", name: "two" })
      const sessions = yield* w.run(list)
      expect(sessions.map((s) => s.address)).toEqual([`uds:/tmp/cc-socks/${first.pid}.sock`, `uds:/tmp/cc-socks/${second.pid}.sock`])
    }))

  it.effect("a live session named like an address is listed with its socket form", () =>
    Effect.gen(function*() {
      const w = worldOf()
      const proc = w.world.processes.spawn()
      w.write(proc.pid, { procStart: proc.startTime, name: "uds:/tmp/elsewhere.sock" })
      expect((yield* w.run(list))[0]?.address).toBe(`uds:/tmp/cc-socks/${proc.pid}.sock`)
    }))
})
