/**
 * A settings file that is a symbolic link (issue 23, item 5), the links on the way to it (issue 26:
 * root must not follow a user's link out of that user's files), and the lock's waits (issue 26:
 * a monotonic clock, a stopped holder named as stopped). Written once for both worlds where the
 * memory world can stage the case; the rest on the real OS.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type PolicyChange, resetPolicy, setPolicy } from "../src/domain/Settings.js"
import { layerNode } from "../src/layers/Node.js"
import { Settings, type UpdateOptions } from "../src/services/Settings.js"
import { makeMemoryHome, makeNodeHome, type SettingsHome } from "./support/settingsHomes.js"
import type { MemoryTestWorld } from "./support/worlds.js"

const shortLock = { lockWait: "200 millis", lockPoll: "5 millis" } as const
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes))
const lockOf = (pid: number, startTime: string) => `${pid} ${startTime}\n`

const update = (change: PolicyChange, options: UpdateOptions = {}) => Effect.flatMap(Settings, (settings) => settings.update(change, options))

const withHome = <A, E>(makeHome: () => SettingsHome, body: (home: SettingsHome) => Effect.Effect<A, E, Settings>) =>
  Effect.acquireUseRelease(
    Effect.sync(makeHome),
    (home) => Effect.provide(body(home), home.layerWith({ timing: shortLock })),
    (home) => Effect.promise(() => home.close())
  )

const profile = "profiles/work"
const document = `{\n  "model": "opus",\n  "crossSessionInbound": "hold"\n}\n`

/** `settings.json` a relative link to `profiles/work/settings.json`, as claude-swap makes it. */
const linked = (home: SettingsHome) => {
  home.mkdir("profiles")
  home.mkdir(profile)
  home.write(`${profile}/settings.json`, document)
  home.symlink(`${profile}/settings.json`, "settings.json")
  return path.join(home.home, profile, "settings.json")
}

const suite = (name: string, makeHome: () => SettingsHome) =>
  describe(`a settings file that is a link: ${name}`, () => {
    it.live("is refused by default, the refusal naming the link's target and --through-link; nothing written", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          const target = linked(home)
          const error = yield* Effect.flip(update(setPolicy("accept")))
          expect(error).toMatchObject({ _tag: "InvalidSettings", problem: "symlink", linkTarget: target, during: "update" })
          expect(error.message).toContain(target)
          expect(error.message).toContain("--through-link")
          expect(text(home.read(`${profile}/settings.json`))).toBe(document)
          expect(home.isSymlink("settings.json")).toBe(true)
          expect(home.list()).toEqual(["profiles", "settings.json"])
          expect(home.list(profile)).toEqual(["settings.json"])
        })))

    it.live("--through-link updates the target, keeps the link, and leaves nothing of ours on either side", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          const target = linked(home)
          const view = yield* update(setPolicy("accept"), { throughLink: true })
          expect(view).toMatchObject({ path: target, crossSessionInbound: "accept" })
          expect(text(home.read(`${profile}/settings.json`))).toBe(`{\n  "model": "opus",\n  "crossSessionInbound": "accept"\n}\n`)
          expect(home.isSymlink("settings.json")).toBe(true)
          expect((yield* (yield* Settings).read).revision).toBe(view.revision)
          const reset = yield* update(resetPolicy, { throughLink: true, expectRevision: view.revision })
          expect(reset.crossSessionInbound).toBeNull()
          expect(text(home.read(`${profile}/settings.json`))).toBe(`{\n  "model": "opus"\n}\n`)
          expect(home.list()).toEqual(["profiles", "settings.json"])
          expect(home.list(profile)).toEqual(["settings.json"])
        })))

    it.live("--through-link keeps every guarantee: an expected revision that is not the target's writes nothing", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          linked(home)
          const error = yield* Effect.flip(update(setPolicy("accept"), { throughLink: true, expectRevision: "0".repeat(64) }))
          expect(error).toMatchObject({ _tag: "ChangedDuringWrite", conflict: "revision" })
          expect(text(home.read(`${profile}/settings.json`))).toBe(document)
        })))

    it.live("--through-link takes the lock beside the target: a live holder there is waited for, named by that lock", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          const target = linked(home)
          const holder = home.spawn()
          home.write(`${profile}/.settings.json.claude-peers.lock`, lockOf(holder.pid, holder.startTime))
          const error = yield* Effect.flip(update(setPolicy("accept"), { throughLink: true }))
          expect(error).toMatchObject({
            _tag: "ChangedDuringWrite",
            conflict: "lock_held",
            lock: { path: path.join(path.dirname(target), ".settings.json.claude-peers.lock") }
          })
          expect(text(home.read(`${profile}/settings.json`))).toBe(document)
        })))

    it.live("--through-link follows one hop only: a link to a link, a dangling link and a link to a directory are refused", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.mkdir("profiles")
          home.write("profiles/real.json", document)
          home.symlink("real.json", "profiles/hop.json")
          home.symlink("profiles/hop.json", "settings.json")
          const twice = yield* Effect.flip(update(setPolicy("accept"), { throughLink: true }))
          expect(twice).toMatchObject({ _tag: "InvalidSettings", problem: "symlink", linkTarget: path.join(home.home, "profiles/hop.json") })
          expect(twice.message).toMatch(/one link only/)
          home.remove("settings.json")
          home.symlink("profiles/missing.json", "settings.json")
          const dangling = yield* Effect.flip(update(setPolicy("accept"), { throughLink: true }))
          expect(dangling).toMatchObject({ _tag: "InvalidSettings", problem: "symlink" })
          expect(dangling.message).toMatch(/does not exist/)
          expect(home.exists("profiles/missing.json")).toBe(false)
          home.remove("settings.json")
          home.symlink("profiles", "settings.json")
          const directory = yield* Effect.flip(update(setPolicy("accept"), { throughLink: true }))
          expect(directory).toMatchObject({ _tag: "InvalidSettings", problem: "not_a_file" })
          expect(text(home.read("profiles/real.json"))).toBe(document)
          expect(home.list("profiles")).toEqual(["hop.json", "real.json"])
        })))

    it.live("a stopped lock holder is named as stopped in changed_during_write", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.write("settings.json", document)
          const holder = home.spawn()
          home.write(".settings.json.claude-peers.lock", lockOf(holder.pid, holder.startTime))
          stop(home, holder.pid)
          const error = yield* Effect.flip(update(setPolicy("accept")))
          expect(error).toMatchObject({ _tag: "ChangedDuringWrite", conflict: "lock_held", lock: { stopped: true } })
          expect(error.message).toMatch(/stopped/)
          expect(text(home.read("settings.json"))).toBe(document)
        })))
  })

