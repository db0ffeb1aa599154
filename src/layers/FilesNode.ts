/**
 * The file port on `node:fs`.
 *
 * Two rules earn their place here. A path is opened only with `O_NONBLOCK | O_NOCTTY` and its type
 * is judged on the opened descriptor: a stat before the open could be answered by a regular file
 * and the open by a FIFO swapped in meanwhile, and a blocking open of a FIFO with no writer never
 * returns. And the compare-and-rename of `replaceIfUnchanged` runs synchronously from its re-read
 * to its rename: any `await` between them hands the event loop, and so the window, to someone else.
 */
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NFS from "node:fs"
import * as Path from "node:path"
import {
  type BoundedRead,
  byName,
  type CurrentTarget,
  type DirectoryEntry,
  type EntryType,
  type ExtendedAttributes,
  type FileInfo,
  Files,
  type FilesPrimitives,
  make as makeFiles,
  type Owner
} from "../services/Files.js"
import { turnEventLoop } from "../services/ScanBatches.js"
import { extendedAttributes, giveAttributesSync } from "./FilesNodeAttributes.js"
import { attemptSync, errnoOf, reasonOf } from "./FilesNodeErrors.js"
import { watch } from "./FilesNodeWatch.js"

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = NFS.constants

/** Windows has neither flag; 0 keeps the open portable, and `readBounded` makes up for the missing `O_NOFOLLOW`. */
const noFollow = O_NOFOLLOW ?? 0
const readFlags = O_RDONLY | (O_NONBLOCK ?? 0) | (O_NOCTTY ?? 0)

const typeOf = (entry: NFS.Dirent | NFS.Stats): EntryType =>
  entry.isFile()
    ? "File"
    : entry.isDirectory()
    ? "Directory"
    : entry.isSymbolicLink()
    ? "SymbolicLink"
    : entry.isFIFO()
    ? "FIFO"
    : entry.isSocket()
    ? "Socket"
    : entry.isBlockDevice()
    ? "BlockDevice"
    : entry.isCharacterDevice()
    ? "CharacterDevice"
    : "Unknown"

const infoOf = (stats: NFS.Stats): FileInfo => ({
  type: typeOf(stats),
  size: stats.size,
  mode: stats.mode & 0o7777,
  modifiedAtMs: stats.mtimeMs,
  uid: stats.uid,
  gid: stats.gid
})

/** Owners mean nothing on Windows: there an owner asked for is never given, and never refused. */
const ownersApply = process.platform !== "win32"

const sameOwner = (stats: { readonly uid: number; readonly gid: number }, owner: Owner) => stats.uid === owner.uid && stats.gid === owner.gid

/** A refused chown, said as what it means for the file, not as the bare errno. */
const ownerRefused = (method: string, path: string, owner: Owner) => (cause: unknown): PlatformError => {
  const code = errnoOf(cause)
  return new SystemError({
    reason: reasonOf(code),
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    syscall: "fchown",
    description: `${code ?? "error"}: this process may not give it the owner uid ${owner.uid}, gid ${owner.gid}`,
    cause
  })
}

const asPlainBytes = (buffer: Uint8Array, length: number): Uint8Array => new Uint8Array(buffer.buffer, buffer.byteOffset, length)

/**
 * Where every bounded read lands first. Registry files are a few hundred bytes, so reading into one
 * reused buffer and copying out exactly the bytes read costs one small allocation per file; the copy
 * also means the bytes handed out never share memory with anything else.
 */
const scratch = Buffer.alloc(64 * 1024)

const readInto = (fd: number, buffer: Buffer, length: number): number => NFS.readSync(fd, buffer, length, buffer.length - length, length)

/**
 * Reads until end of file, but never more than `maxBytes + 1` bytes: one byte past the limit is
 * the proof that the file is too large, however it grew since `fstat`.
 */
