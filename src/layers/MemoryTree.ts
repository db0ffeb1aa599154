/**
 * An in-memory file tree for the tests of programs built on claude-peers: the test's fixture methods
 * (`writeFile`, `symlink`, `tearNextReads`, …) over the kernel (`MemoryTreeKernel.ts`) that the file
 * port (`FilesMemory.ts`) runs on, so that whatever the test arranges is what the program finds.
 *
 * The fixture methods act as the test's author, not as the program: they bypass the permission bits,
 * create missing parents, and throw the `SystemError` the port would fail with.
 */
import * as Path from "node:path"
import { MemoryTreeKernel, type MemoryUser, notify, type SpecialType, systemError, type WatchRefusal } from "./MemoryTreeKernel.js"

export type { MemoryUser, SpecialType, WatchRefusal }

export interface MemoryTreeOptions {
  /** Default: uid 1000, gid 1000, not root. Entries the test creates are this user's until `chown`. */
  readonly user?: MemoryUser | undefined
}

const toBytes = (content: string | Uint8Array): Uint8Array => typeof content === "string" ? new TextEncoder().encode(content) : Uint8Array.from(content)

const normalized = (path: string) => Path.posix.normalize(path)

export class MemoryTree {
  /** The tree itself, which the file port over it (`layerFiles(tree)`) acts on; a test needs only the methods here. */
  readonly kernel: MemoryTreeKernel

  constructor(options: MemoryTreeOptions = {}) {
    this.kernel = new MemoryTreeKernel(options.user)
  }

  /** Creates missing parent directories (0o755); replaces an existing file's content in place, keeping its mode unless one is given (0o644 for a new file). Follows links. */
  writeFile(path: string, content: string | Uint8Array, mode?: number): void {
    const kernel = this.kernel
    kernel.asAuthor(() => {
      this.makeParents(normalized(path))
      const located = kernel.locate(normalized(path), true, "writeFile", "open")
      const node = located.node
      if (node === undefined) {
        located.parent.entries.set(located.name, {
          type: "File",
          ...kernel.user,
          mode: (mode ?? 0o644) & 0o7777,
          content: toBytes(content),
          tear: undefined,
          unreadable: false,
          modifiedAtMs: Date.now()
        })
      } else if (node.type === "File") {
        node.content = toBytes(content)
        node.modifiedAtMs = Date.now()
        if (mode !== undefined) node.mode = mode & 0o7777
      } else {
        throw systemError("EISDIR", "writeFile", "open", path)
      }
      notify(located.parent, located.name)
    })
  }

  /**
   * Gives the file (links followed) extended attributes, replacing any it had; an empty list
   * removes them. Values are bytes or text.
   */
  setExtendedAttributes(path: string, attributes: Readonly<Record<string, string | Uint8Array>>): void {
    const located = this.kernel.locate(normalized(path), true, "setExtendedAttributes", "setxattr")
    if (located.node?.type !== "File") throw systemError("ENOENT", "setExtendedAttributes", "setxattr", path)
    const entries = Object.entries(attributes).map(([name, value]) => ({ name, value: toBytes(value) }))
    if (entries.length === 0) delete located.node.attributes
    else located.node.attributes = entries
  }

  /** The file's extended attributes (links followed) as text, `{}` when it has none or is missing. */
  extendedAttributesOf(path: string): Record<string, string> {
    const located = this.kernel.locate(normalized(path), true, "extendedAttributesOf", "getxattr")
    if (located.node?.type !== "File") return {}
    return Object.fromEntries((located.node.attributes ?? []).map((entry) => [entry.name, new TextDecoder().decode(entry.value)]))
  }

  /** Recursive; existing directories are kept. Mode 0o755 unless given. */
  makeDirectory(path: string, mode?: number): void {
    this.kernel.asAuthor(() => this.kernel.makeDirectories(normalized(path), mode ?? 0o755, "makeDirectory"))
  }

  symlink(target: string, path: string): void {
    this.kernel.asAuthor(() => {
      this.makeParents(normalized(path))
      this.kernel.insert(normalized(path), { type: "SymbolicLink", ...this.kernel.user, target }, "symlink", "symlink")
    })
  }

  makeSpecial(path: string, type: SpecialType): void {
    this.kernel.asAuthor(() => {
      this.makeParents(normalized(path))
      const mode = type === "CharacterDevice" ? 0o666 : 0o644
      this.kernel.insert(normalized(path), { type, ...this.kernel.user, mode }, "makeSpecial", "mknod")
    })
  }

  /** Any entry; a directory with everything in it. */
  remove(path: string): void {
    this.kernel.asAuthor(() => this.kernel.removeEntry(normalized(path), "remove", "rm"))
  }

