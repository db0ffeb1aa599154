/**
 * Whose repository it is: Claude Code 2.1.332 keeps a session's local settings at its repository's
 * root only when the root (`stat`), its `.git` and its `.claude` (`lstat`, when present) all belong
 * to the session's effective uid; otherwise "the store stays at the session cwd". Staged in the
 * memory world, whose tree gives entries owners and whose process table gives sessions users.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import { unreadable } from "../src/domain/Observed.js"
import type { SessionPolicy, SettingsSource } from "../src/domain/Policy.js"
import { makeMemoryPolicyWorld, type MemoryPolicyWorld, onlyPolicy, settingsText } from "./support/policyWorlds.js"

const answer = (policy: SessionPolicy) => ({ effective: policy.effective, decidedBy: policy.decidedBy, certainty: policy.certainty })
const sourceOf = (policy: SessionPolicy, source: SettingsSource) => policy.sources.filter((s) => s.source === source)
const localOf = (folder: string) => path.join(folder, ".claude", "settings.local.json")

/** A repository at `<base>/repo` whose root's local file says refuse, and a session in `repo/sub`. */
const repository = (world: MemoryPolicyWorld) => {
  const root = path.join(world.base, "repo")
  const sub = path.join(root, "sub")
  world.mkdir(path.join(root, ".git"))
  world.mkdir(sub)
  world.write(localOf(root), settingsText("refuse"))
  return { root, sub }
}

const withWorld = <A>(body: (world: MemoryPolicyWorld) => Promise<A>) => () => body(makeMemoryPolicyWorld())

const stranger = 2000

describe("the local settings at a repository's root, by its owners", () => {
  it.each([
    { label: "the root", entry: "" },
    { label: "its .git", entry: ".git" },
    { label: "its .claude", entry: ".claude" }
  ])(
    "$label another user's: the local file stays in the session's folder, and the root's does not count",
    ({ entry }) =>
      withWorld(async (world) => {
        const { root, sub } = repository(world)
        world.world.tree.chown(path.join(root, entry), stranger, stranger)
        await world.startSession({ cwd: sub })
        const policy = await onlyPolicy(world)
        expect(answer(policy)).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
        expect(sourceOf(policy, "localSettings").map((s) => [s.path, s.state])).toEqual([[localOf(sub), "absent"]])
      })()
  )

  it(
    "all of them the session's user's, who is not this program's: the root's file counts",
    withWorld(async (world) => {
      const { root, sub } = repository(world)
      for (const entry of ["", ".git", ".claude"]) world.world.tree.chown(path.join(root, entry), stranger, stranger)
      const session = await world.startSession({ cwd: sub })
      world.world.processes.stage(session.pid, { user: stranger })
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "repoSettings", certainty: "certain" })
      expect(sourceOf(policy, "localSettings").map((s) => [s.path, s.state])).toEqual([
        [localOf(sub), "absent"],
        [localOf(root), "set"]
      ])
    })
  )

  it(
    "the session's user unknown: the root's file may count, so the answer is partial and says why",
    withWorld(async (world) => {
      const { root, sub } = repository(world)
      const session = await world.startSession({ cwd: sub })
      world.world.processes.stage(session.pid, { user: unreadable("permission denied") })
      const policy = await onlyPolicy(world)
      expect(policy.certainty).toBe("partial")
      expect(policy.effective).not.toBe("accept")
      const rootLocal = sourceOf(policy, "localSettings").find((s) => s.path === localOf(root))
      expect(rootLocal?.state).toBe("unreadable")
      expect(policy.partialBecause.map((u) => u.detail).join("\n")).toContain("the session's user could not be read (permission denied)")
    })
  )

  it(
    "the session's user unknown, and no local file at the root: nothing it could hold, so certain",
    withWorld(async (world) => {
      const { root, sub } = repository(world)
      world.remove(localOf(root))
      const session = await world.startSession({ cwd: sub })
      world.world.processes.stage(session.pid, { user: unreadable("permission denied") })
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
    })
  )
})
