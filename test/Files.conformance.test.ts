/**
 * One behaviour for the file port, run against the in-memory tree and against `node:fs` on a
 * temporary directory: the memory layer is only worth shipping while it fails where a disk fails.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PlatformError } from "@effect/platform/Error"
import { Context, Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as Path from "node:path"
import * as FilesMemory from "../src/layers/FilesMemory.js"
import * as FilesNode from "../src/layers/FilesNode.js"
import { makeMemoryTree, type MemoryTree, type MemoryUser } from "../src/layers/MemoryTree.js"
import { Files, type Owner } from "../src/services/Files.js"
import { stagedForOtherUsers } from "./support/staged.js"

/** How a test arranges the world on either backend, as another process would. */
class Fixture extends Context.Tag("test/Fixture")<Fixture, {
  /** An existing, empty directory for the test. */
  readonly root: string
  /** A character device (Node: `/dev/zero`). */
  readonly characterDevice: string
  readonly writeFile: (path: string, content: string | Uint8Array, mode?: number) => void
  readonly symlink: (target: string, path: string) => void
  readonly mkfifo: (path: string) => void
  readonly mkdir: (path: string) => void
  readonly chmod: (path: string, mode: number) => void
  readonly chown: (path: string, owner: Owner) => void
  readonly remove: (path: string) => void
  /** The owner of what the program creates, as itself. */
  readonly self: Owner
  /** Whether the program may give an entry away (root). */
  readonly privileged: boolean
}>() {}

/** An owner that is not the program's (`nobody` on most systems). */
const stranger: Owner = { uid: 65534, gid: 65534 }

const encode = (text: string) => new TextEncoder().encode(text)
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

const KiB = 1024

const reasonOf = (error: PlatformError) => (error._tag === "SystemError" ? error.reason : error._tag)

const readText = (path: string) =>
  Effect.flatMap(Files, (files) => files.readBounded(path, { maxBytes: 1024 * KiB, followLinks: false })).pipe(
    Effect.map((read) => (read._tag === "Read" ? decode(read.bytes) : read._tag))
  )

const fixtureFor = (memory: MemoryTree, root: string, user: MemoryUser): Context.Tag.Service<Fixture> => ({
  root,
  self: { uid: user.uid, gid: user.gid },
  privileged: user.uid === 0,
  chown: (path, owner) => memory.chown(path, owner.uid, owner.gid),
  characterDevice: "/dev/zero",
  writeFile: (path, content, mode) => memory.writeFile(path, content, mode),
  symlink: (target, path) => memory.symlink(target, path),
  mkfifo: (path) => memory.makeSpecial(path, "FIFO"),
  mkdir: (path) => memory.makeDirectory(path),
  chmod: (path, mode) => memory.chmod(path, mode),
  remove: (path) => memory.remove(path)
})

const memoryEnv = (user: MemoryUser): Layer.Layer<Files | Fixture> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const memory = makeMemoryTree({ user })
      memory.makeDirectory("/work")
      memory.makeSpecial("/dev/zero", "CharacterDevice")
      return Layer.merge(FilesMemory.layer(memory), Layer.succeed(Fixture, fixtureFor(memory, "/work", user)))
    })
  )

const nodeFixture = (root: string): Context.Tag.Service<Fixture> => ({
  root,
  self: { uid: process.getuid!(), gid: process.getgid!() },
  privileged: process.getuid!() === 0,
  chown: (path, owner) => NFS.chownSync(path, owner.uid, owner.gid),
  characterDevice: "/dev/zero",
  writeFile: (path, content, mode) => {
    NFS.mkdirSync(Path.dirname(path), { recursive: true })
    NFS.writeFileSync(path, content)
    if (mode !== undefined) NFS.chmodSync(path, mode)
  },
  symlink: (target, path) => NFS.symlinkSync(target, path),
  mkfifo: (path) => void execFileSync("mkfifo", [path]),
  mkdir: (path) => void NFS.mkdirSync(path, { recursive: true }),
  chmod: (path, mode) => NFS.chmodSync(path, mode),
  remove: (path) => NFS.rmSync(path, { recursive: true })
})