  /** What another writer (Claude Code) does: atomic, over a file if there is one. */
  rename(from: string, to: string): void {
    this.kernel.asAuthor(() => this.kernel.renameEntry(normalized(from), normalized(to), "rename"))
  }

  /** Follows links, as chmod(2). */
  chmod(path: string, mode: number): void {
    this.kernel.asAuthor(() => {
      const located = this.kernel.existing(normalized(path), true, "chmod", "chmod")
      if (located.node.type === "SymbolicLink") return
      located.node.mode = mode & 0o7777
      notify(located.parent, located.name)
    })
  }

  /** Follows links, as utimes(2): the entry's last write is `ms` (epoch milliseconds). */
  setModifiedTime(path: string, ms: number): void {
    this.kernel.asAuthor(() => {
      const located = this.kernel.existing(normalized(path), true, "setModifiedTime", "utimes")
      located.node.modifiedAtMs = ms
    })
  }

  /** Follows links, as chown(2). */
  chown(path: string, uid: number, gid: number): void {
    this.kernel.asAuthor(() => {
      const located = this.kernel.existing(normalized(path), true, "chown", "chown")
      located.node.uid = uid
      located.node.gid = gid
      notify(located.parent, located.name)
    })
  }

  /** Follows links; undefined when missing or not a regular file. Sees no tear and no unreadable flag. */
  readFile(path: string): Uint8Array | undefined {
    const node = this.kernel.asAuthor(() => this.kernel.find(normalized(path), true))
    return node?.type === "File" ? node.content.slice() : undefined
  }

  readText(path: string): string | undefined {
    const bytes = this.readFile(path)
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes)
  }

  /** Like `lstat`: a dangling link exists. */
  exists(path: string): boolean {
    return this.kernel.asAuthor(() => this.kernel.find(normalized(path), false)) !== undefined
  }

  /**
   * The entry's identity, as an inode number (links not followed): the same entry keeps it across
   * renames, and a file renamed over another has its own. Undefined when nothing is there.
   */
  inodeOf(path: string): number | undefined {
    const node = this.kernel.asAuthor(() => this.kernel.find(normalized(path), false))
    return node === undefined ? undefined : this.kernel.inodeOf(node)
  }

  /** Entry names, sorted; empty when the directory is missing. */
  list(directory: string): ReadonlyArray<string> {
    const node = this.kernel.asAuthor(() => this.kernel.find(normalized(directory), true))
    return node?.type === "Directory" ? [...node.entries.keys()].sort() : []
  }

  /** The next `reads` (default 1) reads of this file through the port see only its first `length` bytes: a write in progress. */
  tearNextReads(path: string, length: number, reads = 1): void {
    this.kernel.asAuthor(() => {
      const { name, node, parent } = this.existingFile(normalized(path), "tearNextReads")
      node.tear = { length: Math.max(0, Math.min(length, node.content.length)), reads }
      notify(parent, name)
    })
  }

  /** Reads through the port fail with `PermissionDenied` (without changing the mode `stat` reports). */
  setUnreadable(path: string, unreadable = true): void {
    this.kernel.asAuthor(() => {
      const { name, node, parent } = this.existingFile(normalized(path), "setUnreadable")
      node.unreadable = unreadable
      notify(parent, name)
    })
  }

  /**
   * Queues a hook. Each `replaceIfUnchanged` runs the oldest queued hook, once, just before it
   * re-reads the target: another writer between our first read and our rename. Queue one hook per
   * attempt to model a writer that keeps racing.
   */
  onBeforeReplace(hook: (target: string) => void): void {
    this.kernel.onBeforeReplace(hook)
  }

  /**
   * Queues a hook. Each successful `readBounded`, of whatever path, runs the oldest queued hook,
   * once, with the path it read, right after the read: a concurrent edit just after our first read.
   */
  onAfterRead(hook: (path: string) => void): void {
    this.kernel.onAfterRead(hook)
  }

  /**
   * From now on, every watch started through the port fails with this errno, as Linux's do once
   * the user's inotify instances (`EMFILE`) or watches (`ENOSPC`) run out; undefined lifts it.
   * Watches already running go on.
   */
  refuseWatches(code: WatchRefusal | undefined): void {
    this.kernel.watchRefusal = code
  }

  private makeParents(path: string): void {
    this.kernel.makeDirectories(Path.posix.dirname(path), 0o755, "makeDirectory")
  }

  private existingFile(path: string, method: string) {
    const located = this.kernel.existing(path, true, method, "open")
    if (located.node.type !== "File") throw systemError("EISDIR", method, "open", path)
    return { ...located, node: located.node }
  }
}

export const makeMemoryTree = (options: MemoryTreeOptions = {}): MemoryTree => new MemoryTree(options)
