/**
 * Where a session's project settings are: the shared file in the session's own folder (no walk
 * up), the local file at the repository root when the root is safe to trust, with the folder's own
 * local file beneath it.
 */
import { describe, expect, it } from "@effect/vitest"
import { type GitEntry, nearestGitRoot, type ProjectFacts, projectSettingsFiles } from "../src/domain/ProjectSettings.js"

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
