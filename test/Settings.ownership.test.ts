/**
 * Ownership on update: the settings file after an update has the owner and group it had before, a
 * new file those of its directory, and where this process may not give a file that owner the update
 * is refused with `io` and nothing is written. Run in memory (as root, and as a user) and on the real
 * OS: as root in this process, and through the built command as root and as a second user (uid 1000
 * via `setpriv`), where the machine allows it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { resetPolicy, setPolicy } from "../src/domain/Settings.js"
import { Settings } from "../src/services/Settings.js"
import { type HomeOptions, makeMemoryHome, makeNodeHome, type SettingsHome } from "./support/settingsHomes.js"
import { stagedForOtherUsers } from "./support/staged.js"

const user = { uid: 1000, gid: 1000 }
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes))
const ours = (home: SettingsHome) => home.list().filter((name) => name.includes("claude-peers"))

const withHome = <A, E>(
  makeHome: (options?: HomeOptions) => SettingsHome,
  body: (home: SettingsHome) => Effect.Effect<A, E, Settings>,
  options?: HomeOptions
) =>
  Effect.acquireUseRelease(
    Effect.sync(() => makeHome(options)),
    (home) => Effect.provide(body(home), home.layer),
    (home) => Effect.promise(() => home.close())
  )

const set = Effect.flatMap(Settings, (settings) => settings.update(setPolicy("accept")))
const reset = Effect.flatMap(Settings, (settings) => settings.update(resetPolicy))

const asRoot = (name: string, makeHome: (options?: HomeOptions) => SettingsHome) =>
  describe(`ownership kept on update, run as root: ${name}`, () => {
    it.live("the user's file keeps its owner, group and mode through set and reset", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.chown("", user.uid, user.gid)
          home.write("settings.json", "{\n  \"model\": \"opus\"\n}\n", 0o640)
          home.chown("settings.json", user.uid, 1001)
          yield* set
          expect(text(home.read("settings.json"))).toBe("{\n  \"model\": \"opus\",\n  \"crossSessionInbound\": \"accept\"\n}\n")
          expect(home.ownerOf("settings.json")).toEqual({ uid: user.uid, gid: 1001 })
          expect(home.modeOf("settings.json")).toBe(0o640)
          yield* reset
          expect(home.ownerOf("settings.json")).toEqual({ uid: user.uid, gid: 1001 })
          expect(home.modeOf("settings.json")).toBe(0o640)
          expect(ours(home)).toEqual([])
        })))

    it.live("a new file gets its directory's owner and group, mode 0600", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.chown("", user.uid, user.gid)
          yield* set
          expect(home.ownerOf("settings.json")).toEqual(user)
          expect(home.modeOf("settings.json")).toBe(0o600)
          expect(ours(home)).toEqual([])
        })))

    it.live("a missing Claude home is created with the owner of the directory it is made in, and so is the file", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.mkdir("..")
          home.chown("..", user.uid, user.gid)
          yield* set
          expect(home.ownerOf("")).toEqual(user)
          expect(home.modeOf("")).toBe(0o700)
          expect(home.ownerOf("settings.json")).toEqual(user)
        }), { missingHome: true }))

    it.live("a file root owns stays root's", () =>
      withHome(makeHome, (home) =>
        Effect.gen(function*() {
          home.chown("", user.uid, user.gid)
          home.write("settings.json", "{}\n", 0o600)
          home.chown("settings.json", 0, 0)
          yield* set
          expect(home.ownerOf("settings.json")).toEqual({ uid: 0, gid: 0 })
        })))
  })

asRoot("memory", (options) => makeMemoryHome({ ...options, user: { uid: 0, gid: 0 } }))
describe.runIf(process.getuid?.() === 0)("on the real OS", () => {
  asRoot("node", makeNodeHome)
})

describe("ownership that cannot be kept, run as a user (memory)", () => {
  const makeHome = (options?: HomeOptions) => makeMemoryHome({ ...options, user })

  it.live("another user's file in a directory this user may write: io, nothing written, nothing left", () =>
    withHome(makeHome, (home) =>
      Effect.gen(function*() {
        home.write("settings.json", "{\"theirs\":true}", 0o666)
        home.chown("settings.json", 2000, 2000)
        const before = home.identityOf("settings.json")
        const error = yield* Effect.flip(set)
        expect(error).toMatchObject({ _tag: "SystemError", reason: "PermissionDenied", pathOrDescriptor: home.settingsFile })
        expect(error.message).toMatch(/must keep its owner \(uid 2000, gid 2000\).*nothing was written/)
        expect(text(home.read("settings.json"))).toBe("{\"theirs\":true}")
        expect(home.identityOf("settings.json")).toBe(before)
        expect(home.ownerOf("settings.json")).toEqual({ uid: 2000, gid: 2000 })
        expect(ours(home)).toEqual([])
      })))

  it.live("a new file in another user's directory that this user may write is this user's, as anything it creates", () =>
    withHome(makeHome, (home) =>
      Effect.gen(function*() {
        home.chmod("", 0o777)
        home.chown("", 2000, 2000)
        yield* set
        expect(home.ownerOf("settings.json")).toEqual({ uid: user.uid, gid: user.gid })
        expect(home.modeOf("settings.json")).toBe(0o600)
        expect(home.list()).toEqual(["settings.json"])
      })))

  it.live("its own file with one of its groups needs no privilege", () =>
    withHome((options) => makeMemoryHome({ ...options, user: { ...user, groups: [50] } }), (home) =>
      Effect.gen(function*() {
        home.write("settings.json", "{}", 0o660)
        home.chown("settings.json", user.uid, 50)
        yield* set
        expect(home.ownerOf("settings.json")).toEqual({ uid: user.uid, gid: 50 })
        expect(home.modeOf("settings.json")).toBe(0o660)
      })))
})

/** Whether this machine lets the test run a command as uid 1000 (root, and `setpriv` present). */
const canSwitchUser = process.getuid?.() === 0 && spawnSync("setpriv", ["--reuid=1000", "--regid=1000", "--clear-groups", "true"]).status === 0