/** SIGSTOP on the OS, the memory table's `stop` in memory. */
const stop = (home: SettingsHome, pid: number) => {
  if (home.kind === "memory") (home as MemoryTestWorld).world.processes.stop(pid)
  else process.kill(pid, "SIGSTOP")
}

suite("memory", makeMemoryHome)
suite("node", makeNodeHome)

describe("the lock's wait is measured on a monotonic clock", () => {
  /**
   * A clock whose wall time steps back a minute 100 ms into the wait, as an NTP correction or a
   * hand-set clock does, while its monotonic time (and its sleeps) run on a virtual counter. The
   * wait must end after the lock wait of monotonic time, not a minute later.
   */
  const steppedClock = () => {
    let nanos = 0n
    const wall = () => {
      const millis = Number(nanos / 1_000_000n)
      return Date.UTC(2026, 0, 1) + millis - (millis >= 100 ? 60_000 : 0)
    }
    const clock: Clock.Clock = {
      [Clock.ClockTypeId]: Clock.ClockTypeId,
      unsafeCurrentTimeMillis: wall,
      currentTimeMillis: Effect.sync(wall),
      unsafeCurrentTimeNanos: () => nanos,
      currentTimeNanos: Effect.sync(() => nanos),
      sleep: (duration) =>
        Effect.sync(() => {
          nanos += BigInt(Duration.toMillis(duration)) * 1_000_000n
        })
    }
    return { clock, elapsedMillis: () => Number(nanos / 1_000_000n) }
  }

  it.live("a wall clock stepped back a minute does not stretch the wait of a live holder", () =>
    withHome(makeMemoryHome, (home) =>
      Effect.gen(function*() {
        home.write("settings.json", document)
        const holder = home.spawn()
        home.write(".settings.json.claude-peers.lock", lockOf(holder.pid, holder.startTime))
        const { clock, elapsedMillis } = steppedClock()
        const error = yield* Effect.flip(Effect.withClock(update(setPolicy("accept")), clock))
        expect(error).toMatchObject({ _tag: "ChangedDuringWrite", conflict: "lock_held" })
        // The lock wait (200 ms) and one poll more at most, of the clock's own time: a wall-clock
        // measure would have waited out the step too (60 s more).
        expect(elapsedMillis()).toBeGreaterThanOrEqual(200)
        expect(elapsedMillis()).toBeLessThan(1000)
      })))
})

const isRoot = process.getuid?.() === 0
const nobody = 65534

