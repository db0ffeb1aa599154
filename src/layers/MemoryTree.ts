/**
 * An in-memory file tree for the tests of programs built on claude-peers: the test's fixture methods
 * (`writeFile`, `symlink`, `tearNextReads`, …) and, for `FilesMemory.ts`, the kernel the file port is
 * built on.
 *
 * It must fail where the real file system fails, or tests pass here and break on a disk: links are
 * followed (at most 40 hops) wherever `open` and `stat` follow them, a FIFO, socket or device is
 * never read, the permission bits are enforced for the tree's user (owner, group or other bits, as
 * the entry's owner says; none for root), only root may give an entry away, a create is exclusive
 * even against a dangling link, and a rename over a file is atomic. The same conformance suite runs
 * against the port over this tree and against the Node layer.
 *
 * Entries are objects and a directory maps names to them, so a renamed file keeps its identity (its
 * torn reads, its watchers) as an inode would.
 *
 * The fixture methods act as the test's author, not as the program: they bypass the permission bits,
 * create missing parents, and throw the `SystemError` the port would fail with.
 */
import type { SystemErrorReason } from "@effect/platform/Error"
import { SystemError } from "@effect/platform/Error"
import * as Path from "node:path"
import type { FileInfo, Owner } from "../services/Files.js"

export type SpecialType = "FIFO" | "Socket" | "CharacterDevice" | "BlockDevice"

/**
 * The user the program runs as. Uid 0 is root: no permission bit holds it back and it may give
 * any entry to anyone. Any other user may give its own entries only to itself and its groups.
 */
export interface MemoryUser {
  readonly uid: number
  readonly gid: number
  /** Supplementary groups, besides `gid`. */
  readonly groups?: ReadonlyArray<number> | undefined
}

export interface MemoryTreeOptions {
  /** Default: uid 1000, gid 1000, not root. Entries the test creates are this user's until `chown`. */
  readonly user?: MemoryUser | undefined
}

/** Why a system refuses a change notification: out of inotify instances, or out of watches. */
export type WatchRefusal = "EMFILE" | "ENOSPC"

export interface MemoryTree {
  /** Creates missing parent directories (0o755); replaces an existing file's content in place, keeping its mode unless one is given (0o644 for a new file). Follows links. */
  writeFile(path: string, content: string | Uint8Array, mode?: number): void
  /** Recursive; existing directories are kept. Mode 0o755 unless given. */
  makeDirectory(path: string, mode?: number): void
  symlink(target: string, path: string): void
  makeSpecial(path: string, type: SpecialType): void
  /** Any entry; a directory with everything in it. */
  remove(path: string): void
  /** What another writer (Claude Code) does: atomic, over a file if there is one. */
  rename(from: string, to: string): void
  /** Follows links, as chmod(2). */
  chmod(path: string, mode: number): void
  /** Follows links, as chown(2). */
  chown(path: string, uid: number, gid: number): void
  /** Follows links; undefined when missing or not a regular file. Sees no tear and no unreadable flag. */
  readFile(path: string): Uint8Array | undefined
  readText(path: string): string | undefined
  /** Like `lstat`: a dangling link exists. */
  exists(path: string): boolean
  /**
   * The entry's identity, as an inode number (links not followed): the same entry keeps it across
   * renames, and a file renamed over another has its own. Undefined when nothing is there.
   */
  inodeOf(path: string): number | undefined
  /** Entry names, sorted; empty when the directory is missing. */
  list(directory: string): ReadonlyArray<string>
  /** The next `reads` (default 1) reads of this file through the port see only its first `length` bytes: a write in progress. */
  tearNextReads(path: string, length: number, reads?: number): void
  /** Reads through the port fail with `PermissionDenied` (without changing the mode `stat` reports). */
  setUnreadable(path: string, unreadable?: boolean): void
  /**
   * Queues a hook. Each `replaceIfUnchanged` runs the oldest queued hook, once, just before it
   * re-reads the target: another writer between our first read and our rename. Queue one hook per
   * attempt to model a writer that keeps racing.
   */
  onBeforeReplace(hook: (target: string) => void): void
  /**
   * Queues a hook. Each successful `readBounded`, of whatever path, runs the oldest queued hook,
   * once, with the path it read, right after the read: a concurrent edit just after our first read.
   */
  onAfterRead(hook: (path: string) => void): void
  /**
   * From now on, every watch started through the port fails with this errno, as Linux's do once
   * the user's inotify instances (`EMFILE`) or watches (`ENOSPC`) run out; undefined lifts it.
   * Watches already running go on.
   */
  refuseWatches(code: WatchRefusal | undefined): void
}

