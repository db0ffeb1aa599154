/**
 * One behaviour for the file port (`claude-peers/testing/conformance`'s `filesConformance`), run
 * against the in-memory tree and against `node:fs` on a temporary directory: the memory layer is
 * only worth shipping while it fails where a disk fails. Then what only the memory tree has: its
 * fault injection, its permission model, its fixture methods.
 */
import type { PlatformError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as Path from "node:path"
import * as FilesMemory from "../src/layers/FilesMemory.js"
import * as FilesNode from "../src/layers/FilesNode.js"
import { makeMemoryTree } from "../src/layers/MemoryTree.js"
import { make as makeFiles } from "../src/services/Files.js"
import { filesConformance, layerFixtureNode, layerMemory } from "../src/testing/FilesConformance.js"
import { stagedForOtherUsers } from "./support/staged.js"

const KiB = 1024

const encode = (text: string) => new TextEncoder().encode(text)

const reasonOf = (error: PlatformError) => (error._tag === "SystemError" ? error.reason : error._tag)

filesConformance("Files (memory)", layerMemory({ uid: 1000, gid: 1000 }))
filesConformance("Files (memory, as root)", layerMemory({ uid: 0, gid: 0 }))
filesConformance(`Files (node, as ${process.getuid!() === 0 ? "root" : "a user"})`, Layer.merge(FilesNode.layer, layerFixtureNode))

describe.runIf(process.platform === "linux")("Files (node): the compare-and-rename's re-read", () => {
  // A `/proc` file is regular and says it has 0 bytes: the re-read, sized from fstat, must read on
  // past what fstat said, as it must for a file that grew since, and still stop at the limit.
  it.effect("reads a file larger than its fstat said, up to the limit and no further", () =>
    Effect.gen(function*() {
      const files = FilesNode.make()
      const target = "/proc/self/cmdline"
      const bytes = new Uint8Array(NFS.readFileSync(target))
      expect(NFS.statSync(target).size).toBe(0)
      expect(bytes.length).toBeGreaterThan(8)
      const source = Path.join(NFS.mkdtempSync(Path.join(OS.tmpdir(), "claude-peers-reread-")), "new.tmp")
      expect(yield* files.replaceIfUnchanged(source, target, encode("x"), 64 * KiB)).toEqual({ _tag: "Changed", bytes })
      expect(yield* files.replaceIfUnchanged(source, target, encode("x"), bytes.length)).toEqual({ _tag: "Changed", bytes })
      expect(yield* files.replaceIfUnchanged(source, target, encode("x"), bytes.length - 1)).toEqual({ _tag: "Changed", bytes: null })
      NFS.rmSync(Path.dirname(source), { recursive: true })
    }))
})

describe("Files.make for a layer without statIfExists or lstatIfExists", () => {
  it.effect("derives them from stat and lstat: a NotFound answers none, any other failure fails", () =>
    Effect.gen(function*() {
      const tree = makeMemoryTree()
      tree.makeDirectory("/w")
      tree.writeFile("/w/file", "{}")
      tree.symlink("/w/gone", "/w/dangling")
      const { lstatIfExists: _lstatIfExists, replaceIfUnchanged: _replaceIfUnchanged, statIfExists: _statIfExists, ...rest } = FilesMemory.make(tree)
      const files = makeFiles({ ...rest, renameIfCurrent: () => Effect.die("not used here") })
      expect(yield* files.statIfExists("/w/missing")).toEqual(Option.none())
      expect(yield* files.statIfExists("/w/dangling")).toEqual(Option.none())
      expect(Option.map(yield* files.lstatIfExists("/w/dangling"), (info) => info.type)).toEqual(Option.some("SymbolicLink"))
      expect(yield* files.statIfExists("/w/file")).toEqual(Option.some(yield* rest.stat("/w/file")))
      expect(reasonOf(yield* Effect.flip(files.statIfExists("/w/file/x")))).toBe(reasonOf(yield* Effect.flip(rest.stat("/w/file/x"))))
    }))
})

describe("Files (memory) fault injection and permissions", () => {
  const setup = () => {
    const memory = makeMemoryTree()
    memory.makeDirectory("/home/u/.claude/sessions")
    return { memory, files: FilesMemory.make(memory) }
  }
  const settings = "/home/u/.claude/settings.json"
  const large = { maxBytes: 1024 * KiB, followLinks: false }

  it.effect("an operation does its work when run, not when built", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      const read = files.readBounded(settings, large)
      const write = files.writeNewFile("/home/u/lock", encode("x"), 0o600)
      memory.writeFile(settings, "{}")
      expect(memory.exists("/home/u/lock")).toBe(false)
      expect(yield* read).toMatchObject({ _tag: "Read", bytes: encode("{}") })
      yield* write
      expect(memory.readText("/home/u/lock")).toBe("x")
    }))

  it.effect("tearNextReads shows a prefix to the next reads only", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      memory.writeFile(settings, "{\"a\":1}")
      memory.tearNextReads(settings, 3, 2)
      expect(yield* files.readBounded(settings, large)).toMatchObject({ _tag: "Read", bytes: encode("{\"a") })
      expect(yield* files.readBounded(settings, large)).toMatchObject({ _tag: "Read", bytes: encode("{\"a") })
      expect(yield* files.readBounded(settings, large)).toMatchObject({ _tag: "Read", bytes: encode("{\"a\":1}") })
      expect(memory.readText(settings)).toBe("{\"a\":1}")
    }))

  it.effect("onBeforeReplace runs one queued hook per replace, before the re-read", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      const source = "/home/u/.claude/new.tmp"
      memory.writeFile(settings, "{}")
      memory.writeFile(source, "{\"ours\":1}")
      const seen: Array<string> = []
      memory.onBeforeReplace((target) => {
        seen.push(target)
        memory.writeFile(target, "{\"theirs\":1}")
      })
      const raced = yield* files.replaceIfUnchanged(source, settings, encode("{}"), KiB)
      expect(raced).toEqual({ _tag: "Changed", bytes: encode("{\"theirs\":1}") })
      expect(seen).toEqual([settings])
      expect(memory.readText(settings)).toBe("{\"theirs\":1}")
      expect(memory.readText(source)).toBe("{\"ours\":1}")

      const retried = yield* files.replaceIfUnchanged(source, settings, encode("{\"theirs\":1}"), KiB)
      expect(retried).toEqual({ _tag: "Replaced" })
      expect(seen).toEqual([settings])
      expect(memory.readText(settings)).toBe("{\"ours\":1}")
    }))

  it.effect("current is a read: it leaves the hooks queued by onBeforeReplace to the replaces", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      const lock = "/home/u/.claude/.settings.json.claude-peers.lock"
      memory.writeFile(lock, "x".repeat(5000))
      const seen: Array<string> = []
      memory.onBeforeReplace((target) => void seen.push(target))
      expect(yield* files.current(lock, 4096)).toMatchObject({ present: true, bytes: null })
      expect(seen).toEqual([])
      memory.writeFile("/home/u/.claude/new.tmp", "{}")
      yield* files.replaceIfUnchanged("/home/u/.claude/new.tmp", settings, null, KiB)
      expect(seen).toEqual([settings])
    }))

  it.effect("onAfterRead runs right after a read returned, so the read saw the old bytes", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      memory.writeFile(settings, "{}")
      memory.onAfterRead((path) => memory.writeFile(path, "{\"edited\":1}"))
      expect(yield* files.readBounded(settings, large)).toMatchObject({ _tag: "Read", bytes: encode("{}") })
      expect(memory.readText(settings)).toBe("{\"edited\":1}")
      expect(yield* files.readBounded(settings, large)).toMatchObject({ _tag: "Read", bytes: encode("{\"edited\":1}") })
    }))

  it.effect("setUnreadable fails reads with PermissionDenied but not stat", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      memory.writeFile(settings, "{}", 0o600)
      memory.setUnreadable(settings)
      expect(reasonOf(yield* Effect.flip(files.readBounded(settings, large)))).toBe("PermissionDenied")
      expect(yield* files.stat(settings)).toMatchObject({ type: "File", size: 2, mode: 0o600, uid: 1000, gid: 1000 })
      memory.setUnreadable(settings, false)
      expect((yield* files.readBounded(settings, large))._tag).toBe("Read")
    }))

  it.effect("permission bits are enforced as for a non-root user", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      const home = "/home/u/.claude"
      memory.writeFile(settings, "{}", 0o200)
      expect(reasonOf(yield* Effect.flip(files.readBounded(settings, large)))).toBe("PermissionDenied")
      memory.chmod(settings, 0o600)
      memory.writeFile(`${home}/new.tmp`, "{\"a\":1}")

      memory.chmod(home, 0o555)
      const denied = (effect: Effect.Effect<unknown, PlatformError>) => Effect.map(Effect.flip(effect), reasonOf)
      expect(yield* denied(files.writeNewFile(`${home}/lock`, encode("x"), 0o600))).toBe("PermissionDenied")
      expect(yield* denied(files.removeFile(`${home}/new.tmp`))).toBe("PermissionDenied")
      expect(yield* denied(files.replaceIfUnchanged(`${home}/new.tmp`, settings, encode("{}"), KiB))).toBe(
        "PermissionDenied"
      )
      expect(yield* denied(files.makeDirectory(`${home}/sub`, 0o700))).toBe("PermissionDenied")
      expect(memory.readText(settings)).toBe("{}")

      memory.chmod(home, 0o600)
      expect(yield* denied(files.stat(settings))).toBe("PermissionDenied")
      memory.chmod(home, 0o300)
      expect(yield* denied(files.readDirectory(home))).toBe("PermissionDenied")
      expect(yield* denied(files.readDirectoryIfExists(home))).toBe("PermissionDenied")
      memory.chmod(home, 0o755)
      expect((yield* files.stat(settings)).mode).toBe(0o600)
    }))

  it.effect("relative links resolve from the link's directory, through `..`", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      memory.writeFile("/home/u/dotfiles/settings.json", "{}")
      memory.symlink("../dotfiles/./settings.json", settings)
      expect(yield* files.readBounded(settings, { maxBytes: KiB, followLinks: true })).toMatchObject({
        _tag: "Read",
        bytes: encode("{}")
      })
      memory.symlink("/home/u/dotfiles", "/home/u/link")
      expect((yield* files.stat("/home/u/link/settings.json")).type).toBe("File")
      expect(memory.readText("/home/u/link/settings.json")).toBe("{}")
    }))

  it.effect("the fixture helpers read the tree as a test needs it", () =>
    Effect.gen(function*() {
      const { memory } = setup()
      memory.symlink("/nowhere", "/home/u/dangling")
      expect(memory.exists("/home/u/dangling")).toBe(true)
      expect(memory.readFile("/home/u/dangling")).toBeUndefined()
      memory.writeFile("/home/u/b", "2")
      memory.writeFile("/home/u/a", "1", 0o600)
      memory.writeFile("/home/u/a", "one")
      expect(memory.readText("/home/u/a")).toBe("one")
      expect(memory.list("/home/u")).toEqual([".claude", "a", "b", "dangling"])
      expect(memory.list("/missing")).toEqual([])
      memory.rename("/home/u/b", "/home/u/a")
      expect(memory.readText("/home/u/a")).toBe("2")
      expect(memory.exists("/home/u/b")).toBe(false)
      expect(() => memory.symlink("x", "/home/u/a")).toThrow(/AlreadyExists/)
      memory.remove("/home/u/.claude")
      expect(memory.exists("/home/u/.claude/sessions")).toBe(false)
    }))

  it.live("watch emits for every mutation of an entry and ends when its directory goes", () =>
    Effect.gen(function*() {
      const { files, memory } = setup()
      const sessions = "/home/u/.claude/sessions"
      const events = yield* Effect.fork(Stream.runCollect(files.watch(sessions)))
      yield* Effect.sleep("20 millis")
      memory.writeFile(`${sessions}/1.json`, "{}")
      memory.tearNextReads(`${sessions}/1.json`, 1)
      memory.chmod(`${sessions}/1.json`, 0o600)
      memory.rename(`${sessions}/1.json`, `${sessions}/2.json`)
      memory.rename(`${sessions}/2.json`, "/home/u/2.json")
      memory.writeFile("/home/u/elsewhere.json", "{}")
      memory.remove("/home/u/.claude")
      const names = yield* Fiber.join(events).pipe(Effect.timeout("1 second"))
      expect([...names].map((event) => event.name)).toEqual(["1.json", "1.json", "1.json", "1.json", "2.json", "2.json"])
    }))
})