describe.skipIf(!isRoot)("as root, another user's links are not followed out of that user's files (node)", () => {
  const sandbox = () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-links-"))
    const userHome = path.join(base, "user")
    fs.mkdirSync(userHome, { mode: 0o755 })
    fs.chownSync(userHome, nobody, nobody)
    const rootOnly = path.join(base, "root-only")
    fs.mkdirSync(rootOnly, { mode: 0o700 })
    return { base, userHome, rootOnly, close: () => fs.rmSync(base, { recursive: true, force: true }) }
  }

  const updateAt = (claudeHome: string, change: PolicyChange, options: UpdateOptions = {}) =>
    Effect.provide(update(change, options), layerNode({ claudeHome, timing: shortLock }))

  it.live("a user's .claude link into a root-only directory: refused, nothing written there", () =>
    Effect.acquireUseRelease(Effect.sync(sandbox), ({ rootOnly, userHome }) =>
      Effect.gen(function*() {
        const claude = path.join(userHome, ".claude")
        fs.symlinkSync(rootOnly, claude)
        fs.lchownSync(claude, nobody, nobody)
        const error = yield* Effect.flip(updateAt(claude, setPolicy("accept")))
        expect(error).toMatchObject({ _tag: "SystemError", reason: "PermissionDenied" })
        expect(error.message).toMatch(/another user's link/)
        expect(fs.readdirSync(rootOnly)).toEqual([])
      }), ({ close }) => Effect.sync(close)))

  it.live("a user's settings.json link to a root-owned file, through the link: refused, the file untouched", () =>
    Effect.acquireUseRelease(Effect.sync(sandbox), ({ rootOnly, userHome }) =>
      Effect.gen(function*() {
        const claude = path.join(userHome, ".claude")
        fs.mkdirSync(claude)
        fs.chownSync(claude, nobody, nobody)
        const secret = path.join(rootOnly, "settings.json")
        fs.writeFileSync(secret, document, { mode: 0o600 })
        const link = path.join(claude, "settings.json")
        fs.symlinkSync(secret, link)
        fs.lchownSync(link, nobody, nobody)
        const error = yield* Effect.flip(updateAt(claude, setPolicy("accept"), { throughLink: true }))
        expect(error).toMatchObject({ _tag: "SystemError", reason: "PermissionDenied" })
        expect(fs.readFileSync(secret, "utf8")).toBe(document)
        expect(fs.readdirSync(rootOnly)).toEqual(["settings.json"])
      }), ({ close }) => Effect.sync(close)))

  it.live("a user's .claude link to that user's own directory is followed, and the new file is the user's", () =>
    Effect.acquireUseRelease(Effect.sync(sandbox), ({ userHome }) =>
      Effect.gen(function*() {
        const real = path.join(userHome, "claude-profile")
        fs.mkdirSync(real, { mode: 0o700 })
        fs.chownSync(real, nobody, nobody)
        const claude = path.join(userHome, ".claude")
        fs.symlinkSync(real, claude)
        fs.lchownSync(claude, nobody, nobody)
        const view = yield* updateAt(claude, setPolicy("accept"))
        expect(view.crossSessionInbound).toBe("accept")
        const stats = fs.statSync(path.join(real, "settings.json"))
        expect({ uid: stats.uid, gid: stats.gid }).toEqual({ uid: nobody, gid: nobody })
      }), ({ close }) => Effect.sync(close)))
})

describe("settings set|reset --through-link, the command (node, the built command)", () => {
  const cli = path.resolve(import.meta.dirname, "../bin/claude-peers.js")
  const run = (home: string, ...args: Array<string>) =>
    spawnSync(process.execPath, [cli, "--claude-home", home, "settings", ...args], {
      cwd: os.tmpdir(),
      env: { PATH: process.env.PATH, HOME: home, CLAUDE_CONFIG_DIR: path.join(home, "not-this-one") },
      encoding: "utf8"
    })

  it("a link is refused with exit 6, the JSON naming its target; --through-link updates the target, exit 0", () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-links-cli-"))
    try {
      fs.mkdirSync(path.join(home, "profiles"))
      const target = path.join(home, "profiles", "settings.json")
      fs.writeFileSync(target, document)
      fs.symlinkSync("profiles/settings.json", path.join(home, "settings.json"))
      const refused = run(home, "set", "accept", "--json")
      expect(refused.status, refused.stderr).toBe(6)
      expect(JSON.parse(refused.stdout).error).toMatchObject({ reason: "invalid_settings", problem: "symlink", linkTarget: target })
      const human = run(home, "reset")
      expect(human.status).toBe(6)
      expect(human.stderr).toContain("--through-link")
      expect(fs.readFileSync(target, "utf8")).toBe(document)
      const through = run(home, "set", "accept", "--through-link", "--json")
      expect(through.status, through.stderr).toBe(0)
      expect(JSON.parse(through.stdout)).toMatchObject({ path: target, crossSessionInbound: "accept" })
      expect(fs.lstatSync(path.join(home, "settings.json")).isSymbolicLink()).toBe(true)
      const reset = run(home, "reset", "--through-link", "--json")
      expect(reset.status, reset.stderr).toBe(0)
      expect(fs.readFileSync(target, "utf8")).toBe(`{\n  "model": "opus"\n}\n`)
      expect(fs.readdirSync(path.join(home, "profiles"))).toEqual(["settings.json"])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  }, 60_000)
})