const readAtMostSync = (fd: number, sizeHint: number, maxBytes: number): BoundedRead => {
  const limit = maxBytes + 1
  let buffer = sizeHint < scratch.length ? scratch : Buffer.alloc(Math.min(limit, sizeHint + 1))
  if (buffer.length > limit) buffer = buffer.subarray(0, limit)
  let length = 0
  for (;;) {
    if (length === buffer.length) {
      if (length >= limit) break
      const larger = Buffer.alloc(Math.min(limit, buffer.length * 2))
      buffer.copy(larger, 0, 0, length)
      buffer = larger
    }
    const bytesRead = readInto(fd, buffer, length)
    length += bytesRead
    // A short read that reached the size fstat gave stopped at the end of the file: that saves the
    // second read that would return 0. A short read before it (a FUSE file system may return less
    // mid-file) reads on. (A writer still appending is a torn read, which the registry retries;
    // the bytes returned never exceed `maxBytes`.)
    if (bytesRead === 0 || (length < buffer.length && length >= sizeHint)) {
      return { _tag: "Read", bytes: new Uint8Array(buffer.subarray(0, length)) }
    }
  }
  return { _tag: "TooLarge", size: Math.max(NFS.fstatSync(fd).size, length) }
}

/**
 * Synchronous on purpose. The directory listing and the bounded read are what a registry scan does
 * per file, and registry files sit in the page cache: there each call is a short memory copy, while
 * a round trip through libuv's thread pool costs far more main-thread work than the read itself.
 * A synchronous call holds the event loop, though, and Effect's scheduler yields to other fibers only
 * through microtasks, which do not let it turn: a listing turns it every `entriesPerTurn` entries,
 * and the scan between batches of files (`RegistryScan.ts`), so that a host's timers and I/O run
 * during a scan of a large registry.
 */
const entriesPerTurn = 2048

/**
 * The rest of an open directory's entries, with a turn of the event loop every `entriesPerTurn`;
 * sorted by name, as `readdirSync` gives them. A name renamed over while the listing runs may be
 * read twice (some file systems return it again at its new place): it is listed once.
 */
const entriesOf = (path: string, directory: NFS.Dir): Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError> => {
  const entries = new Map<string, DirectoryEntry>()
  const readSome = attemptSync("readDirectory", path, () => {
    for (let n = 0; n < entriesPerTurn; n++) {
      const entry = directory.readSync()
      if (entry === null) return true
      entries.set(entry.name, { name: entry.name, type: typeOf(entry) })
    }
    return false
  })
  const rest: Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError> = Effect.flatMap(
    readSome,
    (done) => done ? Effect.sync(() => [...entries.values()].sort(byName)) : Effect.zipRight(turnEventLoop, Effect.suspend(() => rest))
  )
  return rest
}

const closeDirectory = (directory: NFS.Dir) =>
  Effect.sync(() => {
    try {
      directory.closeSync()
    } catch {
      // Closed already: nothing is left open.
    }
  })

/**
 * A directory this small is listed in one call: its size grows with its entries on every Linux and
 * macOS file system (blocks on ext4, bytes per name on btrfs and tmpfs), and a few thousand entries
 * are one short copy.
 */
const listedAtOnceUpTo = 64 * 1024

/** The listing of `path`, whose size `stat` gave: at once when small, else through `opendir`. */
const listing = (path: string, size: number): Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError> =>
  size <= listedAtOnceUpTo
    ? attemptSync(
      "readDirectory",
      path,
      () => NFS.readdirSync(path, { withFileTypes: true }).map((entry) => ({ name: entry.name, type: typeOf(entry) }))
    )
    : Effect.acquireUseRelease(
      attemptSync("readDirectory", path, () => NFS.opendirSync(path, { bufferSize: 1024 })),
      (directory) => entriesOf(path, directory),
      closeDirectory
    )

const readDirectoryIfExists = (path: string): Effect.Effect<Option.Option<ReadonlyArray<DirectoryEntry>>, PlatformError> =>
  Effect.flatMap(
    attemptSync("readDirectory", path, () => NFS.statSync(path, { throwIfNoEntry: false })),
    (info) => info === undefined ? Effect.succeedNone : Effect.map(listing(path, info.size), Option.some)
  )

const readDirectory = (path: string): Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError> =>
  Effect.flatMap(attemptSync("readDirectory", path, () => NFS.statSync(path)), (info) => listing(path, info.size))