describe("Files (memory) owners", () => {
  it.effect("the owner's, the group's or the others' bits decide, as the entry's owner says; root passes them all", () =>
    Effect.gen(function*() {
      const memory = makeMemoryTree({ user: { uid: 1000, gid: 1000, groups: [50] } })
      const files = FilesMemory.make(memory)
      const options = { maxBytes: KiB, followLinks: false }
      memory.writeFile("/shared/group.json", "{}", 0o640)
      memory.chown("/shared/group.json", 2000, 50)
      memory.writeFile("/shared/other.json", "{}", 0o640)
      memory.chown("/shared/other.json", 2000, 2000)
      expect((yield* files.readBounded("/shared/group.json", options))._tag).toBe("Read")
      expect(reasonOf(yield* Effect.flip(files.readBounded("/shared/other.json", options)))).toBe("PermissionDenied")
      memory.chmod("/shared/other.json", 0o644)
      expect((yield* files.readBounded("/shared/other.json", options))._tag).toBe("Read")

      memory.makeDirectory("/theirs", 0o755)
      memory.chown("/theirs", 2000, 2000)
      expect(reasonOf(yield* Effect.flip(files.writeNewFile("/theirs/x", encode("x"), 0o600)))).toBe("PermissionDenied")
      memory.chmod("/theirs", 0o757)
      yield* files.writeNewFile("/theirs/x", encode("x"), 0o600)
      expect(yield* files.stat("/theirs/x")).toMatchObject({ uid: 1000, gid: 1000 })
      // Its own uid and any of its groups: chown(2) allows that much to anyone.
      yield* files.writeNewFile("/theirs/y", encode("y"), 0o600, { uid: 1000, gid: 50 })
      expect(yield* files.stat("/theirs/y")).toMatchObject({ uid: 1000, gid: 50 })

      const asRoot = makeMemoryTree({ user: { uid: 0, gid: 0 } })
      asRoot.writeFile("/home/u/secret", "{}", 0o000)
      asRoot.chown("/home/u/secret", 1000, 1000)
      asRoot.chmod("/home/u", 0o700)
      asRoot.chown("/home/u", 1000, 1000)
      expect((yield* FilesMemory.make(asRoot).readBounded("/home/u/secret", options))._tag).toBe("Read")
    }))

  it.live("refuseWatches makes new watches fail with EMFILE or ENOSPC, as inotify limits do", () =>
    Effect.gen(function*() {
      const memory = makeMemoryTree()
      memory.makeDirectory("/sessions")
      const files = FilesMemory.make(memory)
      memory.refuseWatches("EMFILE")
      const refused = yield* Effect.flip(Stream.runDrain(files.watch("/sessions")))
      expect(refused).toMatchObject({ _tag: "SystemError", syscall: "watch" })
      expect(refused._tag === "SystemError" && refused.description).toMatch(/^EMFILE/)
      memory.refuseWatches("ENOSPC")
      const noSpace = yield* Effect.flip(Stream.runDrain(files.watch("/sessions")))
      expect(noSpace._tag === "SystemError" && noSpace.description).toMatch(/^ENOSPC/)
      memory.refuseWatches(undefined)
      const writer = Effect.sync(() => memory.writeFile("/sessions/1.json", "{}")).pipe(
        Effect.repeat(Schedule.spaced("10 millis")),
        Effect.zipRight(Effect.never)
      )
      const seen = yield* Effect.race(Stream.runHead(files.watch("/sessions")), writer).pipe(Effect.timeout("5 seconds"))
      expect(seen).toEqual(Option.some({ name: "1.json" }))
    }))
})

