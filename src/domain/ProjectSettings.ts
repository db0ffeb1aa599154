/**
 * Where Claude Code 2.1.332 looks for a session's project settings.
 *
 * The shared file is `<folder>/.claude/settings.json` where the folder is the one the session runs
 * in, never a parent: a session started in `repo/sub` does not read `repo/.claude/settings.json`.
 *
 * The local file moves to the repository: inside a git repository it is the root's
 * `.claude/settings.local.json`, and the session's own folder's is still read beneath it (the
 * root's values win). It stays in the session's folder when that is the root, when the root is the
 * user's home directory, or when the root, its `.git` or its `.claude` belongs to another user: a
 * file another user can write must not tighten or loosen this user's sessions.
 *
 * A host can name the project folder with `--project-config-root`; both files are then read there.
 */
import { basename, dirname, join, resolve } from "node:path"

/** What a `.git` entry is, looked at without following links. */
export type GitEntry = "directory" | "file" | "link" | "none"

/**
 * The repository root Claude Code finds for a folder: the nearest folder, itself included, whose
 * `.git` is a directory (a repository) or a file (a worktree or submodule). A `.git` that is a
 * symbolic link ends the search without a root.
 */
export const nearestGitRoot = (folder: string, gitEntryAt: (folder: string) => GitEntry): string | null => {
  for (let current = folder;; current = dirname(current)) {
    const entry = gitEntryAt(current)
    if (entry === "directory" || entry === "file") return current
    if (entry === "link" || dirname(current) === current) return null
  }
}

/**
 * The git directory a `.git` file points to (`gitdir: <path>`, relative to the folder holding it),
 * or null when the file says nothing Claude Code follows.
 */
export const linkedGitDir = (root: string, gitFileText: string): string | null => {
  const text = gitFileText.trim()
  if (!text.startsWith("gitdir:")) return null
  const target = text.slice("gitdir:".length).trim()
  return target === "" ? null : resolve(root, target)
}

/** What a linked worktree's git directory says about the repository it belongs to. */
export interface WorktreeLink {
  /** Where the root's `.git` file points (`linkedGitDir`). */
  readonly gitDir: string
  /** The text of `<gitDir>/commondir`, or null when it is missing. */
  readonly commondir: string | null
  /** The text of `<gitDir>/gitdir`, which points back at the worktree's `.git`, or null when missing. */
  readonly backLink: string | null
  /** Whether the common directory, when not named `.git`, holds a `.git` entry of its own. */
  readonly commonDirHasGitEntry: boolean
}

/**
 * The canonical root of a repository whose root holds a `.git` file: for a linked worktree that
 * really belongs to its repository (its git directory sits in `<common>/worktrees/` and points back
 * at this worktree), the main worktree's folder; otherwise the root itself. Claude Code keeps one
 * local settings file per repository, not per worktree.
 */
export const canonicalGitRoot = (root: string, link: WorktreeLink): string => {
  if (link.commondir === null || link.backLink === null) return root
  const common = resolve(link.gitDir, link.commondir.trim())
  if (dirname(link.gitDir) !== join(common, "worktrees")) return root
  if (resolve(link.gitDir, link.backLink.trim()) !== join(root, ".git")) return root
  if (basename(common) === ".git") return dirname(common)
  return link.commonDirHasGitEntry ? root : common
}

export interface ProjectFacts {
  /** The folder the session runs in. */
  readonly folder: string
  /** `--project-config-root`, resolved, or null. */
  readonly projectConfigRoot: string | null
  /** The repository's canonical root (a worktree's main repository), or null outside git. */
  readonly gitRoot: string | null
  /** The real path of the user's home folder. */
  readonly homeFolder: string
  /** Whether the root, its `.git` and its `.claude` (when present) all belong to the session's user. */
  readonly gitRootOwnedByUser: boolean
}

export interface ProjectSettingsFiles {
  readonly projectSettings: string
  /** In merge order: a later file's value wins. */
  readonly localSettings: ReadonlyArray<string>
}

const sharedFile = (folder: string) => join(folder, ".claude", "settings.json")
const localFile = (folder: string) => join(folder, ".claude", "settings.local.json")

/** The folder that holds the local settings Claude Code reads last. */
export const localSettingsFolder = (facts: ProjectFacts): string => {
  const { folder, gitRoot } = facts
  if (gitRoot === null || gitRoot === folder || gitRoot === facts.homeFolder || !facts.gitRootOwnedByUser) return folder
  return gitRoot
}

export const projectSettingsFiles = (facts: ProjectFacts): ProjectSettingsFiles => {
  if (facts.projectConfigRoot !== null) {
    return { projectSettings: sharedFile(facts.projectConfigRoot), localSettings: [localFile(facts.projectConfigRoot)] }
  }
  const local = localSettingsFolder(facts)
  return {
    projectSettings: sharedFile(facts.folder),
    localSettings: local === facts.folder ? [localFile(local)] : [localFile(facts.folder), localFile(local)]
  }
}
