/**
 * The file port over an in-memory tree (`MemoryTree.ts`), shipped for users' tests. Every operation
 * is synchronous once run, so it is atomic with respect to every other fiber; faults are injected
 * only through the tree's hooks.
 */
import { SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import {
  type BoundedRead,
  type CurrentTarget,
  type DirectoryEntry,
  type DirectoryWatchOptions,
  type ExtendedAttributes,
  Files,
  type FilesPrimitives,
  make as makeFiles,
  type Owner,
  type WatchEvent
} from "../services/Files.js"
import type { MemoryTree } from "./MemoryTree.js"
import { infoOf, type Listener, type Located, type Node, notify, systemError } from "./MemoryTreeKernel.js"

/** The port over `tree`. */
export const make = (tree: MemoryTree): Files => {
  const kernel = tree.kernel

  /**
   * Runs `body` when the effect runs. A thrown `SystemError` is the operation's failure; anything
   * else thrown (a hook's own bug) is a defect.
   */
  const run = <A>(body: () => A): Effect.Effect<A, SystemError> =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(body())
      } catch (error) {
        if (error instanceof SystemError) return Effect.fail(error)
        throw error
      }
    })

  const entriesOf = (node: Node, path: string): ReadonlyArray<DirectoryEntry> => {
    if (node.type !== "Directory") throw systemError("ENOTDIR", "readDirectory", "scandir", path)
    kernel.requireReadable(node, "readDirectory", "scandir", path)
    return [...node.entries.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, entry]): DirectoryEntry => ({ name, type: entry.type }))
  }

  const readDirectory = (path: string): Effect.Effect<ReadonlyArray<DirectoryEntry>, SystemError> =>
    run(() => entriesOf(kernel.existing(path, true, "readDirectory", "scandir").node, path))

  const readDirectoryIfExists = (path: string): Effect.Effect<Option.Option<ReadonlyArray<DirectoryEntry>>, SystemError> =>
    run(() => {
      let located: Located
      try {
        located = kernel.locate(path, true, "readDirectory", "scandir")
      } catch (error) {
        // A missing directory on the way: absent as well.
        if (error instanceof SystemError && error.reason === "NotFound") return Option.none()
        throw error
      }
      return located.node === undefined ? Option.none() : Option.some(entriesOf(located.node, path))
    })

  const readBounded = (
    path: string,
    options: { readonly maxBytes: number; readonly followLinks: boolean }
  ): Effect.Effect<BoundedRead, SystemError> =>
    run((): BoundedRead => {
      const { node } = kernel.existing(path, options.followLinks, "readBounded", "open")
      // O_NOFOLLOW: the open itself fails on a final link.
      if (node.type === "SymbolicLink") throw systemError("ELOOP", "readBounded", "open", path)
      kernel.requireReadable(node, "readBounded", "open", path)
      let result: BoundedRead
      if (node.type !== "File") {
        result = { _tag: "NotRegular", type: node.type }
      } else {
        const bytes = kernel.readThroughPort(node)
        result = bytes.length > options.maxBytes
          ? { _tag: "TooLarge", size: bytes.length }
          : { _tag: "Read", bytes, owner: { uid: node.uid, gid: node.gid } }
      }
      kernel.runAfterRead(path)
      return result
    })

  /** As on a disk: the file is created as the program's own, then given away, or removed again where it may not be. */
  const writeNewFile = (path: string, bytes: Uint8Array, mode: number, owner?: Owner, attributes?: ExtendedAttributes) =>
    run(() => {
      // As the kernel: only root may set a `trusted.` or `security.` attribute.
      if (attributes?._tag === "Some" && kernel.user.uid !== 0) {
        const privileged = attributes.entries.find((entry) => /^(trusted|security)\./.test(entry.name))
        if (privileged !== undefined) throw systemError("EPERM", "writeNewFile", "setxattr", path)
      }
      const file = {
        type: "File",
        ...kernel.user,
        mode: mode & 0o7777,
        content: Uint8Array.from(bytes),
        tear: undefined,
        unreadable: false,
        ...(attributes?._tag === "Some" ? { attributes: attributes.entries } : {})
      } as const
      kernel.insert(path, { ...file }, "writeNewFile", "open")
      if (owner === undefined || (owner.uid === file.uid && owner.gid === file.gid)) return
      const located = kernel.locate(path, false, "writeNewFile", "fchown")
      if (!kernel.mayGive(owner)) {
        located.parent.entries.delete(located.name)
        notify(located.parent, located.name)
        throw systemError("EPERM", "writeNewFile", "fchown", path)
      }
      if (located.node !== undefined) {
        located.node.uid = owner.uid
        located.node.gid = owner.gid
      }
    })

  /** As `layerNode` finds it: a link is not followed, and what is not a regular file is not read. */
  const currentOf = (target: string, maxBytes: number): CurrentTarget => {
    let located: Located
    try {
      located = kernel.locate(target, false, "replaceIfUnchanged", "lstat")
    } catch (error) {
      if (error instanceof SystemError && error.reason === "NotFound") return { bytes: null, present: false, version: null }
      throw error
    }
    const node = located.node
    if (node === undefined) return { bytes: null, present: false, version: null }
    if (node.type !== "File") return { bytes: null, present: true, version: null }
    kernel.requireReadable(node, "replaceIfUnchanged", "open", target)
    const bytes = kernel.readThroughPort(node)
    const head = bytes.length > maxBytes ? bytes.slice(0, maxBytes + 1) : bytes
    const version = {
      entry: String(kernel.inodeOf(node)),
      size: node.content.length,
      changed: `${kernel.changeOf(node)}:${node.modifiedAtMs ?? 0}`,
      head
    }
    return { bytes: bytes.length > maxBytes ? null : bytes, present: true, version }
  }

  /** The hook queued by `onBeforeReplace` runs first: another writer between our first read and this one. */
  const renameIfCurrent: FilesPrimitives["renameIfCurrent"] = (source, target, maxBytes, rename) =>
    run(() => {
      kernel.runBeforeReplace(target)
      const current = currentOf(target, maxBytes)
      if (!rename(current)) return { current, renamed: false }
      kernel.renameEntry(source, target, "replaceIfUnchanged")
      return { current, renamed: true }
    })

  const syncDirectory = (path: string) =>
    run(() => {
      kernel.requireReadable(kernel.existing(path, true, "syncDirectory", "open").node, "syncDirectory", "open", path)
    })

  const removeFile = (path: string) =>
    run(() => {
      let located: Located
      try {
        located = kernel.locate(path, false, "removeFile", "unlink")
      } catch (error) {
        if (error instanceof SystemError && error.reason === "NotFound") return
        throw error
      }
      if (located.node === undefined) return
      if (located.node.type === "Directory") throw systemError("EISDIR", "removeFile", "unlink", path)
      kernel.requireWritable(located.parent, "removeFile", "unlink", path)
      located.parent.entries.delete(located.name)
      notify(located.parent, located.name)
    })

  /**
   * Watches the directory itself, as inotify does: it ends when that directory is removed or
   * replaced, and, with `recheckEvery`, when a look finds that the path names another node.
   */
  const watch = (path: string, options: DirectoryWatchOptions = {}): Stream.Stream<WatchEvent, SystemError> =>
    Stream.asyncScoped<WatchEvent, SystemError>(
      (emit) =>
        Effect.tap(
          Effect.acquireRelease(
            run(() => {
              const { node } = kernel.existing(path, true, "watch", "watch")
              if (node.type !== "Directory") throw systemError("ENOTDIR", "watch", "watch", path)
              kernel.requireReadable(node, "watch", "watch", path)
              const refusal = kernel.watchRefusal
              if (refusal !== undefined) throw systemError(refusal, "watch", "watch", path)
              const listener: Listener = {
                changed: (name) => void emit.single({ name }),
                removed: () => void emit.end()
              }
              node.listeners.add(listener)
              return { directory: node, listener }
            }),
            ({ directory, listener }) => Effect.sync(() => directory.listeners.delete(listener))
          ),
          ({ directory }) => {
            if (options.recheckEvery === undefined) return Effect.void
            const stillThere = () => {
              try {
                return kernel.existing(path, true, "watch", "stat").node === directory
              } catch {
                return false
              }
            }
            return Effect.forkScoped(
              Effect.sync(() => {
                if (!stillThere()) emit.end()
              }).pipe(Effect.repeat(Schedule.spaced(options.recheckEvery)))
            )
          }
        ),
      "unbounded"
    )

  return makeFiles({
    readDirectory,
    readDirectoryIfExists,
    stat: (path) => run(() => infoOf(kernel.existing(path, true, "stat", "stat").node)),
    statIfExists: (path) =>
      run(() => {
        try {
          return Option.some(infoOf(kernel.existing(path, true, "stat", "stat").node))
        } catch (error) {
          if (error instanceof SystemError && error.reason === "NotFound") return Option.none()
          throw error
        }
      }),
    lstat: (path) => run(() => infoOf(kernel.existing(path, false, "lstat", "lstat").node)),
    readLink: (path) =>
      run(() => {
        const { node } = kernel.existing(path, false, "readLink", "readlink")
        if (node.type !== "SymbolicLink") throw systemError("EINVAL", "readLink", "readlink", path)
        return node.target
      }),
    runsAs: Effect.sync(() => Option.some(kernel.user)),
    realPath: (path) => run(() => kernel.realPath(path, "realPath", "realpath")),
    lstatIfExists: (path) =>
      run(() => {
        try {
          return Option.some(infoOf(kernel.existing(path, false, "lstat", "lstat").node))
        } catch (error) {
          if (error instanceof SystemError && error.reason === "NotFound") return Option.none()
          throw error
        }
      }),
    readBounded,
    makeDirectory: (path, mode, owner) => run(() => kernel.makeDirectories(path, mode, "makeDirectory", owner)),
    writeNewFile,
    extendedAttributes: (path) =>
      run((): ExtendedAttributes => {
        const { node } = kernel.existing(path, false, "extendedAttributes", "getxattr")
        return node.type === "File" && node.attributes !== undefined && node.attributes.length > 0
          ? { _tag: "Some", entries: node.attributes }
          : { _tag: "None" }
      }),
    renameIfCurrent,
    // A read: the hooks queued by `onBeforeReplace` are for replaces.
    current: (target, maxBytes) => run(() => currentOf(target, maxBytes)),
    syncDirectory,
    removeFile,
    watch
  })
}

export const layer = (tree: MemoryTree): Layer.Layer<Files> => Layer.sync(Files, () => make(tree))
