/**
 * The file port's conformance suite, as a function of a layer: every layer of `Files` (the shipped
 * `layerFiles` of `claude-peers/node` and of `claude-peers/testing`, or a port author's own) must
 * pass it, so that a test written against the memory tree holds on a disk. The layer also provides a
 * `FilesFixture`: how a test arranges that layer's world as another process would (a FIFO, a link, a
 * stranger's file). Each test runs on a fresh world (`Effect.provide` of the layer per test).
 */
import type { PlatformError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { execFileSync } from "node:child_process"
import * as NFS from "node:fs"
import * as OS from "node:os"
import * as Path from "node:path"
import * as FilesMemory from "../layers/FilesMemory.js"
import { makeMemoryTree, type MemoryTree } from "../layers/MemoryTree.js"
import type { MemoryUser } from "../layers/MemoryTreeKernel.js"
import { Files, type Owner } from "../services/Files.js"

/** How a test arranges the world beneath a `Files` layer, as another process would. */
export class FilesFixture extends Context.Tag("claude-peers/testing/FilesFixture")<FilesFixture, {
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
  /**
   * Sets a file's modification time, as `touch -d` does; where a fixture has none, the cases that
   * need a time that differs whatever the clock's granularity leave that step out.
   */
  readonly setModifiedTime?: ((path: string, ms: number) => void) | undefined
  /** The owner of what the program creates, as itself. */
  readonly self: Owner
  /** Whether the program may give an entry away (root). */
  readonly privileged: boolean
}>() {}

/** The fixture over a memory tree, whose program runs as `user`; `root` must exist. */
export const fixtureOfTree = (tree: MemoryTree, root: string, user: MemoryUser): Context.Tag.Service<FilesFixture> => ({
  root,
  self: { uid: user.uid, gid: user.gid },
  privileged: user.uid === 0,
  chown: (path, owner) => tree.chown(path, owner.uid, owner.gid),
  characterDevice: "/dev/zero",
  writeFile: (path, content, mode) => tree.writeFile(path, content, mode),
  symlink: (target, path) => tree.symlink(target, path),
  mkfifo: (path) => tree.makeSpecial(path, "FIFO"),
  mkdir: (path) => tree.makeDirectory(path),
  chmod: (path, mode) => tree.chmod(path, mode),
  remove: (path) => tree.remove(path),
  setModifiedTime: (path, ms) => tree.setModifiedTime(path, ms)
})

/** The shipped memory port over a fresh tree (with `/work` and `/dev/zero`), and its fixture. */
export const layerMemory = (user: MemoryUser = { uid: 1000, gid: 1000 }): Layer.Layer<Files | FilesFixture> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const tree = makeMemoryTree({ user })
      tree.makeDirectory("/work")
      tree.makeSpecial("/dev/zero", "CharacterDevice")
      return Layer.merge(FilesMemory.layer(tree), Layer.succeed(FilesFixture, fixtureOfTree(tree, "/work", user)))
    })
  )

/**
 * The fixture on this machine's file system: a fresh temporary directory, removed with the layer.
 * For a layer of `Files` on `node:fs` (or anything that sees the same disk).
 */
export const layerFixtureNode: Layer.Layer<FilesFixture> = Layer.scoped(
  FilesFixture,
  Effect.acquireRelease(
    Effect.sync(() => NFS.mkdtempSync(Path.join(OS.tmpdir(), "claude-peers-files-"))),
    (root) => Effect.sync(() => NFS.rmSync(root, { recursive: true, force: true }))
  ).pipe(Effect.map((root): Context.Tag.Service<FilesFixture> => ({
    root,
    self: { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 },
    privileged: process.getuid?.() === 0,
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
    remove: (path) => NFS.rmSync(path, { recursive: true }),
    setModifiedTime: (path, ms) => NFS.utimesSync(path, new Date(ms), new Date(ms))
  })))
)

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

/** The umask only narrows what `open` is given; `writeNewFile` must set the mode exactly anyway. */
const withUmask = (mask: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => process.umask(mask)),
    () => effect,
    (previous) => Effect.sync(() => process.umask(previous))
  )

/**
 * Declares the suite (`describe(name, …)` with `@effect/vitest`'s `it.effect` and `it.live`) for a
 * layer of `Files` and its `FilesFixture`, built afresh for each test.
 */