export interface Listener {
  readonly changed: (name: string) => void
  readonly removed: () => void
}

/** An entry's owner; `chown` changes it in place. */
interface Owned {
  uid: number
  gid: number
}

export interface FileNode extends Owned {
  readonly type: "File"
  mode: number
  content: Uint8Array
  tear: { readonly length: number; reads: number } | undefined
  unreadable: boolean
}

export interface DirectoryNode extends Owned {
  readonly type: "Directory"
  mode: number
  readonly entries: Map<string, Node>
  readonly listeners: Set<Listener>
}

interface LinkNode extends Owned {
  readonly type: "SymbolicLink"
  readonly target: string
}

interface SpecialNode extends Owned {
  readonly type: SpecialType
  mode: number
}

export type Node = FileNode | DirectoryNode | LinkNode | SpecialNode

/** Where a path leads: the directory that holds its last component, and what is there, if anything. */
export interface Located {
  readonly parent: DirectoryNode
  readonly name: string
  readonly node: Node | undefined
}

const maxLinkHops = 40

/** Permission bits of one class (owner, group or other), as `access(2)` asks for them. */
const READ = 0o4
const WRITE = 0o2
const SEARCH = 0o1

const defaultUser: MemoryUser = { uid: 1000, gid: 1000 }

const errnoReason: Record<string, SystemErrorReason> = {
  ENOENT: "NotFound",
  EACCES: "PermissionDenied",
  EPERM: "PermissionDenied",
  EEXIST: "AlreadyExists",
  EISDIR: "BadResource",
  ENOTDIR: "BadResource",
  ELOOP: "BadResource",
  EBUSY: "Busy"
}

const errnoText: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EMFILE: "too many open files",
  ENOSPC: "no space left on device",
  EEXIST: "file already exists",
  EISDIR: "illegal operation on a directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many symbolic links encountered",
  ENOTEMPTY: "directory not empty",
  EINVAL: "invalid argument"
}

/** Spelled as Node spells its errors, so that a message read in a test looks like one from a disk. */
export const systemError = (code: string, method: string, syscall: string, path: string) =>
  new SystemError({
    reason: errnoReason[code] ?? "Unknown",
    module: "FileSystem",
    method,
    syscall,
    pathOrDescriptor: path,
    description: `${code}: ${errnoText[code] ?? "error"}, ${syscall} '${path}'`
  })

const toBytes = (content: string | Uint8Array): Uint8Array =>
  typeof content === "string" ? new TextEncoder().encode(content) : Uint8Array.from(content)

export const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i])

const sizeOf = (node: Node): number => {
  switch (node.type) {
    case "File":
      return node.content.length
    case "SymbolicLink":
      return new TextEncoder().encode(node.target).length
    case "Directory":
      return 4096
    default:
      return 0
  }
}

export const infoOf = (node: Node): FileInfo => ({
  type: node.type,
  size: sizeOf(node),
  mode: node.type === "SymbolicLink" ? 0o777 : node.mode,
  uid: node.uid,
  gid: node.gid
})

const components = (path: string): Array<string> => path.split("/").filter((part) => part !== "")

const makeDirectoryNode = (mode: number, owner: Owner): DirectoryNode => ({
  type: "Directory",
  uid: owner.uid,
  gid: owner.gid,
  mode: mode & 0o7777,
  entries: new Map(),
  listeners: new Set()
})

const contains = (directory: DirectoryNode, candidate: DirectoryNode): boolean =>
  directory === candidate ||
  [...directory.entries.values()].some((node) => node.type === "Directory" && contains(node, candidate))

/** A removed directory's watchers end, and so do those of everything that was in it. */
const endWatchers = (node: Node): void => {
  if (node.type !== "Directory") return
  for (const listener of [...node.listeners]) listener.removed()
  node.listeners.clear()
  for (const child of node.entries.values()) endWatchers(child)
}

export const notify = (directory: DirectoryNode, name: string): void => {
  for (const listener of [...directory.listeners]) listener.changed(name)
}

