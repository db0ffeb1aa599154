/**
 * Other writers, on the in-memory layers where the moment of their write can be chosen: between
 * the first read and the rename (Claude Code writing its own settings), holding the lock (another
 * claude-peers), or failing the rename. The clock is the test clock, so the 2 s lock wait is
 * driven, not waited for.
 */
import { describe, expect, it } from "@effect/vitest"
import { blake3 } from "@noble/hashes/blake3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Effect, Exit, Fiber, Option, TestClock } from "effect"
import { type InboundPolicy, type PolicyChange, resetPolicy, setPolicy } from "../src/domain/Settings.js"
import { maxMergeRetries, Settings } from "../src/services/Settings.js"
import { makeObservedMemoryHome as makeMemoryHome, type MemoryHome } from "./support/settingsHomes.js"

const hex = (bytes: Uint8Array) => bytesToHex(blake3(bytes))

const inHome = <A, E>(home: MemoryHome, effect: Effect.Effect<A, E, Settings>) => Effect.provide(effect, home.layer)
const update = (change: PolicyChange, expectedRevision?: string) =>
  Effect.flatMap(Settings, (settings) => settings.update(change, { expectRevision: expectedRevision }))
const read = Effect.flatMap(Settings, (settings) => settings.read)

/** What Claude Code does to its settings: read, add its own key, write `settings.json.tmp.<pid>`, rename. */
const claudeCodeWrites = (home: MemoryHome, key: string) => () => {
  const current = home.files.readText(home.settingsFile)
  const document = current === undefined || current === "" ? {} : JSON.parse(current) as Record<string, unknown>
  const temp = `${home.settingsFile}.tmp.4242`
  home.files.writeFile(temp, `${JSON.stringify({ ...document, [key]: true }, null, 2)}\n`, 0o600)
  home.files.rename(temp, home.settingsFile)
}

const ours = (home: MemoryHome) => home.list().filter((name) => name.includes("claude-peers"))

const start = `{\n  "model": "opus",\n  "n": 1.0\n}\n`

const policies: ReadonlyArray<InboundPolicy> = ["accept", "hold", "refuse"]
const changes: ReadonlyArray<PolicyChange> = [...policies.map(setPolicy), resetPolicy]
const nameOf = (change: PolicyChange) => (change._tag === "Set" ? `set ${change.value}` : "reset")