export const filesConformance = <E>(name: string, layer: Layer.Layer<Files | FilesFixture, E>): void => {
  describe(name, () => {
    const run = <A, E2>(
      body: (files: Files, fixture: Context.Tag.Service<FilesFixture>) => Effect.Effect<A, E2, Files | FilesFixture>
    ) =>
      Effect.flatMap(Effect.all([Files, FilesFixture]), ([files, fixture]) => body(files, fixture)).pipe(
        Effect.provide(layer)
      )

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

    it.effect("statIfExists and lstatIfExists: none where nothing is, what stat and lstat answer elsewhere", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "settings.json")
          fx.symlink(Path.join(fx.root, "gone"), Path.join(fx.root, "dangling"))
          for (const missing of [file, Path.join(fx.root, "home", "settings.json")]) {
            expect(yield* files.statIfExists(missing), missing).toEqual(Option.none())
            expect(yield* files.lstatIfExists(missing), missing).toEqual(Option.none())
          }
          expect(yield* files.statIfExists(Path.join(fx.root, "dangling"))).toEqual(Option.none())
          expect(Option.map(yield* files.lstatIfExists(Path.join(fx.root, "dangling")), (info) => info.type)).toEqual(Option.some("SymbolicLink"))
          fx.writeFile(file, "{}\n", 0o640)
          expect(yield* files.statIfExists(file)).toEqual(Option.some(yield* files.stat(file)))
          expect(yield* files.lstatIfExists(file)).toEqual(Option.some(yield* files.lstat(file)))
          // Something else than a directory in the way is a failure, as it is for stat.
          expect(reasonOf(yield* Effect.flip(files.statIfExists(Path.join(file, "x"))))).toBe(reasonOf(yield* Effect.flip(files.stat(Path.join(file, "x")))))
        })
      ))

    it.effect("stat follows a link, lstat does not, and both report permission bits only", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "settings.json")
          fx.writeFile(file, "{}\n", 0o640)
          fx.symlink(file, Path.join(fx.root, "link"))
          expect(yield* files.stat(Path.join(fx.root, "link"))).toMatchObject({ type: "File", size: 3, mode: 0o640, ...fx.self })
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
          expect(yield* files.readBounded(small, options)).toMatchObject({ _tag: "Read", bytes: encode("{\"pid\":1}") })
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
          expect(yield* files.readBounded(link, { maxBytes: KiB, followLinks: true })).toMatchObject({
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
          expect(yield* files.stat(open)).toMatchObject({ type: "File", size: 6, mode: 0o666, ...fx.self })
          expect(yield* files.stat(secret)).toMatchObject({ type: "File", size: 4, mode: 0o600, ...fx.self })
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

    it.effect("replaceIfUnchanged compares a target of exactly maxBytes; one byte more is Changed with null bytes", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const target = Path.join(fx.root, "settings.json")
          const source = Path.join(fx.root, "new.tmp")
          const exact = new Uint8Array(KiB).fill(0x20)
          fx.writeFile(source, "{}")
          fx.writeFile(target, new Uint8Array(KiB + 1).fill(0x20))
          expect(yield* files.replaceIfUnchanged(source, target, exact, KiB)).toEqual({ _tag: "Changed", bytes: null })
          fx.writeFile(target, exact)
          expect(yield* files.replaceIfUnchanged(source, target, new Uint8Array(KiB).fill(0x21), KiB)).toEqual({ _tag: "Changed", bytes: exact })
          expect(yield* files.replaceIfUnchanged(source, target, exact, KiB)).toEqual({ _tag: "Replaced" })
          expect(yield* readText(target)).toBe("{}")
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

    it.effect("replaceIfSameVersion renames over the version current saw, and over no other", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const target = Path.join(fx.root, "lock")
          const source = Path.join(fx.root, "new.tmp")
          const versionOf = (maxBytes: number) =>
            Effect.map(files.current(target, maxBytes), (current) => {
              if (current.version === null) throw new Error(`no version of ${target}`)
              return current.version
            })
          const large = new Uint8Array(8 * KiB).fill(0x78)
          fx.writeFile(source, "1 1\n")
          fx.writeFile(target, large)
          const seen = yield* files.current(target, KiB)
          expect(seen).toMatchObject({ present: true, bytes: null, version: { size: 8 * KiB, head: large.subarray(0, KiB + 1) } })
          // Rewritten in place with other first bytes, then with one byte more, then with the same
          // size and first bytes and other bytes past them (only its times tell this one: one set
          // far back, so that a clock's coarse tick cannot give the rewrite the time it had).
          const changes = [
            () => fx.writeFile(target, new Uint8Array(8 * KiB).fill(0x79)),
            () => fx.writeFile(target, new Uint8Array(8 * KiB + 1).fill(0x79)),
            ...(fx.setModifiedTime === undefined ? [] : [() => {
              fx.writeFile(target, new Uint8Array(8 * KiB + 1).fill(0x79).fill(0x7a, 4 * KiB))
              fx.setModifiedTime!(target, Date.UTC(2001, 0, 1))
            }])
          ]
          for (const change of changes) {
            const before = yield* versionOf(KiB)
            change()
            expect(yield* files.replaceIfSameVersion(source, target, before, KiB)).toEqual({ _tag: "Changed", bytes: null })
            expect(yield* readText(source)).toBe("1 1\n")
          }
          expect(yield* files.replaceIfSameVersion(source, target, yield* versionOf(KiB), KiB)).toEqual({ _tag: "Replaced" })
          expect(yield* readText(target)).toBe("1 1\n")
          expect((yield* files.current(Path.join(fx.root, "missing"), KiB)).present).toBe(false)
        })
      ))

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

    it.effect("readBounded reports the owner of the file it read, where it reports one", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const file = Path.join(fx.root, "4242.json")
          fx.writeFile(file, "{}")
          const own = yield* files.readBounded(file, { maxBytes: KiB, followLinks: true })
          if (own._tag !== "Read" || own.owner === undefined) return
          expect(own.owner).toEqual(fx.self)
          if (!fx.privileged) return
          fx.chown(file, stranger)
          expect(yield* files.readBounded(file, { maxBytes: KiB, followLinks: true })).toMatchObject({ _tag: "Read", owner: stranger })
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
          expect(yield* files.stat(temp)).toMatchObject({ type: "File", size: 2, mode: 0o640, ...fx.self })
        }).pipe(withUmask(0o077))
      ))

    it.effect("writeNewFile with another owner: root gives it, mode kept; anyone else is refused and leaves nothing", () =>
      run((files, fx) =>
        Effect.gen(function*() {
          const temp = Path.join(fx.root, "theirs.tmp")
          const written = yield* Effect.either(files.writeNewFile(temp, encode("{\"a\":1}"), 0o640, stranger))
          if (fx.privileged) {
            expect(written._tag).toBe("Right")
            expect(yield* files.stat(temp)).toMatchObject({ type: "File", size: 7, mode: 0o640, ...stranger })
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
}