/** What the file port needs of a tree, beyond its fixture methods. Not part of the public testing entry. */
export interface TreeKernel {
  /** The owner of what the program creates. */
  readonly user: Owner
  /** Whether the program may give an entry of its own `owner` (chown); it always may keep its own. */
  readonly mayGive: (owner: Owner) => boolean
  /** The errno a new watch fails with, if the test made the system refuse them. */
  readonly watchRefusal: () => WatchRefusal | undefined
  readonly locate: (path: string, followFinal: boolean, method: string, syscall: string) => Located
  readonly existing: (path: string, followFinal: boolean, method: string, syscall: string) => Located & { readonly node: Node }
  readonly requireWritable: (directory: DirectoryNode, method: string, syscall: string, path: string) => void
  readonly requireReadable: (node: Node, method: string, syscall: string, path: string) => void
  readonly readThroughPort: (file: FileNode) => Uint8Array
  readonly insert: (path: string, node: Node, method: string, syscall: string) => void
  /** With `owner`, every directory created is given it; `EPERM` where the program may not, before anything is created. */
  readonly makeDirectories: (path: string, mode: number, method: string, owner?: Owner) => void
  readonly renameEntry: (from: string, to: string, method: string) => void
  readonly runBeforeReplace: (target: string) => void
  readonly runAfterRead: (path: string) => void
}

const kernels = new WeakMap<MemoryTree, TreeKernel>()

/** The kernel of a tree made by `makeMemoryTree`. */
export const kernelOf = (tree: MemoryTree): TreeKernel => {
  const kernel = kernels.get(tree)
  if (kernel === undefined) throw new Error("not a tree made by makeMemoryTree")
  return kernel
}

const inodes = new WeakMap<Node, number>()
let nextInode = 1
const inodeNumberOf = (node: Node): number => {
  let inode = inodes.get(node)
  if (inode === undefined) inodes.set(node, inode = nextInode++)
  return inode
}

