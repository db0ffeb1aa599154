/**
 * The narrow file port: exactly what the registry and the settings need, and nothing more.
 *
 * Why not `@effect/platform`'s `FileSystem`: it has no `lstat`; its `open` can neither refuse a final
 * symlink (`O_NOFOLLOW`) nor open without blocking (`O_NONBLOCK`, without which a FIFO with no writer
 * hangs the read); its `readDirectory` gives names without the type each entry has; and it has no
 * compare-and-rename. Each of those is a guarantee of the contract (a FIFO is never opened, a
 * symlinked settings file is refused, a concurrent edit is never overwritten), so the port states
 * them rather than weaken them. (`FileSystem` can fsync a directory, by opening it and `sync`ing the
 * file; `syncDirectory` is here so that the settings write needs one port, not two.) `layerNode`
 * implements it on `node:fs`; `layerMemory` (in `claude-peers/testing`) is a faithful in-memory tree
 * with fault injection. One conformance suite runs against both.
 */
import type { PlatformError } from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Stream } from "effect/Stream"

/** An entry's type, in `@effect/platform`'s words. */
export type EntryType = FileSystem.File.Type

export interface DirectoryEntry {
  readonly name: string
  /** The type the directory itself reports; `SymbolicLink` and `Unknown` need a `stat` to know more. */
  readonly type: EntryType
}

/** Directory entries in the order of their names' UTF-16 units. */
export const byName = (a: DirectoryEntry, b: DirectoryEntry): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * Who owns an entry: its user and group ids. On Windows, where they mean nothing, both are 0 and an
 * owner asked for is not given.
 */
export interface Owner {
  readonly uid: number
  readonly gid: number
}

export interface FileInfo extends Owner {
  readonly type: EntryType
  readonly size: number
  /** Permission bits only (`mode & 0o7777`). */
  readonly mode: number
  /** The last write of its content, in epoch ms (`mtime`). */
  readonly modifiedAtMs: number
}

export type BoundedRead =
  /** `owner`: the file's owner as the read found it (the same open file), where the layer reports it. */
  | { readonly _tag: "Read"; readonly bytes: Uint8Array; readonly owner?: Owner }
  | { readonly _tag: "NotRegular"; readonly type: EntryType }
  | { readonly _tag: "TooLarge"; readonly size: number }

export type ReplaceOutcome =
  | { readonly _tag: "Replaced" }
  /** The target's bytes differed from the expected ones: nothing was renamed. `bytes` is null when it is gone. */
  | { readonly _tag: "Changed"; readonly bytes: Uint8Array | null }

/**
 * A file's POSIX ACL and extended attributes, as an update must carry them to the file that replaces
 * it: none (or none this platform keeps: only Linux's are read), or the attributes by name, the
 * access ACL among them as `system.posix_acl_access`. Values are opaque bytes.
 */
export type ExtendedAttributes =
  | { readonly _tag: "None" }
  | { readonly _tag: "Some"; readonly entries: ReadonlyArray<{ readonly name: string; readonly value: Uint8Array }> }

export const noExtendedAttributes: ExtendedAttributes = { _tag: "None" }

export interface WatchEvent {
  /** The entry's name inside the watched directory, when the platform says it. */
  readonly name: string | null
}

export interface DirectoryWatchOptions {
  /** How often the watch checks that the path still names the directory it watches. */
  readonly recheckEvery?: Duration.DurationInput | undefined
}