describe.runIf(process.getuid?.() === 0)("the built command on the real OS", () => {
  // Uid 1000 runs a copy it can read wherever this checkout is.
  const staged = stagedForOtherUsers()
  const makeHome = () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-owner-"))
    fs.chmodSync(base, 0o755)
    const home = path.join(base, "claude")
    fs.mkdirSync(home, { mode: 0o700 })
    const cache = path.join(base, "cache")
    fs.mkdirSync(cache, { mode: 0o777 })
    return { base, home, cache, settings: path.join(home, "settings.json") }
  }
  const run = (home: { readonly home: string; readonly cache: string }, prefix: ReadonlyArray<string>, ...args: Array<string>) => {
    const command = [...prefix, process.execPath, staged.command(), "--claude-home", home.home, ...args]
    const result = spawnSync(command[0]!, command.slice(1), {
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: home.cache },
      timeout: 30_000
    })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }

  it("`settings set` run as root leaves the user's file with the user's owner, group and mode", () => {
    const home = makeHome()
    try {
      fs.chownSync(home.home, user.uid, user.gid)
      fs.writeFileSync(home.settings, "{\"model\":\"opus\"}\n", { mode: 0o640 })
      fs.chownSync(home.settings, user.uid, user.gid)
      const result = run(home, [], "settings", "set", "hold", "--json")
      expect(result.status).toBe(0)
      expect(JSON.parse(result.stdout)).toMatchObject({ crossSessionInbound: "hold" })
      expect(fs.statSync(home.settings)).toMatchObject({ uid: user.uid, gid: user.gid })
      expect(fs.statSync(home.settings).mode & 0o7777).toBe(0o640)
    } finally {
      fs.rmSync(home.base, { recursive: true, force: true })
    }
  })

  it.runIf(canSwitchUser)("as uid 1000, another user's file it may write is refused with io (exit 7) and stays as it was", () => {
    const home = makeHome()
    try {
      fs.chownSync(home.home, user.uid, user.gid)
      fs.writeFileSync(home.settings, "{\"theirs\":true}\n", { mode: 0o666 })
      fs.chownSync(home.settings, 65534, 65534)
      const before = fs.statSync(home.settings)
      const human = run(home, ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"], "settings", "set", "accept")
      expect(human).toMatchObject({ status: 7 })
      expect(human.stdout).toBe("")
      expect(human.stderr).toMatch(/must keep its owner \(uid 65534, gid 65534\).*nothing was written/)
      const json = run(home, ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"], "settings", "set", "refuse", "--json")
      expect(json.status).toBe(7)
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { reason: "io" } })
      const after = fs.statSync(home.settings)
      expect(fs.readFileSync(home.settings, "utf8")).toBe("{\"theirs\":true}\n")
      expect([after.ino, after.uid, after.gid]).toEqual([before.ino, 65534, 65534])
      expect(fs.readdirSync(home.home)).toEqual(["settings.json"])
    } finally {
      fs.rmSync(home.base, { recursive: true, force: true })
    }
  })

  it.runIf(canSwitchUser)("as uid 1000, a Claude home made under a directory root owns (as under /tmp) is uid 1000's, and so is the file", () => {
    const home = makeHome()
    try {
      fs.chmodSync(home.base, 0o1777)
      const missing = { home: path.join(home.base, "new", "claude"), cache: home.cache }
      const result = run(missing, ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"], "settings", "set", "accept")
      expect(result.status, result.stderr).toBe(0)
      for (const made of [path.join(home.base, "new"), missing.home, path.join(missing.home, "settings.json")]) {
        expect(fs.statSync(made), made).toMatchObject({ uid: user.uid, gid: user.gid })
      }
      expect(fs.readdirSync(missing.home)).toEqual(["settings.json"])
    } finally {
      fs.rmSync(home.base, { recursive: true, force: true })
    }
  })

  it.runIf(canSwitchUser)("as uid 1000 in its own home, an update needs no privilege and keeps the owner", () => {
    const home = makeHome()
    try {
      fs.chownSync(home.home, user.uid, user.gid)
      const result = run(home, ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"], "settings", "set", "refuse")
      expect(result.status).toBe(0)
      expect(fs.statSync(home.settings)).toMatchObject({ uid: user.uid, gid: user.gid })
    } finally {
      fs.rmSync(home.base, { recursive: true, force: true })
    }
  })
})