export const makeMemoryTree = (options: MemoryTreeOptions = {}): MemoryTree => {
  const user = options.user ?? defaultUser
  const own: Owner = { uid: user.uid, gid: user.gid }
  const groups = new Set([user.gid, ...(user.groups ?? [])])
  const isRoot = user.uid === 0
  // The root is the user's too, as every entry the test did not give away: a test that creates
  // /home/user from nothing must not need root.
  const root = makeDirectoryNode(0o755, own)
  let watchRefusal: WatchRefusal | undefined
  /** True while a fixture method runs: the test's author is not held to the permission bits. */
  let byAuthor = false

  const asAuthor = <A>(body: () => A): A => {
    const previous = byAuthor
    byAuthor = true
    try {
      return body()
    } finally {
      byAuthor = previous
    }
  }

  /** Whether the program may do `bits` (read, write, search) to `node`: the owner's, the group's or the others' bits decide. */
  const allows = (node: Node, bits: number) => {
    if (byAuthor || isRoot || node.type === "SymbolicLink") return true
    const shift = node.uid === user.uid ? 6 : groups.has(node.gid) ? 3 : 0
    return ((node.mode >> shift) & bits) === bits
  }

  /** chown(2) for a user that is not root: its own uid, and one of its own groups. */
  const mayGive = (owner: Owner) => isRoot || (owner.uid === user.uid && groups.has(owner.gid))

  const beforeReplace: Array<(target: string) => void> = []
  const afterRead: Array<(path: string) => void> = []

  /**
   * Walks `path` as the kernel does: every intermediate link is followed, the final one only when
   * asked, `..` after a link goes up from where the link led, and searching a directory needs its
   * search bit. Throws the `SystemError` for `method`/`syscall`.
   */
  const locate = (path: string, followFinal: boolean, method: string, syscall: string): Located => {
    const fail = (code: string) => systemError(code, method, syscall, path)
    if (!Path.posix.isAbsolute(path)) throw fail("ENOENT")
    let pending = components(path)
    let trail: Array<{ readonly directory: DirectoryNode; readonly name: string }> = [{ directory: root, name: "" }]
    let hops = 0
    while (pending.length > 0) {
      const name = pending.shift()!
      if (name === ".") continue
      if (name === "..") {
        if (trail.length > 1) trail.pop()
        continue
      }
      const directory = trail[trail.length - 1]!.directory
      if (!allows(directory, SEARCH)) throw fail("EACCES")
      const node = directory.entries.get(name)
      const last = pending.length === 0
      if (node?.type === "SymbolicLink" && (followFinal || !last)) {
        if (++hops > maxLinkHops) throw fail("ELOOP")
        if (Path.posix.isAbsolute(node.target)) trail = [{ directory: root, name: "" }]
        pending = [...components(node.target), ...pending]
        continue
      }
      if (last) return { parent: directory, name, node }
      if (node === undefined) throw fail("ENOENT")
      if (node.type !== "Directory") throw fail("ENOTDIR")
      trail.push({ directory: node, name })
    }
    // The path ended on a directory reached by `.`, `..` or a link to one (or it is `/`).
    const here = trail[trail.length - 1]!
    return { parent: trail[trail.length - 2]?.directory ?? root, name: here.name, node: here.directory }
  }

  const existing = (path: string, followFinal: boolean, method: string, syscall: string) => {
    const located = locate(path, followFinal, method, syscall)
    if (located.node === undefined) throw systemError("ENOENT", method, syscall, path)
    return { ...located, node: located.node }
  }

  const requireWritable = (directory: DirectoryNode, method: string, syscall: string, path: string) => {
    if (!allows(directory, WRITE | SEARCH)) throw systemError("EACCES", method, syscall, path)
  }

  const requireReadable = (node: Node, method: string, syscall: string, path: string) => {
    if (!allows(node, READ) || (node.type === "File" && node.unreadable)) {
      throw systemError("EACCES", method, syscall, path)
    }
  }

  /**
   * A hook is the test's code, not the operation's: whatever it throws is a defect, never the
   * operation's typed failure.
   */
  const runHook = <A>(hooks: Array<(argument: A) => void>, argument: A): void => {
    const hook = hooks.shift()
    if (hook === undefined) return
    try {
      hook(argument)
    } catch (error) {
      throw new Error("a MemoryFiles hook threw", { cause: error })
    }
  }

  /** A file's bytes as a read through the port sees them: a pending tear shows only a prefix. */
  const readThroughPort = (file: FileNode): Uint8Array => {
    const tear = file.tear
    if (tear === undefined) return file.content.slice()
    if (--tear.reads <= 0) file.tear = undefined
    return file.content.slice(0, tear.length)
  }

  const insert = (path: string, node: Node, method: string, syscall: string) => {
    const located = locate(path, false, method, syscall)
    if (located.node !== undefined) throw systemError("EEXIST", method, syscall, path)
    requireWritable(located.parent, method, syscall, path)
    located.parent.entries.set(located.name, node)
    notify(located.parent, located.name)
  }

  /**
   * `mkdir -p`: existing directories, and links to them, are kept; anything else in the way fails.
   * The mode is set exactly: this tree has no umask.
   */
  const makeDirectories = (path: string, mode: number, method: string, owner?: Owner) => {
    const given = owner ?? own
    let prefix = "/"
    const parts = components(Path.posix.normalize(path))
    parts.forEach((part, index) => {
      prefix = Path.posix.join(prefix, part)
      const located = locate(prefix, false, method, "mkdir")
      let node = located.node
      if (node?.type === "SymbolicLink") node = locate(prefix, true, method, "mkdir").node ?? node
      if (node?.type === "Directory") return
      if (node !== undefined) {
        throw systemError(index === parts.length - 1 ? "EEXIST" : "ENOTDIR", method, "mkdir", path)
      }
      requireWritable(located.parent, method, "mkdir", path)
      if (!byAuthor && !mayGive(given)) throw systemError("EPERM", method, "fchown", prefix)
      located.parent.entries.set(located.name, makeDirectoryNode(mode, given))
      notify(located.parent, located.name)
    })
  }

  const makeParents = (path: string) => makeDirectories(Path.posix.dirname(path), 0o755, "makeDirectory")

  const renameEntry = (from: string, to: string, method: string) => {
    const source = existing(from, false, method, "rename")
    const target = locate(to, false, method, "rename")
    requireWritable(source.parent, method, "rename", from)
    requireWritable(target.parent, method, "rename", to)
    if (target.node === source.node) return
    if (source.node.type === "Directory") {
      if (target.node !== undefined && target.node.type !== "Directory") throw systemError("ENOTDIR", method, "rename", to)
      if (target.node?.type === "Directory" && target.node.entries.size > 0) {
        throw systemError("ENOTEMPTY", method, "rename", to)
      }
      if (contains(source.node, target.parent)) throw systemError("EINVAL", method, "rename", to)
    } else if (target.node?.type === "Directory") {
      throw systemError("EISDIR", method, "rename", to)
    }
    source.parent.entries.delete(source.name)
    if (target.node !== undefined) endWatchers(target.node)
    target.parent.entries.set(target.name, source.node)
    notify(source.parent, source.name)
    notify(target.parent, target.name)
  }

  const removeEntry = (path: string) => {
    const located = existing(path, false, "remove", "rm")
    located.parent.entries.delete(located.name)
    endWatchers(located.node)
    notify(located.parent, located.name)
  }

  const existingFile = (path: string, method: string) => {
    const located = existing(path, true, method, "open")
    if (located.node.type !== "File") throw systemError("EISDIR", method, "open", path)
    return { ...located, node: located.node }
  }

  const normalized = (path: string) => Path.posix.normalize(path)

  const readFile = (path: string): Uint8Array | undefined =>
    asAuthor(() => {
      try {
        const { node } = locate(normalized(path), true, "readFile", "open")
        return node?.type === "File" ? node.content.slice() : undefined
      } catch {
        return undefined
      }
    })

  const tree: MemoryTree = {
    writeFile: (path, content, mode) =>
      asAuthor(() => {
        makeParents(normalized(path))
        const located = locate(normalized(path), true, "writeFile", "open")
        const node = located.node
        if (node === undefined) {
          located.parent.entries.set(located.name, {
            type: "File",
            ...own,
            mode: (mode ?? 0o644) & 0o7777,
            content: toBytes(content),
            tear: undefined,
            unreadable: false
          })
        } else if (node.type === "File") {
          node.content = toBytes(content)
          if (mode !== undefined) node.mode = mode & 0o7777
        } else {
          throw systemError("EISDIR", "writeFile", "open", path)
        }
        notify(located.parent, located.name)
      }),
    makeDirectory: (path, mode) => asAuthor(() => makeDirectories(normalized(path), mode ?? 0o755, "makeDirectory")),
    symlink: (target, path) =>
      asAuthor(() => {
        makeParents(normalized(path))
        insert(normalized(path), { type: "SymbolicLink", ...own, target }, "symlink", "symlink")
      }),
    makeSpecial: (path, type) =>
      asAuthor(() => {
        makeParents(normalized(path))
        insert(normalized(path), { type, ...own, mode: type === "CharacterDevice" ? 0o666 : 0o644 }, "makeSpecial", "mknod")
      }),
    remove: (path) => asAuthor(() => removeEntry(normalized(path))),
    rename: (from, to) => asAuthor(() => renameEntry(normalized(from), normalized(to), "rename")),
    chmod: (path, mode) =>
      asAuthor(() => {
        const located = existing(normalized(path), true, "chmod", "chmod")
        if (located.node.type === "SymbolicLink") return
        located.node.mode = mode & 0o7777
        notify(located.parent, located.name)
      }),
    chown: (path, uid, gid) =>
      asAuthor(() => {
        const located = existing(normalized(path), true, "chown", "chown")
        located.node.uid = uid
        located.node.gid = gid
        notify(located.parent, located.name)
      }),
    readFile,
    readText: (path) => {
      const bytes = readFile(path)
      return bytes === undefined ? undefined : new TextDecoder().decode(bytes)
    },
    inodeOf: (path) =>
      asAuthor(() => {
        try {
          const node = locate(normalized(path), false, "inodeOf", "lstat").node
          return node === undefined ? undefined : inodeNumberOf(node)
        } catch {
          return undefined
        }
      }),
    exists: (path) =>
      asAuthor(() => {
        try {
          return locate(normalized(path), false, "exists", "lstat").node !== undefined
        } catch {
          return false
        }
      }),
    list: (directory) =>
      asAuthor(() => {
        try {
          const { node } = locate(normalized(directory), true, "list", "scandir")
          return node?.type === "Directory" ? [...node.entries.keys()].sort() : []
        } catch {
          return []
        }
      }),
    tearNextReads: (path, length, reads = 1) =>
      asAuthor(() => {
        const { node, parent, name } = existingFile(normalized(path), "tearNextReads")
        node.tear = { length: Math.max(0, Math.min(length, node.content.length)), reads }
        notify(parent, name)
      }),
    setUnreadable: (path, unreadable = true) =>
      asAuthor(() => {
        const { node, parent, name } = existingFile(normalized(path), "setUnreadable")
        node.unreadable = unreadable
        notify(parent, name)
      }),
    onBeforeReplace: (hook) => void beforeReplace.push(hook),
    onAfterRead: (hook) => void afterRead.push(hook),
    refuseWatches: (code) => {
      watchRefusal = code
    }
  }
  kernels.set(tree, {
    user: own,
    mayGive,
    watchRefusal: () => watchRefusal,
    locate,
    existing,
    requireWritable,
    requireReadable,
    readThroughPort,
    insert,
    makeDirectories,
    renameEntry,
    runBeforeReplace: (target) => runHook(beforeReplace, target),
    runAfterRead: (path) => runHook(afterRead, path)
  })
  return tree
}
