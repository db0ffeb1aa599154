/**
 * Where a session's project settings are: the shared file in the session's own folder (no walk
 * up), the local file at the repository root when the root is safe to trust, with the folder's own
 * local file beneath it.
 */
import { describe, expect, it } from "@effect/vitest"
import { canonicalGitRoot, type GitEntry, linkedGitDir, nearestGitRoot, type ProjectFacts, projectSettingsFiles } from "../src/domain/ProjectSettings.js"

const entries = (map: Record<string, GitEntry>) => (folder: string): GitEntry => map[folder] ?? "none"

describe("nearestGitRoot", () => {
  it("walks up to the nearest folder whose .git is a directory or a file", () => {
    expect(nearestGitRoot("/r/a/b", entries({ "/r": "directory" }))).toBe("/r")
    expect(nearestGitRoot("/r/a/b", entries({ "/r": "directory", "/r/a": "file" }))).toBe("/r/a")
    expect(nearestGitRoot("/r", entries({ "/r": "directory" }))).toBe("/r")
  })

  it("finds none outside a repository, and stops at a .git that is a link", () => {
    expect(nearestGitRoot("/r/a", entries({}))).toBeNull()
    expect(nearestGitRoot("/r/a", entries({ "/r/a": "link", "/r": "directory" }))).toBeNull()
  })
})

describe("a linked worktree", () => {
  const link = {
    gitDir: "/srv/repo/.git/worktrees/wt",
    commondir: "../..\n",
    backLink: "/srv/wt/.git\n",
    commonDirHasGitEntry: false
  }

  it("follows its .git file to its git directory", () => {
    expect(linkedGitDir("/srv/wt", "gitdir: /srv/repo/.git/worktrees/wt\n")).toBe("/srv/repo/.git/worktrees/wt")
    expect(linkedGitDir("/srv/sub", "gitdir: ../.git/modules/sub")).toBe("/srv/.git/modules/sub")
    expect(linkedGitDir("/srv/wt", "not a link")).toBeNull()
  })

  it("has the main worktree as its canonical root", () => {
    expect(canonicalGitRoot("/srv/wt", link)).toBe("/srv/repo")
  })

  it("keeps its own root when the link does not hold together", () => {
    expect(canonicalGitRoot("/srv/wt", { ...link, commondir: null })).toBe("/srv/wt")
    expect(canonicalGitRoot("/srv/wt", { ...link, backLink: "/elsewhere/.git" })).toBe("/srv/wt")
    // A submodule's git directory is not under <common>/worktrees.
    expect(canonicalGitRoot("/srv/sub", { ...link, gitDir: "/srv/.git/modules/sub" })).toBe("/srv/sub")
  })

  it("belongs to a bare repository's folder when the common directory is not .git", () => {
    const bare = { gitDir: "/srv/repo.git/worktrees/wt", commondir: "../..", backLink: "/srv/wt/.git", commonDirHasGitEntry: false }
    expect(canonicalGitRoot("/srv/wt", bare)).toBe("/srv/repo.git")
    expect(canonicalGitRoot("/srv/wt", { ...bare, commonDirHasGitEntry: true })).toBe("/srv/wt")
  })
})

describe("projectSettingsFiles", () => {
  const facts = (overrides: Partial<ProjectFacts>): ProjectFacts => ({
    folder: "/home/u/repo/sub",
    projectConfigRoot: null,
    gitRoot: "/home/u/repo",
    homeFolder: "/home/u",
    gitRootOwnedByUser: true,
    ...overrides
  })

  it("reads the shared file in the session's folder only, never a parent's", () => {
    expect(projectSettingsFiles(facts({})).projectSettings).toBe("/home/u/repo/sub/.claude/settings.json")
  })

  it("reads the root's local file over the folder's own inside a repository", () => {
    expect(projectSettingsFiles(facts({})).localSettings).toEqual([
      "/home/u/repo/sub/.claude/settings.local.json",
      "/home/u/repo/.claude/settings.local.json"
    ])
  })

  it("keeps the local file in the folder outside git, at the root, at home, or when another user owns the root", () => {
    const here = ["/home/u/repo/sub/.claude/settings.local.json"]
    expect(projectSettingsFiles(facts({ gitRoot: null })).localSettings).toEqual(here)
    expect(projectSettingsFiles(facts({ gitRoot: "/home/u/repo/sub" })).localSettings).toEqual(here)
    expect(projectSettingsFiles(facts({ gitRoot: "/home/u" })).localSettings).toEqual(here)
    expect(projectSettingsFiles(facts({ gitRootOwnedByUser: false })).localSettings).toEqual(here)
  })

  it("reads both files in the folder a host names with --project-config-root", () => {
    expect(projectSettingsFiles(facts({ projectConfigRoot: "/srv/p" }))).toEqual({
      projectSettings: "/srv/p/.claude/settings.json",
      localSettings: ["/srv/p/.claude/settings.local.json"]
    })
  })
})