const stat = (path: string) => attemptSync("stat", path, () => infoOf(NFS.statSync(path)))

const statIfExists = (path: string) =>
  attemptSync("stat", path, () => {
    const stats = NFS.statSync(path, { throwIfNoEntry: false })
    return stats === undefined ? Option.none() : Option.some(infoOf(stats))
  })

const lstat = (path: string) => attemptSync("lstat", path, () => infoOf(NFS.lstatSync(path)))

const readLink = (path: string) => attemptSync("readLink", path, () => NFS.readlinkSync(path))

const runsAs: Effect.Effect<Option.Option<Owner>> = Effect.sync(() =>
  ownersApply && process.geteuid !== undefined && process.getegid !== undefined
    ? Option.some({ uid: process.geteuid(), gid: process.getegid() })
    : Option.none()
)

const lstatIfExists = (path: string) =>
  attemptSync("lstat", path, () => {
    const stats = NFS.lstatSync(path, { throwIfNoEntry: false })
    return stats === undefined ? Option.none() : Option.some(infoOf(stats))
  })

/** Where `O_NOFOLLOW` does not exist, a final link is refused by an `lstat` just before the open. */
const refuseLinkWithoutNoFollow = (path: string): Effect.Effect<void, PlatformError> =>
  O_NOFOLLOW !== undefined
    ? Effect.void
    : Effect.flatMap(lstat(path), (info) =>
      info.type === "SymbolicLink"
        ? Effect.fail(
          new SystemError({
            reason: "BadResource",
            module: "FileSystem",
            method: "readBounded",
            pathOrDescriptor: path,
            syscall: "open",
            description: "a symbolic link, and links are not followed here"
          })
        )
        : Effect.void)

/** A close that fails after the read has nothing left to report. */
const closeSyncQuietly = (fd: number) => {
  try {
    NFS.closeSync(fd)
  } catch {
    return
  }
}

const readBoundedSync = (path: string, options: { readonly maxBytes: number; readonly followLinks: boolean }): BoundedRead => {
  const fd = NFS.openSync(path, readFlags | (options.followLinks ? 0 : noFollow))
  try {
    const stats = NFS.fstatSync(fd)
    if (!stats.isFile()) return { _tag: "NotRegular", type: typeOf(stats) }
    if (stats.size > options.maxBytes) return { _tag: "TooLarge", size: stats.size }
    const read = readAtMostSync(fd, stats.size, options.maxBytes)
    // The owner of the file read, from the same descriptor: a registry record is the reader's only if its user wrote it.
    return read._tag === "Read" && ownersApply ? { _tag: "Read", bytes: read.bytes, owner: { uid: stats.uid, gid: stats.gid } } : read
  } finally {
    closeSyncQuietly(fd)
  }
}

const readBounded = (
  path: string,
  options: { readonly maxBytes: number; readonly followLinks: boolean }
): Effect.Effect<BoundedRead, PlatformError> => {
  const read = attemptSync("readBounded", path, () => readBoundedSync(path, options))
  return options.followLinks ? read : Effect.zipRight(refuseLinkWithoutNoFollow(path), read)
}

/**
 * Gives a directory this call just created its owner. The directory is opened without following a
 * link and changed through its descriptor: whoever may write its parent could have put a link to
 * another directory in its place, and root must not hand that one over.
 */
const giveDirectoryOwner = (path: string, owner: Owner): void => {
  const fd = NFS.openSync(path, O_RDONLY | (O_DIRECTORY ?? 0) | noFollow)
  try {
    if (sameOwner(NFS.fstatSync(fd), owner)) return
    try {
      NFS.fchownSync(fd, owner.uid, owner.gid)
    } catch (error) {
      throw ownerRefused("makeDirectory", path, owner)(error)
    }
  } finally {
    closeSyncQuietly(fd)
  }
}