/**
 * What only an unprivileged process can show on the real OS: a chown it may not make. The port runs
 * in a child process as a second user (uid 1000 via `setpriv`), from a staged bundle of the port.
 */
const canSwitchUser = process.getuid?.() === 0 && (() => {
  try {
    execFileSync("setpriv", ["--reuid=1000", "--regid=1000", "--clear-groups", "true"])
    return true
  } catch {
    return false
  }
})()

describe.runIf(canSwitchUser)("Files (node, as uid 1000 through setpriv)", () => {
  // Bundled into a copy that uid 1000 can read wherever this checkout is.
  const staged = stagedForOtherUsers()
  const filesNode = Path.resolve(import.meta.dirname, "../src/layers/FilesNode.ts")
  const script = () =>
    staged.script(
      "files-as-user",
      `
    import { make } from ${JSON.stringify(filesNode)}
    import { Effect } from "effect"
    import * as fs from "node:fs"
    const files = make()
    const [dir] = process.argv.slice(2)
    const bytes = new TextEncoder().encode("{}")
    const outcome = (effect) => Effect.runPromise(Effect.match(effect, {
      onFailure: (e) => ({ reason: e.reason, syscall: e.syscall }), onSuccess: () => "ok" }))
    const result = {
      own: await outcome(files.writeNewFile(dir + "/own.tmp", bytes, 0o600, { uid: 1000, gid: 1000 })),
      theirs: await outcome(files.writeNewFile(dir + "/theirs.tmp", bytes, 0o600, { uid: 65534, gid: 65534 })),
      directory: await outcome(files.makeDirectory(dir + "/a/b", 0o700, { uid: 65534, gid: 65534 })),
      left: fs.readdirSync(dir).sort()
    }
    process.stdout.write(JSON.stringify(result))`
    )

  it("a chown it may not make is PermissionDenied (fchown), and leaves nothing behind", () => {
    const dir = NFS.mkdtempSync(Path.join(OS.tmpdir(), "claude-peers-files-user-"))
    try {
      NFS.chownSync(dir, 1000, 1000)
      const out = execFileSync(
        "setpriv",
        ["--reuid=1000", "--regid=1000", "--clear-groups", process.execPath, script(), dir],
        { cwd: Path.resolve(import.meta.dirname, ".."), encoding: "utf8" }
      )
      expect(JSON.parse(out)).toEqual({
        own: "ok",
        theirs: { reason: "PermissionDenied", syscall: "fchown" },
        directory: { reason: "PermissionDenied", syscall: "fchown" },
        left: ["own.tmp"]
      })
      expect(NFS.statSync(Path.join(dir, "own.tmp"))).toMatchObject({ uid: 1000, gid: 1000 })
    } finally {
      NFS.rmSync(dir, { recursive: true, force: true })
    }
  })
})