export interface Files {
  /** Entries with the types the directory reports. A missing directory fails with `NotFound`. */
  readonly readDirectory: (path: string) => Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError>
  /**
   * `readDirectory` for a directory whose absence is an answer (a registry before any session has
   * started): none when nothing is at `path` or on the way to it (`ENOENT`), without a failure made
   * for it. Anything else fails as `readDirectory` does.
   */
  readonly readDirectoryIfExists: (path: string) => Effect.Effect<Option.Option<ReadonlyArray<DirectoryEntry>>, PlatformError>
  /** Follows links. */
  readonly stat: (path: string) => Effect.Effect<FileInfo, PlatformError>
  /**
   * `stat` for a file whose absence is an answer (a settings file nobody wrote): none when nothing
   * is at `path` or on the way to it, without a failure made for it (`make` derives it from `stat`
   * for a layer that has none).
   */
  readonly statIfExists: (path: string) => Effect.Effect<Option.Option<FileInfo>, PlatformError>
  /** Does not follow a final link. */
  readonly lstat: (path: string) => Effect.Effect<FileInfo, PlatformError>
  /** The text of a symbolic link, as it is (a relative one is relative to the link's directory). Fails `BadResource` (EINVAL) for what is not a link. */
  readonly readLink: (path: string) => Effect.Effect<string, PlatformError>
  /** Whom this process acts as on files (its effective uid and gid), or none where owners mean nothing (Windows). */
  readonly runsAs: Effect.Effect<Option.Option<Owner>>
  /**
   * The absolute path with every link followed and no `.` or `..` left (`realpath(3)`): how two
   * spellings of one directory are known to be one. Fails with `NotFound` when nothing is there.
   */
  readonly realPath: (path: string) => Effect.Effect<string, PlatformError>
  /** `lstat` whose absence is an answer, as `statIfExists`. */
  readonly lstatIfExists: (path: string) => Effect.Effect<Option.Option<FileInfo>, PlatformError>
  /**
   * Reads a regular file of at most `maxBytes`. Opens without blocking (so a FIFO swapped in after
   * a stat still cannot hang the read) and checks the opened descriptor: a non-regular file is
   * `NotRegular` and nothing is read; more than `maxBytes` is `TooLarge`, even when the file grows
   * while it is read. With `followLinks: false` a final symlink fails the open (`BadResource`).
   */
  readonly readBounded: (
    path: string,
    options: { readonly maxBytes: number; readonly followLinks: boolean }
  ) => Effect.Effect<BoundedRead, PlatformError>
  /**
   * Creates a directory and its missing parents with the given mode (existing ones are kept). With
   * `owner`, each directory it creates is given that owner, or the call fails (`PermissionDenied`,
   * syscall `fchown`, where this process may not give it) and the directory it could not give away
   * is removed.
   */
  readonly makeDirectory: (path: string, mode: number, owner?: Owner) => Effect.Effect<void, PlatformError>
  /**
   * Creates a new file exclusively (`AlreadyExists` when anything is there, links included),
   * writes all of `bytes`, fsyncs it and closes it. The mode is set exactly, whatever the umask.
   * With `owner`, the file is given that owner through its descriptor before the mode is set (a
   * file that root writes for a user is the user's, and nothing but its creator ever sees it
   * otherwise); where this process may not give it, the create fails `PermissionDenied` with the
   * syscall `fchown` and the file is removed. An owner equal to the one the file got anyway needs no
   * permission.
   */
  readonly writeNewFile: (
    path: string,
    bytes: Uint8Array,
    mode: number,
    owner?: Owner,
    attributes?: ExtendedAttributes
  ) => Effect.Effect<void, PlatformError>
  /**
   * The ACL and extended attributes of a regular file, links not followed, for `writeNewFile` to
   * give the file that replaces it. With `attributes`, `writeNewFile` creates the file readable by
   * its owner only and gives it the attributes (its ACL, and so its mode's group bits, included)
   * before it fsyncs it: at no moment may the new file be readable by anyone the old one was not.
   * Fails where they cannot be read or cannot be given (the create then removes the file), so that
   * an update refuses rather than drops an ACL. `security.selinux` is not carried: the new file gets
   * its label from the policy, as any file written there does.
   */
  readonly extendedAttributes: (path: string) => Effect.Effect<ExtendedAttributes, PlatformError>
  /**
   * Compare-and-rename, the closest the platform allows: re-reads `target` and, only when its bytes
   * equal `expected` (null: `target` must be absent), renames `source` over it, with no other I/O and
   * no yielding between the two. Another process can still write in between; nothing can be closer.
   */
  readonly replaceIfUnchanged: (
    source: string,
    target: string,
    expected: Uint8Array | null,
    maxBytes: number
  ) => Effect.Effect<ReplaceOutcome, PlatformError>
  /**
   * `target` as the compare-and-rename finds it (a link not followed, a FIFO never opened, at most
   * `maxBytes + 1` bytes read), renaming nothing: how a file too large to compare by its bytes is
   * first seen, for `replaceIfSameVersion` to compare with later.
   */
  readonly current: (target: string, maxBytes: number) => Effect.Effect<CurrentTarget, PlatformError>
  /**
   * `replaceIfUnchanged` for a file too large to compare by its bytes: renames `source` over
   * `target` only when `target` is still the version `current` saw with the same `maxBytes`.
   */
  readonly replaceIfSameVersion: (
    source: string,
    target: string,
    expected: FileVersion,
    maxBytes: number
  ) => Effect.Effect<ReplaceOutcome, PlatformError>
  /** fsyncs a directory, so that a rename in it survives a power cut. A no-op where the OS cannot. */
  readonly syncDirectory: (path: string) => Effect.Effect<void, PlatformError>
  /** Removes a file this project created (its temp file or lock). A missing file is not an error. */
  readonly removeFile: (path: string) => Effect.Effect<void, PlatformError>
  /**
   * Change notifications for a directory's entries. Fails with `NotFound` when the directory does
   * not exist; ends when the directory is removed, and when the path no longer names it (a link on
   * the way re-pointed elsewhere, a directory renamed over it): a system watches what it opened,
   * not the path. With `recheckEvery`, the path is looked at that often as well, since re-pointing
   * a link above the directory sends it no notification; without it, only when a notification comes. Fails, at once or later, when the system refuses
   * notifications (Linux's inotify limits: `EMFILE` for instances, `ENOSPC` for watches, in the
   * error's `description`): the directory can still be read, and a caller that must not miss a
   * change reads it instead.
   */
  readonly watch: (path: string, options?: DirectoryWatchOptions) => Stream<WatchEvent, PlatformError>
}

