/**
 * The files the policy of a session depends on, read through the file port the way Claude Code
 * 2.1.332 finds them: the managed file and its drop-ins, the `--settings` file, the user's file,
 * the project's shared and local files (the local one moves to the repository's root), and the
 * global config whose `env` can set the kill switch.
 *
 * Reading never fails: a file that is missing, not a file, too large or unreadable becomes a
 * `FileRead` that says so, and `PolicyEvidence` turns it into a source's state. A file is stat'ed
 * before it is opened, so that a FIFO is never opened (opening one could release a writer blocked
 * on it); `readBounded` checks the opened descriptor again for one swapped in after the stat.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import { userSettingsFileName } from "../domain/ClaudeEnvironment.js"
import type { FileRead } from "../domain/ClaudeSettingsFile.js"
import { settingsFileMaxBytes } from "../domain/ClaudeSettingsFile.js"
import { dropInDirectoryName, type DropInEntry, dropInNames, managedFileName } from "../domain/ManagedSettings.js"
import { type Observed, read as observedRead, unreadable } from "../domain/Observed.js"
import type { FileFact } from "../domain/PolicyEvidence.js"
import { canonicalGitRoot, type GitEntry, linkedGitDir } from "../domain/ProjectSettings.js"
import type { ClaudeHome } from "./ClaudeHome.js"
import type { BoundedRead, Files } from "./Files.js"
import type { MountNamespace } from "./ProcessProbe.js"

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

const failedReason = (error: PlatformError): string => error._tag === "SystemError" && error.reason === "PermissionDenied" ? "permission denied" : error.message

const failed = (error: PlatformError): FileRead => ({ _tag: "Failed", reason: failedReason(error) })

const missing: Effect.Effect<FileRead> = Effect.succeed({ _tag: "Missing" })
const readFailed = (error: PlatformError): Effect.Effect<FileRead> => Effect.succeed(isNotFound(error) ? { _tag: "Missing" } : failed(error))
const notAFile: Effect.Effect<FileRead> = Effect.succeed({ _tag: "NotAFile" })

const fileReadOf = (outcome: BoundedRead): FileRead => {
  switch (outcome._tag) {
    case "Read":
      return { _tag: "Bytes", bytes: outcome.bytes }
    case "NotRegular":
      return { _tag: "NotAFile" }
    case "TooLarge":
      return { _tag: "TooLarge", size: outcome.size }
  }
}

/** Text files this module reads to find a repository (`.git` files, `commondir`): small, or not what git writes. */
const gitFileMaxBytes = 64 * 1024

/**
 * What one pass (one `Policy.list` or `resolve`) reads, each thing once: every session of a machine
 * shares its managed files, most share a user file, and sessions in one folder share its project
 * files and its walk up to the repository's root. A reader lives for one pass only, never longer:
 * the files change between calls.
 */
export interface FileReader {
  readonly read: (file: string) => Effect.Effect<FileRead>
  readonly fact: (file: string) => Effect.Effect<FileFact>
  /** `make`'s answer under `key`, computed the first time it is asked in this pass. */
  readonly once: <A>(key: string, make: () => Effect.Effect<A>) => Effect.Effect<A>
  readonly files: Files
}

export const makeFileReader = (files: Files): FileReader => {
  const known = new Map<string, unknown>()
  // Looked up when the effect is made, which is when a pass runs it: an answer already known costs
  // one `succeed`, since a pass asks the same questions for every session.
  const once = <A>(key: string, make: () => Effect.Effect<A>): Effect.Effect<A> =>
    known.has(key) ? Effect.succeed(known.get(key) as A) : Effect.map(make(), (value) => {
      known.set(key, value)
      return value
    })
  // A missing file is the common answer (most sessions have no local or managed files): asked
  // so that its absence is a value, not a failure built and caught.
  const { statIfExists } = files
  const readUncached = (file: string, maxBytes: number): Effect.Effect<FileRead> =>
    Effect.matchEffect(statIfExists(file), {
      onFailure: readFailed,
      onSuccess: (found): Effect.Effect<FileRead> => {
        if (Option.isNone(found)) return missing
        const info = found.value
        if (info.type !== "File") return notAFile
        if (info.size > maxBytes) return Effect.succeed({ _tag: "TooLarge", size: info.size })
        return Effect.matchEffect(files.readBounded(file, { maxBytes, followLinks: true }), {
          onFailure: readFailed,
          onSuccess: (outcome) => Effect.succeed(fileReadOf(outcome))
        })
      }
    })
  const read = (file: string): Effect.Effect<FileRead> => once(`read:${file}`, () => readUncached(file, settingsFileMaxBytes))
  const fact = (file: string): Effect.Effect<FileFact> => {
    const done = known.get(`read:${file}`) as FileRead | undefined
    return done === undefined ? Effect.map(read(file), (read) => ({ path: file, read })) : Effect.succeed({ path: file, read: done })
  }
  return { read, fact, once, files }
}