const nodeEnv: Layer.Layer<Files | Fixture> = Layer.merge(
  FilesNode.layer,
  Layer.scoped(
    Fixture,
    Effect.acquireRelease(
      Effect.sync(() => NFS.mkdtempSync(Path.join(OS.tmpdir(), "claude-peers-files-"))),
      (root) => Effect.sync(() => NFS.rmSync(root, { recursive: true, force: true }))
    ).pipe(Effect.map(nodeFixture))
  )
)

/** Runs with a fresh environment: a new tree, or a new temporary directory. */
const inEnv = (env: Layer.Layer<Files | Fixture>) =>
<A, E>(body: (files: Files, fixture: Context.Tag.Service<Fixture>) => Effect.Effect<A, E, Files | Fixture>) =>
  Effect.flatMap(Effect.all([Files, Fixture]), ([files, fixture]) => body(files, fixture)).pipe(
    Effect.provide(env)
  )

/** The umask only narrows what `open` is given; `writeNewFile` must set the mode exactly anyway. */
const withUmask = (mask: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => process.umask(mask)),
    () => effect,
    (previous) => Effect.sync(() => process.umask(previous))
  )

const suite = (name: string, env: Layer.Layer<Files | Fixture>) =>
  describe(name, () => {
    const run = inEnv(env)

    it.effect("readDirectory reports each entry's own type without following links", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          fx.writeFile(Path.join(fx.root, "1.json"), "{}")
          fx.mkdir(Path.join(fx.root, "2.json"))
          fx.symlink("1.json", Path.join(fx.root, "3.json"))
          fx.mkfifo(Path.join(fx.root, "4.json"))
          const entries = yield* files.readDirectory(fx.root)
          expect([...entries].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
            { name: "1.json", type: "File" },
            { name: "2.json", type: "Directory" },
            { name: "3.json", type: "SymbolicLink" },
            { name: "4.json", type: "FIFO" }
          ])
        })
      ))

    it.effect("readDirectory of a missing directory fails NotFound with its path", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const missing = Path.join(fx.root, "sessions")
          const error = yield* Effect.flip(files.readDirectory(missing))
          expect(error).toMatchObject({ _tag: "SystemError", reason: "NotFound", module: "FileSystem" })
          expect(error._tag === "SystemError" && error.pathOrDescriptor).toBe(missing)
        })
      ))

    it.effect("readDirectoryIfExists: none for a missing directory, a missing parent or a dangling link; else readDirectory's entries", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          expect(yield* files.readDirectoryIfExists(Path.join(fx.root, "sessions"))).toEqual(Option.none())
          expect(yield* files.readDirectoryIfExists(Path.join(fx.root, "home", "sessions"))).toEqual(Option.none())
          fx.symlink(Path.join(fx.root, "gone"), Path.join(fx.root, "dangling"))
          expect(yield* files.readDirectoryIfExists(Path.join(fx.root, "dangling"))).toEqual(Option.none())
          fx.writeFile(Path.join(fx.root, "sessions", "1.json"), "{}")
          fx.mkdir(Path.join(fx.root, "sessions", "2.json"))
          const listed = yield* files.readDirectoryIfExists(Path.join(fx.root, "sessions"))
          const sorted = (entries: ReadonlyArray<{ readonly name: string }>) => [...entries].sort((a, b) => a.name.localeCompare(b.name))
          expect(Option.map(listed, sorted)).toEqual(Option.some([{ name: "1.json", type: "File" }, { name: "2.json", type: "Directory" }]))
        })
      ))

    it.effect("readDirectoryIfExists fails, as readDirectory does, where something else than a directory is in the way", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          fx.writeFile(Path.join(fx.root, "home"), "not a directory")
          for (const path of [Path.join(fx.root, "home"), Path.join(fx.root, "home", "sessions")]) {
            const error = yield* Effect.flip(files.readDirectoryIfExists(path))
            expect(error, path).toMatchObject({ _tag: "SystemError", reason: "BadResource", module: "FileSystem" })
            expect(reasonOf(yield* Effect.flip(files.readDirectory(path)))).toBe("BadResource")
          }
        })
      ))

    it.effect("stat follows a link, lstat does not, and both report permission bits only", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "settings.json")
          fx.writeFile(file, "{}\n", 0o640)
          fx.symlink(file, Path.join(fx.root, "link"))
          expect(yield* files.stat(Path.join(fx.root, "link"))).toEqual({ type: "File", size: 3, mode: 0o640, ...fx.self })
          expect((yield* files.lstat(Path.join(fx.root, "link"))).type).toBe("SymbolicLink")
          expect((yield* files.stat(fx.root)).type).toBe("Directory")
        })
      ))

    it.effect("a link loop fails BadResource", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          fx.symlink("b", Path.join(fx.root, "a"))
          fx.symlink("a", Path.join(fx.root, "b"))
          expect(reasonOf(yield* Effect.flip(files.stat(Path.join(fx.root, "a"))))).toBe("BadResource")
        })
      ))

    it.effect("a link to a character device stats as one and is NotRegular, never read", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const link = Path.join(fx.root, "1.json")
          fx.symlink(fx.characterDevice, link)
          expect((yield* files.stat(link)).type).toBe("CharacterDevice")
          const read = yield* files.readBounded(link, { maxBytes: 256 * KiB, followLinks: true })
          expect(read).toEqual({ _tag: "NotRegular", type: "CharacterDevice" })
        })
      ))

    it.live("readBounded of a FIFO with no writer is NotRegular and does not hang", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const fifo = Path.join(fx.root, "1.json")
          fx.mkfifo(fifo)
          const read = yield* files.readBounded(fifo, { maxBytes: 256 * KiB, followLinks: true }).pipe(
            Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "the read blocked on the FIFO" })
          )
          expect(read).toEqual({ _tag: "NotRegular", type: "FIFO" })
        })
      ), 5000)

    it.effect("readBounded of a directory is NotRegular", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const read = yield* files.readBounded(fx.root, { maxBytes: 256 * KiB, followLinks: false })
          expect(read).toEqual({ _tag: "NotRegular", type: "Directory" })
        })
      ))

    it.effect("readBounded reads a file of up to maxBytes and refuses a larger one as TooLarge", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const small = Path.join(fx.root, "small.json")
          const exact = Path.join(fx.root, "exact.json")
          const large = Path.join(fx.root, "large.json")
          fx.writeFile(small, "{\"pid\":1}")
          fx.writeFile(exact, new Uint8Array(256 * KiB).fill(0x20))
          fx.writeFile(large, new Uint8Array(300 * KiB).fill(0x20))
          const options = { maxBytes: 256 * KiB, followLinks: false }
          expect(yield* files.readBounded(small, options)).toEqual({ _tag: "Read", bytes: encode("{\"pid\":1}") })
          const atLimit = yield* files.readBounded(exact, options)
          expect(atLimit._tag === "Read" && atLimit.bytes.length).toBe(256 * KiB)
          expect(yield* files.readBounded(large, options)).toEqual({ _tag: "TooLarge", size: 300 * KiB })
        })
      ))

    it.effect("readBounded with followLinks false fails BadResource on a link; with true it reads the target", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "real.json")
          const link = Path.join(fx.root, "settings.json")
          fx.writeFile(file, "{}")
          fx.symlink(file, link)
          const error = yield* Effect.flip(files.readBounded(link, { maxBytes: KiB, followLinks: false }))
          expect(reasonOf(error)).toBe("BadResource")
          expect(yield* files.readBounded(link, { maxBytes: KiB, followLinks: true })).toEqual({
            _tag: "Read",
            bytes: encode("{}")
          })
        })
      ))

    it.effect("readBounded of a missing file fails NotFound", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(
            files.readBounded(Path.join(fx.root, "gone.json"), { maxBytes: KiB, followLinks: true })
          )
          expect(reasonOf(error)).toBe("NotFound")
        })
      ))

    it.effect("writeNewFile sets the exact mode whatever the umask, and writes every byte", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const open = Path.join(fx.root, "open")
          const secret = Path.join(fx.root, "secret")
          yield* files.writeNewFile(open, encode("shared"), 0o666)
          yield* files.writeNewFile(secret, encode("mine"), 0o600)
          expect(yield* files.stat(open)).toEqual({ type: "File", size: 6, mode: 0o666, ...fx.self })
          expect(yield* files.stat(secret)).toEqual({ type: "File", size: 4, mode: 0o600, ...fx.self })
          expect(yield* readText(open)).toBe("shared")
        }).pipe(withUmask(0o022))
      ))

    it.effect("writeNewFile is exclusive: an existing file or any link, even dangling, is AlreadyExists", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const lock = Path.join(fx.root, ".settings.json.claude-peers.lock")
          yield* files.writeNewFile(lock, encode("1 100\n"), 0o600)
          const again = yield* Effect.flip(files.writeNewFile(lock, encode("2 200\n"), 0o600))
          expect(reasonOf(again)).toBe("AlreadyExists")
          expect(yield* readText(lock)).toBe("1 100\n")

          const link = Path.join(fx.root, "trap")
          const victim = Path.join(fx.root, "victim")
          fx.symlink(victim, link)
          const throughLink = yield* Effect.flip(files.writeNewFile(link, encode("x"), 0o600))
          expect(reasonOf(throughLink)).toBe("AlreadyExists")
          expect(reasonOf(yield* Effect.flip(files.lstat(victim)))).toBe("NotFound")
        })
      ))

    it.effect("makeDirectory creates missing parents and keeps existing ones", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const sessions = Path.join(fx.root, "home", ".claude", "sessions")
          yield* files.makeDirectory(sessions, 0o700)
          yield* files.makeDirectory(sessions, 0o700)
          expect((yield* files.stat(sessions)).type).toBe("Directory")
          yield* files.writeNewFile(Path.join(sessions, "1.json"), encode("{}"), 0o600)
          expect((yield* files.readDirectory(sessions)).map((entry) => entry.name)).toEqual(["1.json"])
        })
      ))

    it.effect("replaceIfUnchanged renames when the target still holds the expected bytes", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const target = Path.join(fx.root, "settings.json")
          const source = Path.join(fx.root, ".settings.json.claude-peers-1-a.tmp")
          fx.writeFile(target, "{}")
          fx.writeFile(source, "{\"crossSessionInbound\":\"accept\"}")
          const outcome = yield* files.replaceIfUnchanged(source, target, encode("{}"), 1024 * KiB)
          expect(outcome).toEqual({ _tag: "Replaced" })
          expect(yield* readText(target)).toBe("{\"crossSessionInbound\":\"accept\"}")
          expect(reasonOf(yield* Effect.flip(files.lstat(source)))).toBe("NotFound")
        })
      ))

    it.effect("replaceIfUnchanged leaves the target and the source alone when the target changed", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const target = Path.join(fx.root, "settings.json")
          const source = Path.join(fx.root, "new.tmp")
          fx.writeFile(target, "{\"theirs\":1}")
          fx.writeFile(source, "{\"ours\":1}")
          const outcome = yield* files.replaceIfUnchanged(source, target, encode("{}"), 1024 * KiB)
          expect(outcome).toEqual({ _tag: "Changed", bytes: encode("{\"theirs\":1}") })
          expect(yield* readText(target)).toBe("{\"theirs\":1}")
          expect(yield* readText(source)).toBe("{\"ours\":1}")
        })
      ))

    it.effect("replaceIfUnchanged with expected null requires the target to be absent", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const target = Path.join(fx.root, "settings.json")
          const source = Path.join(fx.root, "new.tmp")
          fx.writeFile(source, "{}")
          expect(yield* files.replaceIfUnchanged(source, target, null, KiB)).toEqual({ _tag: "Replaced" })
          fx.writeFile(source, "{\"again\":1}")
          expect(yield* files.replaceIfUnchanged(source, target, null, KiB)).toEqual({
            _tag: "Changed",
            bytes: encode("{}")
          })
          expect(yield* readText(target)).toBe("{}")
        })
      ))

    it.effect("replaceIfUnchanged of a vanished target is Changed with null bytes", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const source = Path.join(fx.root, "new.tmp")
          fx.writeFile(source, "{}")
          const outcome = yield* files.replaceIfUnchanged(source, Path.join(fx.root, "settings.json"), encode("{}"), KiB)
          expect(outcome).toEqual({ _tag: "Changed", bytes: null })
          expect(yield* readText(source)).toBe("{}")
        })
      ))

    it.live("replaceIfUnchanged never reads a FIFO, link or oversized target: Changed with null bytes", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const source = Path.join(fx.root, "new.tmp")
          const fifo = Path.join(fx.root, "fifo.json")
          const link = Path.join(fx.root, "link.json")
          const large = Path.join(fx.root, "large.json")
          fx.writeFile(source, "{}")
          fx.mkfifo(fifo)
          fx.writeFile(Path.join(fx.root, "real.json"), "{}")
          fx.symlink("real.json", link)
          fx.writeFile(large, "{} ".repeat(KiB))
          for (const target of [fifo, link, large]) {
            const outcome = yield* files.replaceIfUnchanged(source, target, encode("{}"), KiB).pipe(
              Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => `blocked on ${target}` })
            )
            expect(outcome).toEqual({ _tag: "Changed", bytes: null })
          }
          expect((yield* files.lstat(fifo)).type).toBe("FIFO")
          expect((yield* files.lstat(link)).type).toBe("SymbolicLink")
          expect(yield* readText(source)).toBe("{}")
        })
      ), 10000)

    it.effect("removeFile removes a file, and a missing one is not an error", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const lock = Path.join(fx.root, "lock")
          fx.writeFile(lock, "1 1\n")
          yield* files.removeFile(lock)
          yield* files.removeFile(lock)
          yield* files.removeFile(Path.join(fx.root, "no-such-dir", "lock"))
          expect(yield* files.readDirectory(fx.root)).toEqual([])
        })
      ))

    it.effect("syncDirectory succeeds on a directory and fails NotFound on a missing one", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          yield* files.syncDirectory(fx.root)
          const error = yield* Effect.flip(files.syncDirectory(Path.join(fx.root, "missing")))
          expect(reasonOf(error)).toBe("NotFound")
        })
      ))

    it.live("watch emits the name of a file written in the directory", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const sessions = Path.join(fx.root, "sessions")
          fx.mkdir(sessions)
          // Written until seen: the watcher starts when the stream is first pulled, not before.
          const writer = Effect.sync(() => fx.writeFile(Path.join(sessions, "4242.json"), "{}")).pipe(
            Effect.repeat(Schedule.spaced("25 millis")),
            Effect.zipRight(Effect.never)
          )
          const first = files.watch(sessions).pipe(
            Stream.filter((event) => event.name === "4242.json"),
            Stream.runHead
          )
          const seen = yield* Effect.race(first, writer).pipe(Effect.timeout("5 seconds"))
          expect(seen).toEqual(Option.some({ name: "4242.json" }))
        })
      ), 10000)

    it.effect("watch of a missing directory fails NotFound", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(files.watch(Path.join(fx.root, "sessions"))))
          expect(reasonOf(error)).toBe("NotFound")
        })
      ))

    it.effect("stat and lstat report the owner; lstat a link's own", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "settings.json")
          const link = Path.join(fx.root, "link")
          fx.writeFile(file, "{}")
          fx.symlink(file, link)
          expect(yield* files.stat(file)).toMatchObject(fx.self)
          if (!fx.privileged) return
          fx.chown(file, stranger)
          expect(yield* files.stat(link)).toMatchObject(stranger)
          expect(yield* files.lstat(link)).toMatchObject(fx.self)
        })
      ))

    it.effect("writeNewFile with the program's own owner needs no privilege", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const temp = Path.join(fx.root, "own.tmp")
          yield* files.writeNewFile(temp, encode("{}"), 0o640, fx.self)
          expect(yield* files.stat(temp)).toEqual({ type: "File", size: 2, mode: 0o640, ...fx.self })
        }).pipe(withUmask(0o077))
      ))

    it.effect("writeNewFile with another owner: root gives it, mode kept; anyone else is refused and leaves nothing", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const temp = Path.join(fx.root, "theirs.tmp")
          const written = yield* Effect.either(files.writeNewFile(temp, encode("{\"a\":1}"), 0o640, stranger))
          if (fx.privileged) {
            expect(written._tag).toBe("Right")
            expect(yield* files.stat(temp)).toEqual({ type: "File", size: 7, mode: 0o640, ...stranger })
            expect(yield* readText(temp)).toBe("{\"a\":1}")
          } else {
            expect(written._tag === "Left" && written.left).toMatchObject({ reason: "PermissionDenied", syscall: "fchown" })
            expect(yield* files.readDirectory(fx.root)).toEqual([])
          }
        })
      ))

    it.effect("writeNewFile with an owner is still exclusive: an existing file is AlreadyExists and keeps its owner", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const lock = Path.join(fx.root, "lock")
          fx.writeFile(lock, "1 1\n")
          const again = yield* Effect.flip(files.writeNewFile(lock, encode("2 2\n"), 0o600, stranger))
          expect(reasonOf(again)).toBe("AlreadyExists")
          expect(yield* files.stat(lock)).toMatchObject(fx.self)
          expect(yield* readText(lock)).toBe("1 1\n")
        })
      ))

    it.effect("makeDirectory with an owner gives it to each directory it creates, and to no existing one", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const home = Path.join(fx.root, "home")
          const sessions = Path.join(home, ".claude", "sessions")
          fx.mkdir(home)
          const owner = fx.privileged ? stranger : fx.self
          yield* files.makeDirectory(sessions, 0o700, owner)
          expect(yield* files.stat(home)).toMatchObject(fx.self)
          expect(yield* files.stat(Path.join(home, ".claude"))).toMatchObject({ type: "Directory", ...owner })
          expect(yield* files.stat(sessions)).toMatchObject({ type: "Directory", ...owner })
          yield* files.makeDirectory(sessions, 0o700, fx.self)
          expect(yield* files.stat(sessions)).toMatchObject(owner)
          if (fx.privileged) return
          const refused = yield* Effect.flip(files.makeDirectory(Path.join(fx.root, "other", "sub"), 0o700, stranger))
          expect(refused).toMatchObject({ reason: "PermissionDenied", syscall: "fchown" })
          expect((yield* files.readDirectory(fx.root)).map((entry) => entry.name)).toEqual(["home"])
        })
      ))

    it.live("watch ends when the directory is removed", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const sessions = Path.join(fx.root, "sessions")
          fx.mkdir(sessions)
          const watching = yield* Effect.fork(Stream.runDrain(files.watch(sessions)))
          yield* Effect.sleep("150 millis")
          fx.remove(sessions)
          yield* Fiber.join(watching).pipe(
            Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "the watch outlived its directory" })
          )
        })
      ), 10000)
  })