export const Files = Context.GenericTag<Files>("claude-peers/Files")

/** Whether two byte strings are equal. */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The target of a compare-and-rename as it is found: absent, or present with its bytes; `bytes` is
 * null also for what the port does not read (not a regular file, or more than `maxBytes`), which
 * differs from any bytes expected.
 */
export interface CurrentTarget {
  readonly present: boolean
  readonly bytes: Uint8Array | null
  /** A regular file's version, as its open descriptor gives it; null for anything else. */
  readonly version: FileVersion | null
}

/**
 * A regular file's version, told without reading all of it (a lock file of garbage may be any size,
 * and what is read of it must stay bounded): the same entry (device and inode), the same size, the
 * same last change (`ctime` and `mtime`: a write moves both, and no caller can set `ctime` back),
 * and the same first bytes (at most `maxBytes + 1`). The times are as fine as the file system keeps
 * them; a rewrite of the same size within one tick, beyond the first bytes, goes unseen.
 */
export interface FileVersion {
  readonly entry: string
  readonly size: number
  readonly changed: string
  readonly head: Uint8Array
}

export const sameVersion = (a: FileVersion, b: FileVersion): boolean =>
  a.entry === b.entry && a.size === b.size && a.changed === b.changed && sameBytes(a.head, b.head)

/** What a layer implements; `make` derives the rest of the port from it. */
export interface FilesPrimitives extends Omit<Files, "replaceIfUnchanged" | "current" | "replaceIfSameVersion" | "statIfExists" | "lstatIfExists"> {
  /** As `Files.statIfExists`; without it, `stat` is asked and a `NotFound` answers none. */
  readonly statIfExists?: Files["statIfExists"] | undefined
  /** As `Files.lstatIfExists`, derived from `lstat` alike. */
  readonly lstatIfExists?: Files["lstatIfExists"] | undefined
  /** As `Files.current`; without it, `renameIfCurrent` is asked and renames nothing. */
  readonly current?: Files["current"] | undefined
  /**
   * Finds `target` as it is now and, only when `rename` says so of it, renames `source` over it,
   * with no other I/O and no yielding between the two (so no fiber of this process can run in the
   * window). A link is not followed, a FIFO is never opened, and at most `maxBytes + 1` bytes are read.
   */
  readonly renameIfCurrent: (
    source: string,
    target: string,
    maxBytes: number,
    rename: (current: CurrentTarget) => boolean
  ) => Effect.Effect<{ readonly current: CurrentTarget; readonly renamed: boolean }, PlatformError>
}

/** `effect`'s answer, or none where it fails `NotFound`: an absence that is an answer. */
export const absentIfNotFound = <A>(effect: Effect.Effect<A, PlatformError>): Effect.Effect<Option.Option<A>, PlatformError> =>
  effect.pipe(
    Effect.map(Option.some),
    Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "NotFound", () => Effect.succeedNone)
  )

/**
 * The port from a layer's primitives. The compare-and-rename's decision is made here, once for every
 * layer: expected bytes must be found exactly, and an expected absence (null) must find nothing at all.
 */
export const make = ({ current, lstatIfExists, renameIfCurrent, statIfExists, ...primitives }: FilesPrimitives): Files => {
  const replaceIf = (source: string, target: string, maxBytes: number, rename: (current: CurrentTarget) => boolean) =>
    Effect.map(
      renameIfCurrent(source, target, maxBytes, rename),
      ({ current, renamed }): ReplaceOutcome => (renamed ? { _tag: "Replaced" } : { _tag: "Changed", bytes: current.bytes })
    )
  return {
    ...primitives,
    statIfExists: statIfExists ?? ((path) => absentIfNotFound(primitives.stat(path))),
    lstatIfExists: lstatIfExists ?? ((path) => absentIfNotFound(primitives.lstat(path))),
    replaceIfUnchanged: (source, target, expected, maxBytes) =>
      replaceIf(
        source,
        target,
        maxBytes,
        (current) => expected === null ? !current.present : current.bytes !== null && sameBytes(current.bytes, expected)
      ),
    // A rename that is never made: `source` is not touched.
    current: current ?? ((target, maxBytes) => Effect.map(renameIfCurrent(target, target, maxBytes, () => false), (found) => found.current)),
    replaceIfSameVersion: (source, target, expected, maxBytes) =>
      replaceIf(source, target, maxBytes, (current) => current.version !== null && sameVersion(current.version, expected))
  }
}