/** The text of a small file, or null when it is missing, not a file or unreadable. */
const smallText = (files: Files, file: string): Effect.Effect<string | null> =>
  files.readBounded(file, { maxBytes: gitFileMaxBytes, followLinks: true }).pipe(
    Effect.map((outcome) => (outcome._tag === "Read" ? new TextDecoder().decode(outcome.bytes) : null)),
    Effect.orElseSucceed(() => null)
  )

const entryOf = (files: Files, directory: string, name: string, type: DropInEntry["type"] | "Unknown") =>
  type !== "Unknown"
    ? Effect.succeed<DropInEntry>({ name, type })
    : files.lstat(path.join(directory, name)).pipe(
      Effect.map((info): DropInEntry => {
        const known = dropInType(info.type)
        return { name, type: known === "Unknown" ? "Other" : known }
      }),
      Effect.orElseSucceed((): DropInEntry => ({ name, type: "Other" }))
    )

const dropInType = (type: string): DropInEntry["type"] | "Unknown" =>
  type === "File" || type === "SymbolicLink" || type === "Directory" || type === "Unknown" ? type : "Other"

/**
 * The managed files in the order Claude Code merges them: `managed-settings.json`, then the
 * drop-ins. A drop-in folder that cannot be listed is reported as a failed read of the folder, so
 * that the answer says it could not see what might be there.
 */
export const managedFacts = (reader: FileReader, directory: string): Effect.Effect<ReadonlyArray<FileFact>> =>
  reader.once(`managed:${directory}`, () => managedFactsUncached(reader, directory))

const managedFactsUncached = (reader: FileReader, directory: string): Effect.Effect<ReadonlyArray<FileFact>> =>
  Effect.gen(function*() {
    const base = yield* reader.fact(path.join(directory, managedFileName))
    const folder = path.join(directory, dropInDirectoryName)
    const listing = yield* Effect.either(reader.files.readDirectoryIfExists(folder))
    if (listing._tag === "Left") {
      return isNotFound(listing.left) || (listing.left._tag === "SystemError" && listing.left.reason === "BadResource")
        ? [base]
        : [base, { path: folder, read: failed(listing.left) }]
    }
    if (Option.isNone(listing.right)) return [base]
    const entries = yield* Effect.forEach(listing.right.value, (entry) => entryOf(reader.files, folder, entry.name, dropInType(entry.type)))
    const dropIns = yield* Effect.forEach(dropInNames(entries), (name) => reader.fact(path.join(folder, name)))
    return [base, ...dropIns]
  })

const gitEntryAt = (reader: FileReader, folder: string): Effect.Effect<GitEntry> => {
  const file = path.join(folder, ".git")
  const files = reader.files
  // Most folders on the way up have no `.git`: its absence is asked as a value.
  const { lstatIfExists } = files
  // Sessions in sibling folders walk up through the same parents: each is looked at once per pass.
  return reader.once(
    `git:${file}`,
    () =>
      Effect.match(lstatIfExists(file), {
        onFailure: (): GitEntry => "none",
        onSuccess: (info): GitEntry => {
          if (Option.isNone(info)) return "none"
          const type = info.value.type
          return type === "Directory" ? "directory" : type === "File" ? "file" : type === "SymbolicLink" ? "link" : "none"
        }
      })
  )
}

/** The nearest folder, itself included, whose `.git` is a directory or a file; a `.git` link ends the search. */
const nearestGitRoot = (reader: FileReader, folder: string): Effect.Effect<{ readonly root: string; readonly entry: GitEntry } | null> =>
  Effect.gen(function*() {
    for (let current = folder;; current = path.dirname(current)) {
      const entry = yield* gitEntryAt(reader, current)
      if (entry === "directory" || entry === "file") return { root: current, entry }
      if (entry === "link" || path.dirname(current) === current) return null
    }
  })

/** The repository's canonical root for a folder: a linked worktree's main worktree; null outside git. Found once per folder and pass. */
export const gitRootOf = (reader: FileReader, folder: string): Effect.Effect<string | null> =>
  reader.once(`gitRoot:${folder}`, () => gitRootUncached(reader, folder))

const gitRootUncached = (reader: FileReader, folder: string): Effect.Effect<string | null> =>
  Effect.gen(function*() {
    const files = reader.files
    const found = yield* nearestGitRoot(reader, folder)
    if (found === null) return null
    if (found.entry === "directory") return found.root
    const gitFile = yield* smallText(files, path.join(found.root, ".git"))
    const gitDir = gitFile === null ? null : linkedGitDir(found.root, gitFile)
    if (gitDir === null) return found.root
    const commondir = yield* smallText(files, path.join(gitDir, "commondir"))
    const backLink = yield* smallText(files, path.join(gitDir, "gitdir"))
    const common = commondir === null ? null : path.resolve(gitDir, commondir.trim())
    const commonDirHasGitEntry = common === null || path.basename(common) === ".git"
      ? false
      : (yield* gitEntryAt(reader, common)) !== "none"
    return canonicalGitRoot(found.root, { gitDir, commondir, backLink, commonDirHasGitEntry })
  })

