/**
 * The kernel of an in-memory file tree: its entries, the user the program runs as, the permission
 * bits, path resolution and the queued fault hooks. `MemoryTree` is the test's facade over it and
 * `FilesMemory` the program's port over it, so both act on the same state and follow the same rules.
 *
 * It must fail where the real file system fails, or tests pass here and break on a disk: links are
 * followed (at most 40 hops) wherever `open` and `stat` follow them, a FIFO, socket or device is
 * never read, the permission bits are enforced for the tree's user (owner, group or other bits, as
 * the entry's owner says; none for root), only root may give an entry away, a create is exclusive
 * even against a dangling link, and a rename over a file is atomic.
 *
 * Entries are objects and a directory maps names to them, so a renamed file keeps its identity (its
 * torn reads, its watchers) as an inode would.
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

/** Why a system refuses a change notification: out of inotify instances, or out of watches. */
export type WatchRefusal = "EMFILE" | "ENOSPC"

export interface Listener {
  readonly changed: (name: string) => void
  readonly removed: () => void
}

/** An entry's owner; `chown` changes it in place. */
interface Owned {
  uid: number
  gid: number
  /** The last write of its content, in epoch ms; 0 until a write or `setModifiedTime` says otherwise. */
  modifiedAtMs?: number
}

export interface FileNode extends Owned {
  readonly type: "File"
  mode: number
  content: Uint8Array
  tear: { readonly length: number; reads: number } | undefined
  unreadable: boolean
  /** Its extended attributes by name (`system.posix_acl_access` for an ACL), when it has any. */
  attributes?: ReadonlyArray<{ readonly name: string; readonly value: Uint8Array }>
}

export interface DirectoryNode extends Owned {
  readonly type: "Directory"
  mode: number
  readonly entries: Map<string, Node>
  readonly listeners: Set<Listener>
}

export interface LinkNode extends Owned {
  readonly type: "SymbolicLink"
  readonly target: string
}

export interface SpecialNode extends Owned {
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
  modifiedAtMs: node.modifiedAtMs ?? 0,
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

export const defaultUser: MemoryUser = { uid: 1000, gid: 1000 }

export class MemoryTreeKernel {
  /** The owner of what the program creates. */
  readonly user: Owner
  readonly root: DirectoryNode
  /** The errno a new watch fails with, if the test made the system refuse them. */
  watchRefusal: WatchRefusal | undefined = undefined
  private readonly groups: ReadonlySet<number>
  private readonly isRoot: boolean
  /** True while a fixture method runs: the test's author is not held to the permission bits. */
  private byAuthor = false
  private readonly beforeReplace: Array<(target: string) => void> = []
  private readonly afterRead: Array<(path: string) => void> = []
  private readonly inodes = new WeakMap<Node, number>()
  private nextInode = 1
  private readonly changes = new WeakMap<Uint8Array, number>()
  private nextChange = 1

  constructor(user: MemoryUser = defaultUser) {
    this.user = { uid: user.uid, gid: user.gid }
    this.groups = new Set([user.gid, ...(user.groups ?? [])])
    this.isRoot = user.uid === 0
    // The root is the user's too, as every entry the test did not give away: a test that creates
    // /home/user from nothing must not need root.
    this.root = makeDirectoryNode(0o755, this.user)
  }

  /** Runs `body` as the test's author, whom the permission bits do not hold back. */
  asAuthor<A>(body: () => A): A {
    const previous = this.byAuthor
    this.byAuthor = true
    try {
      return body()
    } finally {
      this.byAuthor = previous
    }
  }

  /** Whether the program may do `bits` (read, write, search) to `node`: the owner's, the group's or the others' bits decide. */
  private allows(node: Node, bits: number): boolean {
    if (this.byAuthor || this.isRoot || node.type === "SymbolicLink") return true
    const shift = node.uid === this.user.uid ? 6 : this.groups.has(node.gid) ? 3 : 0
    return ((node.mode >> shift) & bits) === bits
  }

  /** chown(2) for a user that is not root: its own uid, and one of its own groups. */
  mayGive(owner: Owner): boolean {
    return this.isRoot || (owner.uid === this.user.uid && this.groups.has(owner.gid))
  }

  /**
   * Walks `path` as the kernel does: every intermediate link is followed, the final one only when
   * asked, `..` after a link goes up from where the link led, and searching a directory needs its
   * search bit. Throws the `SystemError` for `method`/`syscall`.
   */
  locate(path: string, followFinal: boolean, method: string, syscall: string): Located {
    const { name, node, trail } = this.walk(path, followFinal, method, syscall)
    return { parent: trail[trail.length - 1]!.directory, name, node }
  }

  /**
   * `realpath(3)`: the path of what `path` leads to, every link followed, as the names walked from the
   * root. Fails `ENOENT` when nothing is there.
   */
  realPath(path: string, method: string, syscall: string): string {
    const { name, node, trail } = this.walk(path, true, method, syscall)
    if (node === undefined) throw systemError("ENOENT", method, syscall, path)
    return Path.posix.join("/", ...trail.slice(1).map((step) => step.name), name)
  }