/** `mkdir -p` one level at a time, so that each directory it creates, and only those, gets `owner`. */
const makeOwnedDirectories = (path: string, mode: number, owner: Owner): void => {
  const absolute = Path.resolve(path)
  const { root } = Path.parse(absolute)
  const parts = absolute.slice(root.length).split(Path.sep).filter((part) => part !== "")
  let prefix = root
  for (const part of parts) {
    prefix = Path.join(prefix, part)
    try {
      NFS.mkdirSync(prefix, { mode })
    } catch (error) {
      if (errnoOf(error) !== "EEXIST" || !NFS.statSync(prefix).isDirectory()) throw error
      continue
    }
    try {
      giveDirectoryOwner(prefix, owner)
    } catch (error) {
      // A directory that could not be given its owner is this call's own, and still empty.
      try {
        NFS.rmdirSync(prefix)
      } catch {
        // Somebody wrote into it meanwhile: it is theirs to keep.
      }
      throw error
    }
  }
}

/** The umask applies to the directories created, as it does for `mkdir -p`. */
const makeDirectory = (path: string, mode: number, owner?: Owner): Effect.Effect<void, PlatformError> =>
  attemptSync("makeDirectory", path, () =>
    owner === undefined || !ownersApply
      ? void NFS.mkdirSync(path, { recursive: true, mode })
      : makeOwnedDirectories(path, mode, owner))

const unlinkQuietly = (path: string) => {
  try {
    NFS.unlinkSync(path)
  } catch {
    return
  }
}

/**
 * `O_EXCL` makes the create exclusive even against a dangling link; `O_NOFOLLOW` says so again for
 * systems that would follow one. `fchmod` sets the mode on the descriptor, so the umask, which only
 * narrows the mode given to `open`, cannot leave the file with other bits than asked.
 */
const writeNewFile = (path: string, bytes: Uint8Array, mode: number, owner?: Owner, attributes?: ExtendedAttributes) =>
  attemptSync("writeNewFile", path, () => {
    // A file that gets an ACL is its owner's alone until it has it: its mode's group bits are the
    // ACL's mask, which on a file without the ACL would be the group's own access.
    const carried = attributes !== undefined && attributes._tag === "Some"
    const first = carried ? mode & 0o700 : mode
    const fd = NFS.openSync(path, O_WRONLY | O_CREAT | O_EXCL | noFollow, first)
    let written = false
    try {
      for (let offset = 0; offset < bytes.length;) offset += NFS.writeSync(fd, bytes, offset)
      // The owner before the mode: a chown may clear the set-id bits that the mode then sets.
      if (owner !== undefined && ownersApply) giveOwner(fd, path, owner)
      NFS.fchmodSync(fd, first)
      if (carried) {
        giveAttributesSync(fd, path, attributes)
        // The ACL has set the permission bits; the mode again gives back set-id bits, and its group
        // bits are the mask the ACL already has.
        NFS.fchmodSync(fd, mode)
      }
      NFS.fsyncSync(fd)
      written = true
    } finally {
      // A close that fails after the fsync has nothing left to report.
      closeSyncQuietly(fd)
      // A half-written file must not outlive the failure: whoever reads it next would take it for ours.
      if (!written) unlinkQuietly(path)
    }
  })

/** An owner equal to the one the file got from its creator needs no chown, and so no privilege. */
const giveOwner = (fd: number, path: string, owner: Owner): void => {
  if (sameOwner(NFS.fstatSync(fd), owner)) return
  try {
    NFS.fchownSync(fd, owner.uid, owner.gid)
  } catch (error) {
    throw ownerRefused("writeNewFile", path, owner)(error)
  }
}

/**
 * The whole file, or its first `maxBytes + 1` bytes when it holds more: one byte past the limit is
 * the proof that it is too large. This runs inside the compare-and-rename's window, so the buffer is sized from `fstat` (one byte
 * more, to see growth), not to the limit: zero-filling a megabyte for a small file would widen the
 * window for nothing. A file larger than `fstat` said (one that grew since, or a `/proc` file that
 * says 0) grows the buffer, up to the limit.
 */