/** Who owns what Claude Code checks before it keeps the local settings at a repository's root. */
export interface GitRootOwners {
  /** The root, links followed (`stat`). */
  readonly root: number
  /** Its `.git`, links not followed. */
  readonly git: number
  /** Its `.claude`, links not followed; null when there is none. */
  readonly claude: number | null
}

/**
 * The owners of a repository's root, its `.git` and its `.claude`, as Claude Code reads them
 * (`stat`, `lstat`, `lstat`), or why they could not be read. Found once per root and pass.
 */
export const gitRootOwnersOf = (reader: FileReader, root: string): Effect.Effect<Observed<GitRootOwners>> =>
  reader.once(`owners:${root}`, () =>
    Effect.gen(function*() {
      const { files } = reader
      const rootInfo = yield* files.stat(root)
      const git = yield* files.lstat(path.join(root, ".git"))
      const claude = yield* files.lstatIfExists(path.join(root, ".claude"))
      return observedRead<GitRootOwners>({ root: rootInfo.uid, git: git.uid, claude: Option.isSome(claude) ? claude.value.uid : null })
    }).pipe(Effect.catchAll((error) => Effect.succeed(unreadable<GitRootOwners>(failedReason(error))))))

/** The port with every path taken inside `root`: the files a process in another mount namespace sees. */
const filesUnder = (files: Files, root: string): Files => ({
  ...files,
  readDirectory: (file) => files.readDirectory(root + file),
  readDirectoryIfExists: (file) => files.readDirectoryIfExists(root + file),
  stat: (file) => files.stat(root + file),
  statIfExists: (file) => files.statIfExists(root + file),
  lstatIfExists: (file) => files.lstatIfExists(root + file),
  lstat: (file) => files.lstat(root + file),
  readBounded: (file, options) => files.readBounded(root + file, options)
})

const failedView = (files: Files, reason: string): FileReader => {
  const read = (): Effect.Effect<FileRead> => Effect.succeed({ _tag: "Failed", reason })
  const root = "/nonexistent-mount-namespace"
  return {
    read,
    fact: (file) => Effect.succeed({ path: file, read: { _tag: "Failed", reason } }),
    once: (_key, make) => make(),
    files: filesUnder(files, root)
  }
}

/**
 * The files as the session sees them. A session in another mount namespace (a container,
 * `unshare --mount`) reads its own `/etc/claude-code/…` and project files at the paths it names:
 * here they are under its root (`/proc/<pid>/root`), readable by root or its own user, and the
 * readings name the path that was read. When its namespace cannot be told, no file at its paths is
 * known to be the one it reads.
 */
export const sessionView = (shared: FileReader, pid: number, mount: Observed<MountNamespace> | undefined): FileReader => {
  if (mount === undefined || (mount._tag === "Read" && mount.value.ours)) return shared
  if (mount._tag === "Unreadable") {
    return failedView(shared.files, `whether session ${pid} sees the files we see is unknown: its mount namespace could not be read (${mount.reason})`)
  }
  const root = mount.value.root
  const through = (read: FileRead): FileRead =>
    read._tag === "Failed"
      ? {
        _tag: "Failed",
        reason: `${read.reason} (read through ${root}: the session runs in another mount namespace, whose files only root or its own user may read)`
      }
      : read
  const read = (file: string) => Effect.map(shared.read(root + file), through)
  return {
    read,
    fact: (file) => Effect.map(read(file), (outcome) => ({ path: root + file, read: outcome })),
    // Keyed by the root as well: the same path names another file in another namespace.
    once: (key, make) => shared.once(`${root}\0${key}`, make),
    files: filesUnder(shared.files, root)
  }
}

/**
 * The user's settings file. The session registered in this home, so in our mount namespace the
 * home is this one. In another namespace its home is wherever its environment puts it there
 * (`CLAUDE_CONFIG_DIR`, else `$HOME/.claude`), read through its root; without its environment, the
 * registry's own directory, which it writes, is taken as its home.
 */
export const userFact = (
  shared: FileReader,
  view: FileReader,
  home: ClaudeHome,
  environ: ReadonlyMap<string, string> | null,
  mount: Observed<MountNamespace> | undefined
): Effect.Effect<FileFact> => {
  const name = environ === null ? "settings.json" : userSettingsFileName(environ)
  const foreign = mount !== undefined && mount._tag === "Read" && !mount.value.ours
  if (!foreign || environ === null) return shared.fact(path.join(home.root, name))
  const configDir = environ.get("CLAUDE_CONFIG_DIR")
  const itsHome = configDir !== undefined && configDir !== "" ? configDir : path.join(environ.get("HOME") ?? "/", ".claude")
  return view.fact(path.join(itsHome, name))
}