suite("Files (memory)", memoryEnv({ uid: 1000, gid: 1000 }))
suite("Files (memory, as root)", memoryEnv({ uid: 0, gid: 0 }))
suite(`Files (node, as ${process.getuid!() === 0 ? "root" : "a user"})`, nodeEnv)

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
      const { memory, files } = setup()
      const read = files.readBounded(settings, large)
      const write = files.writeNewFile("/home/u/lock", encode("x"), 0o600)
      memory.writeFile(settings, "{}")
      expect(memory.exists("/home/u/lock")).toBe(false)
      expect(yield* read).toEqual({ _tag: "Read", bytes: encode("{}") })
      yield* write
      expect(memory.readText("/home/u/lock")).toBe("x")
    }))

  it.effect("tearNextReads shows a prefix to the next reads only", () =>
    Effect.gen(function*() {
      const { memory, files } = setup()
      memory.writeFile(settings, "{\"a\":1}")
      memory.tearNextReads(settings, 3, 2)
      expect(yield* files.readBounded(settings, large)).toEqual({ _tag: "Read", bytes: encode("{\"a") })
      expect(yield* files.readBounded(settings, large)).toEqual({ _tag: "Read", bytes: encode("{\"a") })
      expect(yield* files.readBounded(settings, large)).toEqual({ _tag: "Read", bytes: encode("{\"a\":1}") })
      expect(memory.readText(settings)).toBe("{\"a\":1}")
    }))

  it.effect("onBeforeReplace runs one queued hook per replace, before the re-read", () =>
    Effect.gen(function*() {
      const { memory, files } = setup()
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

  it.effect("onAfterRead runs right after a read returned, so the read saw the old bytes", () =>
    Effect.gen(function*() {
      const { memory, files } = setup()
      memory.writeFile(settings, "{}")
      memory.onAfterRead((path) => memory.writeFile(path, "{\"edited\":1}"))
      expect(yield* files.readBounded(settings, large)).toEqual({ _tag: "Read", bytes: encode("{}") })
      expect(memory.readText(settings)).toBe("{\"edited\":1}")
      expect(yield* files.readBounded(settings, large)).toEqual({ _tag: "Read", bytes: encode("{\"edited\":1}") })
    }))

  it.effect("setUnreadable fails reads with PermissionDenied but not stat", () =>
    Effect.gen(function*() {
      const { memory, files } = setup()
      memory.writeFile(settings, "{}", 0o600)
      memory.setUnreadable(settings)
      expect(reasonOf(yield* Effect.flip(files.readBounded(settings, large)))).toBe("PermissionDenied")
      expect(yield* files.stat(settings)).toEqual({ type: "File", size: 2, mode: 0o600, uid: 1000, gid: 1000 })
      memory.setUnreadable(settings, false)
      expect((yield* files.readBounded(settings, large))._tag).toBe("Read")
    }))

  it.effect("permission bits are enforced as for a non-root user", () =>
    Effect.gen(function*() {
      const { memory, files } = setup()
      const home = "/home/u/.claude"
      memory.writeFile(settings, "{}", 0o200)
      expect(reasonOf(yield* Effect.flip(files.readBounded(settings, large)))).toBe("PermissionDenied")
      memory.chmod(settings, 0o600)
      memory.writeFile(`${home}/new.tmp`, "{\"a\":1}")

      memory.chmod(home, 0o555)
      const denied = (effect: Effect.Effect<unknown, PlatformError>) =>
        Effect.map(Effect.flip(effect), reasonOf)
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
      const { memory, files } = setup()
      memory.writeFile("/home/u/dotfiles/settings.json", "{}")
      memory.symlink("../dotfiles/./settings.json", settings)
      expect(yield* files.readBounded(settings, { maxBytes: KiB, followLinks: true })).toEqual({
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
      const { memory, files } = setup()
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
 * in a child process as a second user (uid 1000 via `setpriv`), from the built `dist/`.
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
  const script = () => staged.script("files-as-user", `
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
    process.stdout.write(JSON.stringify(result))`)

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