describe("settings: concurrent writers (memory)", () => {
  // Every case, each once: the memory world is deterministic, so drawing them at random only repeats them.
  it.effect.each(
    changes.flatMap((change) => (["after-first-read", "before-rename"] as const).map((moment) => ({ change, moment, label: `${nameOf(change)}, ${moment}` })))
  )(
    "an edit between the first read and the rename, with an expected revision: always changed_during_write, and the other writer's bytes remain ($label)",
    ({ change, moment }) =>
      Effect.gen(function*() {
        const home = makeMemoryHome()
        // An invalid value, so that every change writes (a value already in place returns before any edit could race).
        home.write("settings.json", `{\n  "crossSessionInbound": "bogus",\n  "n": 1.0\n}\n`, 0o600)
        const revision = hex(home.read("settings.json")!)
        const edit = claudeCodeWrites(home, "otherWriterKey")
        if (moment === "after-first-read") home.files.onAfterRead(edit)
        else home.files.onBeforeReplace(edit)
        const error = yield* Effect.flip(inHome(home, update(change, revision)))
        const remaining = home.read("settings.json")!
        expect(error._tag).toBe("ChangedDuringWrite")
        // Seen when the update reads again under the lock, or only at the compare-before-rename.
        const conflict = moment === "after-first-read" ? "revision" : "overtaken"
        expect(error).toMatchObject({ expectedRevision: revision, actualRevision: hex(remaining), conflict })
        expect(JSON.parse(new TextDecoder().decode(remaining))).toEqual({
          crossSessionInbound: "bogus",
          n: 1,
          otherWriterKey: true
        })
        expect(ours(home)).toEqual([])
      })
  )

  it.effect.each(
    Array.from({ length: maxMergeRetries + 3 }, (_, writers) => policies.map((value) => ({ value, writers, label: `${writers} writers, set ${value}` })))
      .flat()
  )(
    `without an expected revision, up to ${maxMergeRetries} overtaking writers are merged and every key survives; one more is changed_during_write ($label)`,
    ({ value, writers }) =>
      Effect.gen(function*() {
        const home = makeMemoryHome()
        home.write("settings.json", start, 0o640)
        for (let i = 0; i < writers; i++) home.files.onBeforeReplace(claudeCodeWrites(home, `writer${i}`))
        const exit = yield* Effect.exit(inHome(home, update(setPolicy(value))))
        const remaining = home.read("settings.json")!
        const document = JSON.parse(new TextDecoder().decode(remaining)) as Record<string, unknown>
        // One writer per attempt: the first and every retry.
        const overtaken = Math.min(writers, maxMergeRetries + 1)
        for (let i = 0; i < overtaken; i++) expect(document[`writer${i}`], `writer${i}`).toBe(true)
        if (writers <= maxMergeRetries) {
          expect(Exit.isSuccess(exit)).toBe(true)
          if (Exit.isSuccess(exit)) expect(exit.value.revision).toBe(hex(remaining))
          expect(document.crossSessionInbound).toBe(value)
          expect(yield* inHome(home, read)).toMatchObject({ crossSessionInbound: value, revision: hex(remaining) })
        } else {
          const error = yield* Effect.flip(exit)
          expect(error._tag).toBe("ChangedDuringWrite")
          expect(error).toMatchObject({ expectedRevision: null, actualRevision: hex(remaining), conflict: "overtaken" })
          expect(document.crossSessionInbound).toBeUndefined()
        }
        // The bits are those of the file the update replaced: the other writer's (0600) once it wrote.
        expect(home.modeOf("settings.json")).toBe(writers === 0 ? 0o640 : 0o600)
        expect(ours(home)).toEqual([])
      })
  )

  it.effect("while replacing, the lock names this process and its start time, and the temporary file has the old bits", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start, 0o640)
      let seen: { lock: string | undefined; temps: ReadonlyArray<string>; mode: number } | undefined
      home.files.onBeforeReplace(() => {
        const temps = home.list().filter((name) => name.endsWith(".tmp"))
        seen = { lock: home.files.readText(home.lockFile), temps, mode: home.modeOf(temps[0]!) }
      })
      yield* inHome(home, update(setPolicy("hold")))
      expect(seen!.lock).toBe(`${home.self.pid} ${home.self.startTime} ${home.pidDomain}\n`)
      expect(seen!.temps).toHaveLength(1)
      expect(seen!.temps[0]).toMatch(new RegExp(`^\\.settings\\.json\\.claude-peers-${home.self.pid}-[0-9a-z]+\\.tmp$`))
      expect(seen!.mode).toBe(0o640)
      expect(ours(home)).toEqual([])
    }))

  it.effect("the order of an update: lstat before any open, the lock, the temporary file, the compare-and-rename, the directory fsync, then the lock, read again, goes", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      yield* inHome(home, update(setPolicy("hold")))
      const calls = home.calls.filter((call) => !call.startsWith("stat ") && !call.includes("readDirectory"))
      const temp = calls.find((call) => call.startsWith("writeNewFile") && call.endsWith(".tmp"))!.slice("writeNewFile ".length)
      // Before anything is read: whether the path is a link, then every link on the way to it
      // (another user's link is not followed out of that user's files).
      const walk = ["/home", "/home/user", home.home, home.settingsFile].map((at) => `lstat ${at}`)
      expect(calls).toEqual([
        `lstat ${home.settingsFile}`,
        ...walk,
        `lstat ${home.settingsFile}`,
        `readBounded ${home.settingsFile}`,
        `writeNewFile ${home.lockFile}`,
        `lstat ${home.settingsFile}`,
        `readBounded ${home.settingsFile}`,
        `writeNewFile ${temp}`,
        `replaceIfUnchanged ${temp} ${home.settingsFile} Replaced`,
        `syncDirectory ${home.home}`,
        `removeFile ${temp}`,
        // The lock goes only while it is still ours.
        `readBounded ${home.lockFile}`,
        `removeFile ${home.lockFile}`
      ])
    }))

  it.effect("a FIFO at the settings path is never opened, by get or by an update", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.mkfifo("settings.json")
      yield* Effect.flip(inHome(home, read))
      yield* Effect.flip(inHome(home, update(setPolicy("hold"))))
      expect(home.calls.filter((call) => call.startsWith("readBounded"))).toEqual([])
    }))

  it.effect("a live holder is waited for exactly 2 s, then changed_during_write, and its lock is left alone", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      const holder = home.processes.spawn()
      const lock = `${holder.pid} ${holder.startTime}\n`
      home.write(".settings.json.claude-peers.lock", lock)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("refuse"))))
      yield* TestClock.adjust("1999 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag).toBe("ChangedDuringWrite")
      expect(home.files.readText(home.lockFile)).toBe(lock)
      expect(home.files.readText(home.settingsFile)).toBe(start)
      expect(home.list()).toEqual([".settings.json.claude-peers.lock", "settings.json"])
    }))

  it.effect("the 2 s wait starts again when the lock changes hands: writers ahead are making progress", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      const first = home.processes.spawn()
      const second = home.processes.spawn()
      home.write(".settings.json.claude-peers.lock", `${first.pid} ${first.startTime}\n`)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      yield* TestClock.adjust("1500 millis")
      home.write(".settings.json.claude-peers.lock", `${second.pid} ${second.startTime}\n`)
      yield* TestClock.adjust("1500 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("600 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag).toBe("ChangedDuringWrite")
      expect(error.message).toContain(`pid ${second.pid}`)
    }))

  it.effect("a holder that dies during the wait: its lock is broken at the next look", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      const holder = home.processes.spawn()
      home.write(".settings.json.claude-peers.lock", `${holder.pid} ${holder.startTime}\n`)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      yield* TestClock.adjust("500 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      home.processes.kill(holder.pid)
      yield* TestClock.adjust("20 millis")
      expect((yield* Fiber.join(fiber)).crossSessionInbound).toBe("hold")
      expect(home.list()).toEqual(["settings.json"])
    }))

  it.effect("stale locks (dead pid, reused pid, a zombie holder) are broken without waiting", () =>
    Effect.gen(function*() {
      for (
        const make of [
          (home: MemoryHome) => {
            const { pid } = home.processes.spawn()
            home.processes.kill(pid)
            return `${pid} 100\n`
          },
          (home: MemoryHome) => {
            const { pid, startTime } = home.processes.spawn()
            home.processes.reuse(pid)
            return `${pid} ${startTime}\n`
          },
          (home: MemoryHome) => {
            const { pid, startTime } = home.processes.spawn()
            home.processes.exitUnreaped(pid)
            return `${pid} ${startTime}\n`
          }
        ]
      ) {
        const home = makeMemoryHome()
        home.write(".settings.json.claude-peers.lock", make(home))
        expect((yield* inHome(home, update(setPolicy("accept")))).crossSessionInbound).toBe("accept")
        expect(home.list()).toEqual(["settings.json"])
      }
    }))

  it.effect("a lock that names no holder (garbage, a bare live pid, empty, over 4 KiB, over 1 MiB) is broken once unchanged for 2 s, not before", () =>
    Effect.gen(function*() {
      for (const lock of ["garbage\n", "1\n", `${process.pid}\n`, "", "4242 ".repeat(1000) + "\n", "\u0000\u0000", "x".repeat(2_000_000)]) {
        const home = makeMemoryHome()
        home.write("settings.json", start)
        home.write(".settings.json.claude-peers.lock", lock)
        const fiber = yield* Effect.fork(inHome(home, update(setPolicy("refuse"))))
        yield* TestClock.adjust("1990 millis")
        expect(Option.isNone(yield* Fiber.poll(fiber)), JSON.stringify(lock.slice(0, 20))).toBe(true)
        yield* TestClock.adjust("40 millis")
        expect((yield* Fiber.join(fiber)).crossSessionInbound).toBe("refuse")
        expect(home.list()).toEqual(["settings.json"])
      }
    }))

  it.effect("a lock over 4 KiB that changes, even past its first bytes, is waited for 2 s from its last change", () =>
    Effect.gen(function*() {
      const large = "x".repeat(2_000_000)
      const home = makeMemoryHome()
      home.write("settings.json", start)
      home.write(".settings.json.claude-peers.lock", large)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      yield* TestClock.adjust("1500 millis")
      // The same size and the same first bytes: only its last byte differs.
      const rewritten = `${large.slice(0, -1)}y`
      home.write(".settings.json.claude-peers.lock", rewritten)
      yield* TestClock.adjust("1900 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(home.files.readText(home.lockFile)).toBe(rewritten)
      yield* TestClock.adjust("140 millis")
      expect((yield* Fiber.join(fiber)).crossSessionInbound).toBe("hold")
      expect(home.list()).toEqual(["settings.json"])
    }))

  it.effect("a lock held in another pid domain is waited for, and broken only once unchanged for 10 s", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      // The pid is alive here, and dead or alive there: nothing here can tell.
      const lock = `${home.self.pid} ${home.self.startTime}9 linux:elsewhere:pid:[4026532000]\n`
      home.write(".settings.json.claude-peers.lock", lock)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      yield* TestClock.adjust("9990 millis")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(home.files.readText(home.lockFile)).toBe(lock)
      yield* TestClock.adjust("40 millis")
      expect((yield* Fiber.join(fiber)).crossSessionInbound).toBe("hold")
      expect(home.list()).toEqual(["settings.json"])
    }))

  it.effect("a lock of ours that another writer broke meanwhile (another pid domain's 10 s wait) is left to it", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      const theirs = `4242 777 linux:elsewhere:pid:[4026532000]\n`
      home.files.onBeforeReplace(() => home.write(".settings.json.claude-peers.lock", theirs))
      expect((yield* inHome(home, update(setPolicy("hold")))).crossSessionInbound).toBe("hold")
      expect(home.files.readText(home.lockFile)).toBe(theirs)
      expect(home.list()).toEqual([".settings.json.claude-peers.lock", "settings.json"])
    }))

  it.effect("a live holder whose start time cannot be read is still a live holder", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      const holder = home.processes.spawn()
      home.processes.setStartTimeUnreadable(holder.pid)
      home.write(".settings.json.claude-peers.lock", `${holder.pid} ${holder.startTime}9\n`)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("accept"))))
      yield* TestClock.adjust("2 seconds")
      expect((yield* Effect.flip(Fiber.join(fiber)))._tag).toBe("ChangedDuringWrite")
      expect(home.exists("settings.json")).toBe(false)
    }))

  it.effect("interrupted while waiting for the lock: nothing of ours is left, the holder's lock stays", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      const holder = home.processes.spawn()
      const lock = `${holder.pid} ${holder.startTime}\n`
      home.write(".settings.json.claude-peers.lock", lock)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      yield* TestClock.adjust("700 millis")
      yield* Fiber.interrupt(fiber)
      expect(home.list()).toEqual([".settings.json.claude-peers.lock"])
      expect(home.files.readText(home.lockFile)).toBe(lock)
    }))

  it.effect("interrupted in the middle of an update: the lock and the temporary file are removed", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      const holder = home.processes.spawn()
      home.write(".settings.json.claude-peers.lock", `${holder.pid} ${holder.startTime}\n`)
      const fiber = yield* Effect.fork(inHome(home, update(setPolicy("hold"))))
      // The update now holds no lock and waits; let the holder go, then interrupt the update
      // as it replaces the file (the interruption lands at its next step).
      home.files.onBeforeReplace(() => {
        Effect.runFork(Fiber.interrupt(fiber))
      })
      home.remove(".settings.json.claude-peers.lock")
      yield* TestClock.adjust("20 millis")
      yield* Fiber.await(fiber)
      expect(ours(home)).toEqual([])
      const after = home.files.readText(home.settingsFile)!
      expect([start, start.replace("1.0\n", "1.0,\n  \"crossSessionInbound\": \"hold\"\n")]).toContain(after)
    }))

  it.effect("an I/O failure at the rename: the error is the PlatformError, and the lock and temporary file are removed", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      home.files.onBeforeReplace((target) => home.files.setUnreadable(target))
      const error = yield* Effect.flip(inHome(home, update(setPolicy("hold"))))
      expect(error._tag).toBe("SystemError")
      home.files.setUnreadable(home.settingsFile, false)
      expect(home.files.readText(home.settingsFile)).toBe(start)
      expect(ours(home)).toEqual([])
    }))

  it.effect("an unwritable directory: a PlatformError, the file byte for byte as it was, nothing left", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start, 0o600)
      home.chmod("", 0o500)
      for (const change of [setPolicy("accept"), setPolicy("refuse")]) {
        const error = yield* Effect.flip(inHome(home, update(change)))
        expect(error._tag).toBe("SystemError")
        if (error._tag === "SystemError") expect(error.reason).toBe("PermissionDenied")
      }
      expect(home.files.readText(home.settingsFile)).toBe(start)
      expect(home.list()).toEqual(["settings.json"])
      // An unwritable file in a writable directory is replaced as Claude Code replaces it: the
      // rename needs the directory, and the bits are carried over.
      home.chmod("", 0o700)
      home.chmod("settings.json", 0o400)
      yield* inHome(home, update(setPolicy("hold")))
      expect(home.modeOf("settings.json")).toBe(0o400)
    }))

  it.live("many updates in one process at once: unguarded ones all land, guarded ones on one revision: exactly one", () =>
    Effect.gen(function*() {
      const home = makeMemoryHome()
      home.write("settings.json", start)
      const values: ReadonlyArray<InboundPolicy> = ["accept", "hold", "refuse"]
      const unguarded = yield* Effect.all(
        Array.from({ length: 12 }, (_, i) => Effect.exit(inHome(home, update(setPolicy(values[i % 3]!))))),
        { concurrency: "unbounded" }
      )
      expect(unguarded.every(Exit.isSuccess)).toBe(true)
      const current = (yield* inHome(home, read)).crossSessionInbound
      const other = values.find((value) => value !== current)!
      const revision = hex(home.read("settings.json")!)
      // Every one of them would change the value: none can succeed as "nothing to do".
      const guarded = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) => Effect.exit(inHome(home, update(i % 2 === 0 ? resetPolicy : setPolicy(other), revision)))),
        { concurrency: "unbounded" }
      )
      const winners = guarded.filter(Exit.isSuccess)
      expect(winners.length).toBe(1)
      for (const exit of guarded.filter(Exit.isFailure)) {
        expect((yield* Effect.flip(exit))._tag).toBe("ChangedDuringWrite")
      }
      expect(winners[0]!.value.revision).toBe(hex(home.read("settings.json")!))
      expect(ours(home)).toEqual([])
    }))
})