const readSyncAtMost = (fd: number, sizeHint: number, maxBytes: number): Uint8Array => {
  const limit = maxBytes + 1
  let buffer = Buffer.alloc(Math.min(limit, sizeHint + 1))
  let length = 0
  for (;;) {
    if (length === buffer.length) {
      if (length >= limit) return asPlainBytes(buffer, length)
      const larger = Buffer.alloc(Math.min(limit, buffer.length * 2))
      buffer.copy(larger, 0, 0, length)
      buffer = larger
    }
    const bytesRead = NFS.readSync(fd, buffer, length, buffer.length - length, length)
    if (bytesRead === 0) return asPlainBytes(buffer, length)
    length += bytesRead
  }
}

/**
 * `decide` runs while the file read is still open, so that closing it is not one more call between
 * the read and what `decide` does with it.
 */
const withCurrentSync = <A>(target: string, maxBytes: number, decide: (current: CurrentTarget) => A): A => {
  const stats = NFS.lstatSync(target, { throwIfNoEntry: false })
  if (stats === undefined) return decide({ bytes: null, present: false, version: null })
  if (!stats.isFile()) return decide({ bytes: null, present: true, version: null })
  let fd: number
  try {
    fd = NFS.openSync(target, readFlags | noFollow)
  } catch (error) {
    // Gone or swapped for a link between the lstat and the open: absent, or present and not regular.
    const code = errnoOf(error)
    if (code === "ENOENT") return decide({ bytes: null, present: false, version: null })
    if (code === "ELOOP") return decide({ bytes: null, present: true, version: null })
    throw error
  }
  try {
    // In nanoseconds and with the inode exact: a version must not round two versions into one.
    const stats = NFS.fstatSync(fd, { bigint: true })
    if (!stats.isFile()) return decide({ bytes: null, present: true, version: null })
    const size = Number(stats.size)
    const head = readSyncAtMost(fd, size, maxBytes)
    const version = { entry: `${stats.dev}:${stats.ino}`, size, changed: `${stats.ctimeNs}:${stats.mtimeNs}`, head }
    return decide({ bytes: head.length > maxBytes ? null : head, present: true, version })
  } finally {
    // A read-only descriptor whose work is done: a failing close has nothing left to report, and
    // must not turn a rename that `decide` made into a failure.
    closeSyncQuietly(fd)
  }
}

/**
 * Synchronous from the re-read to the rename: no `await`, no other I/O, so no other fiber of this
 * process can run in the window. Another process still can; nothing on a POSIX file system closes it.
 */
const renameIfCurrent: FilesPrimitives["renameIfCurrent"] = (source, target, maxBytes, rename) =>
  attemptSync("replaceIfUnchanged", target, () =>
    withCurrentSync(target, maxBytes, (current) => {
      if (!rename(current)) return { current, renamed: false }
      NFS.renameSync(source, target)
      return { current, renamed: true }
    }))

/** Errors from `fsync` on a directory that mean "this platform cannot", not "the data is lost". */
const cannotSyncDirectory = new Set(["EISDIR", "EINVAL", "EPERM", "ENOTSUP", "EBADF"])

const syncDirectory = (path: string): Effect.Effect<void, PlatformError> =>
  process.platform === "win32"
    ? Effect.void
    : attemptSync("syncDirectory", path, () => {
      const fd = NFS.openSync(path, O_RDONLY)
      try {
        NFS.fsyncSync(fd)
      } catch (error) {
        if (!cannotSyncDirectory.has(errnoOf(error) ?? "")) throw error
      } finally {
        closeSyncQuietly(fd)
      }
    })

const removeFile = (path: string): Effect.Effect<void, PlatformError> =>
  attemptSync("removeFile", path, () => {
    try {
      NFS.unlinkSync(path)
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error
    }
  })

const realPath = (path: string): Effect.Effect<string, PlatformError> => attemptSync("realPath", path, () => NFS.realpathSync(path))

/** Every operation of the port on `node:fs`. */
export const make = (): Files =>
  makeFiles({
    readDirectory,
    readDirectoryIfExists,
    stat,
    statIfExists,
    lstat,
    readLink,
    runsAs,
    realPath,
    lstatIfExists,
    readBounded,
    makeDirectory,
    writeNewFile,
    extendedAttributes,
    renameIfCurrent,
    syncDirectory,
    removeFile,
    watch
  })

export const layer: Layer.Layer<Files> = Layer.sync(Files, make)