  /** `locate`'s walk: the directories from the root to the parent of what `path` names, its name and what is there. */
  private walk(path: string, followFinal: boolean, method: string, syscall: string) {
    const fail = (code: string) => systemError(code, method, syscall, path)
    if (!Path.posix.isAbsolute(path)) throw fail("ENOENT")
    let pending = components(path)
    let trail: Array<{ readonly directory: DirectoryNode; readonly name: string }> = [{ directory: this.root, name: "" }]
    let hops = 0
    while (pending.length > 0) {
      const name = pending.shift()!
      if (name === ".") continue
      if (name === "..") {
        if (trail.length > 1) trail.pop()
        continue
      }
      const directory = trail[trail.length - 1]!.directory
      if (!this.allows(directory, SEARCH)) throw fail("EACCES")
      const node = directory.entries.get(name)
      const last = pending.length === 0
      if (node?.type === "SymbolicLink" && (followFinal || !last)) {
        if (++hops > maxLinkHops) throw fail("ELOOP")
        if (Path.posix.isAbsolute(node.target)) trail = [{ directory: this.root, name: "" }]
        pending = [...components(node.target), ...pending]
        continue
      }
      if (last) return { trail, name, node }
      if (node === undefined) throw fail("ENOENT")
      if (node.type !== "Directory") throw fail("ENOTDIR")
      trail.push({ directory: node, name })
    }
    // The path ended on a directory reached by `.`, `..` or a link to one (or it is `/`).
    const here = trail[trail.length - 1]!
    return { trail: trail.length > 1 ? trail.slice(0, -1) : trail, name: here.name, node: here.directory as Node | undefined }
  }

  /** `locate`, failing `ENOENT` when nothing is there. */
  existing(path: string, followFinal: boolean, method: string, syscall: string): Located & { readonly node: Node } {
    const located = this.locate(path, followFinal, method, syscall)
    if (located.node === undefined) throw systemError("ENOENT", method, syscall, path)
    return { ...located, node: located.node }
  }

  /** `locate`, or undefined when nothing is there or the path cannot be walked. */
  find(path: string, followFinal: boolean): Node | undefined {
    try {
      return this.locate(path, followFinal, "find", followFinal ? "stat" : "lstat").node
    } catch {
      return undefined
    }
  }

  requireWritable(directory: DirectoryNode, method: string, syscall: string, path: string): void {
    if (!this.allows(directory, WRITE | SEARCH)) throw systemError("EACCES", method, syscall, path)
  }

  requireReadable(node: Node, method: string, syscall: string, path: string): void {
    if (!this.allows(node, READ) || (node.type === "File" && node.unreadable)) {
      throw systemError("EACCES", method, syscall, path)
    }
  }

  /** A file's bytes as a read through the port sees them: a pending tear shows only a prefix. */
  readThroughPort(file: FileNode): Uint8Array {
    const tear = file.tear
    if (tear === undefined) return file.content.slice()
    if (--tear.reads <= 0) file.tear = undefined
    return file.content.slice(0, tear.length)
  }

  /** An exclusive create: anything already there, a dangling link included, is `EEXIST`. */
  insert(path: string, node: Node, method: string, syscall: string): void {
    const located = this.locate(path, false, method, syscall)
    if (located.node !== undefined) throw systemError("EEXIST", method, syscall, path)
    this.requireWritable(located.parent, method, syscall, path)
    located.parent.entries.set(located.name, node)
    notify(located.parent, located.name)
  }

  /**
   * `mkdir -p`: existing directories, and links to them, are kept; anything else in the way fails.
   * The mode is set exactly: this tree has no umask. With `owner`, every directory created is given
   * it; `EPERM` where the program may not, before anything is created.
   */
  makeDirectories(path: string, mode: number, method: string, owner?: Owner): void {
    const given = owner ?? this.user
    let prefix = "/"
    const parts = components(Path.posix.normalize(path))
    parts.forEach((part, index) => {
      prefix = Path.posix.join(prefix, part)
      const located = this.locate(prefix, false, method, "mkdir")
      let node = located.node
      if (node?.type === "SymbolicLink") node = this.locate(prefix, true, method, "mkdir").node ?? node
      if (node?.type === "Directory") return
      if (node !== undefined) {
        throw systemError(index === parts.length - 1 ? "EEXIST" : "ENOTDIR", method, "mkdir", path)
      }
      this.requireWritable(located.parent, method, "mkdir", path)
      if (!this.byAuthor && !this.mayGive(given)) throw systemError("EPERM", method, "fchown", prefix)
      located.parent.entries.set(located.name, makeDirectoryNode(mode, given))
      notify(located.parent, located.name)
    })
  }

  /** rename(2): atomic, over a file or an empty directory; never a directory into itself. */
  renameEntry(from: string, to: string, method: string): void {
    const source = this.existing(from, false, method, "rename")
    const target = this.locate(to, false, method, "rename")
    this.requireWritable(source.parent, method, "rename", from)
    this.requireWritable(target.parent, method, "rename", to)
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

  /** Any entry, a directory with everything in it; its watchers and those of everything in it end. */
  removeEntry(path: string, method: string, syscall: string): void {
    const located = this.existing(path, false, method, syscall)
    located.parent.entries.delete(located.name)
    endWatchers(located.node)
    notify(located.parent, located.name)
  }

  /**
   * A file's last change, as a counter: content is only ever replaced, never written in place, so
   * each content it has held is one change, as a write moves a file's `ctime`.
   */
  changeOf(file: FileNode): number {
    let change = this.changes.get(file.content)
    if (change === undefined) this.changes.set(file.content, change = this.nextChange++)
    return change
  }

  /** The entry's identity, as an inode number: assigned on first asking, kept across renames. */
  inodeOf(node: Node): number {
    let inode = this.inodes.get(node)
    if (inode === undefined) this.inodes.set(node, inode = this.nextInode++)
    return inode
  }

  onBeforeReplace(hook: (target: string) => void): void {
    this.beforeReplace.push(hook)
  }

  onAfterRead(hook: (path: string) => void): void {
    this.afterRead.push(hook)
  }

  /** Runs the oldest hook queued by `onBeforeReplace`, if any. */
  runBeforeReplace(target: string): void {
    runHook(this.beforeReplace, target)
  }

  /** Runs the oldest hook queued by `onAfterRead`, if any. */
  runAfterRead(path: string): void {
    runHook(this.afterRead, path)
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
