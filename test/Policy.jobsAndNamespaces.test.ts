/**
 * The policy of sessions whose own arguments or files are not what they look like from here: a
 * background job on a pre-started worker (its flags are in its job state), and a session in another
 * mount namespace (its files are under its root). Staged in the memory world; the real-OS half
 * (a child with a worker's arguments, a child under `unshare --mount`) is in
 * `Policy.jobsAndNamespaces.node.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as path from "node:path"
import type { SessionPolicy } from "../src/domain/Policy.js"
import { makeMemoryPolicyWorld, type MemoryPolicyWorld, onlyPolicy, settingsText } from "./support/policyWorlds.js"

const answer = (policy: SessionPolicy) => ({ effective: policy.effective, decidedBy: policy.decidedBy, certainty: policy.certainty })

const workerArguments = (jobId: string) => ["claude bg-spare", "--bg-spare", `/tmp/cc-daemon-0/abcd1234/spare/${jobId}.claim.sock`]

/** A `kind: "bg"` session on a pre-started worker; `flags` is its job state's `respawnFlags` (undefined: no state file). */
const startJob = async (world: MemoryPolicyWorld, jobId: string, state: unknown) => {
  const session = await world.startSession({ record: { kind: "bg", jobId } })
  world.world.processes.stage(session.pid, {
    arguments: workerArguments(jobId),
    environment: { CLAUDE_CODE_SESSION_KIND: "bg", CLAUDE_BG_BACKEND: "daemon" }
  })
  const stateFile = path.join(world.home, "jobs", jobId, "state.json")
  if (state !== undefined) world.write(stateFile, typeof state === "string" ? state : JSON.stringify(state, null, 2))
  return { ...session, stateFile }
}

const withWorld = <A>(body: (world: MemoryPolicyWorld) => Promise<A>) => () => body(makeMemoryPolicyWorld())

describe("a background job on a pre-started worker", () => {
  it(
    "reads the job's --settings from its job state, not the worker's arguments",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("accept"))
      await startJob(world, "abf5ca55", {
        state: "working",
        template: "bg",
        respawnFlags: ["--settings", "{\"crossSessionInbound\":\"refuse\"}", "--permission-mode", "plan"]
      })
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "flagSettings", certainty: "certain" })
      expect(policy.receiverMode).toMatchObject({ class: "prompting", mode: "plan", certainty: "certain" })
      expect(policy.forSender).toEqual([
        { senderMode: "bypass", outcome: "refuse", certainty: "certain" },
        { senderMode: "prompting", outcome: "refuse", certainty: "certain" }
      ])
    })
  )

  it(
    "without its job state, names the file it could not read and is never certain",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("accept"))
      const { stateFile } = await startJob(world, "abf5ca55", undefined)
      const policy = await onlyPolicy(world)
      expect(policy.certainty).toBe("partial")
      expect(policy.partialBecause.map((u) => u.detail).join("\n")).toContain(stateFile)
      expect(policy.receiverMode.class).toBeNull()
      expect(policy.receiverMode.certainty).toBe("partial")
    })
  )

  it(
    "a job state whose respawnFlags is not a list of strings is not read as flags",
    withWorld(async (world) => {
      await startJob(world, "abf5ca55", { respawnFlags: "--settings {}" })
      const policy = await onlyPolicy(world)
      expect(policy.certainty).toBe("partial")
      expect(policy.partialBecause.map((u) => u.detail).join("\n")).toContain("respawnFlags is not a list of strings")
    })
  )

  it(
    "a job launched with no flags: the flag source does not apply, user settings still partial (its environment is nowhere)",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("hold"))
      await startJob(world, "abf5ca55", { respawnFlags: [] })
      const policy = await onlyPolicy(world)
      expect(policy.sources.find((s) => s.source === "flagSettings")?.state).toBe("not_applicable")
      expect(policy.effective).toBe("hold")
      expect(policy.certainty).toBe("partial")
    })
  )

  it(
    "a worker's arguments are never read as launch flags, even on a record that names no job",
    withWorld(async (world) => {
      const session = await world.startSession()
      world.world.processes.stage(session.pid, { arguments: workerArguments("deadbeef") })
      const policy = await onlyPolicy(world)
      expect(policy.sources.find((s) => s.source === "flagSettings")?.state).toBe("unreadable")
      expect(policy.receiverMode.class).toBeNull()
    })
  )

  it(
    "bypass from the job's flags needs its disclaimer accepted; unknown environment leaves it partial",
    withWorld(async (world) => {
      await startJob(world, "abf5ca55", { respawnFlags: ["--dangerously-skip-permissions"] })
      world.write(path.join(world.home, ".claude.json"), JSON.stringify({ bypassPermissionsModeAccepted: true }))
      const policy = await onlyPolicy(world)
      expect(policy.receiverMode.class).toBe("bypass")
      // CLAUDE_CODE_SUBPROCESS_ENV_SCRUB in its unseen environment would force the default mode.
      expect(policy.receiverMode.certainty).toBe("partial")
    })
  )
})

describe("a session in another mount namespace", () => {
  const foreign = (world: MemoryPolicyWorld, pid: number) => {
    world.world.processes.stage(pid, { mountNamespace: { id: "mnt:[4026532999]", ours: false, root: `/proc/${pid}/root` } })
    return `/proc/${pid}/root`
  }

  it(
    "reads its managed file through its root, not ours",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("accept"))
      const session = await world.startSession()
      const root = foreign(world, session.pid)
      world.write(`${root}${world.managed}/managed-settings.json`, settingsText("refuse"))
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "policySettings", certainty: "certain" })
      expect(policy.sources[0]!.path).toBe(`${root}${world.managed}/managed-settings.json`)
    })
  )

  it(
    "reads its managed drop-ins and project files through its root",
    withWorld(async (world) => {
      const session = await world.startSession()
      const root = foreign(world, session.pid)
      world.write(`${root}${world.managed}/managed-settings.d/50-hold.json`, settingsText("hold"))
      world.write(`${root}${session.cwd}/.claude/settings.json`, settingsText("refuse"))
      // The same paths in our namespace say nothing.
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "repoSettings", certainty: "certain" })
      expect(policy.sources.find((s) => s.source === "projectSettings")?.path).toBe(`${root}${session.cwd}/.claude/settings.json`)
    })
  )

  it(
    "reads its user file where its environment puts its home inside its namespace",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("accept"))
      const session = await world.startSession({ env: { CLAUDE_CONFIG_DIR: "/root/.claude" } })
      const root = foreign(world, session.pid)
      world.write(`${root}/root/.claude/settings.json`, settingsText("hold"))
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "hold", decidedBy: "userSettings", certainty: "certain" })
    })
  )

  it(
    "a namespace that cannot be read makes the answer partial, saying why",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), settingsText("accept"))
      const session = await world.startSession()
      const root = foreign(world, session.pid)
      world.write(`${root}${world.managed}/managed-settings.json`, settingsText("refuse"))
      world.world.processes.stage(session.pid, { mountNamespace: { _tag: "Unreadable", reason: "permission denied" } })
      const policy = await onlyPolicy(world)
      expect(policy.certainty).toBe("partial")
      expect(policy.partialBecause.map((u) => u.detail).join("\n")).toContain("mount namespace could not be read")
    })
  )

  it(
    "our own namespace, staged as ours: the files at its paths are ours",
    withWorld(async (world) => {
      const session = await world.startSession()
      world.world.processes.stage(session.pid, { mountNamespace: { id: "mnt:[1]", ours: true, root: `/proc/${session.pid}/root` } })
      world.write(`${world.managed}/managed-settings.json`, settingsText("hold"))
      const policy = await onlyPolicy(world)
      expect(answer(policy)).toEqual({ effective: "hold", decidedBy: "policySettings", certainty: "certain" })
      expect(policy.sources[0]!.path).toBe(`${world.managed}/managed-settings.json`)
    })
  )
})

describe("the receiver's launch permission mode", () => {
  const modeOf = async (world: MemoryPolicyWorld) => (await onlyPolicy(world)).receiverMode

  it(
    "from its arguments: --dangerously-skip-permissions and --permission-mode",
    withWorld(async (world) => {
      const first = await world.startSession({ args: ["--dangerously-skip-permissions"] })
      expect(await modeOf(world)).toMatchObject({ class: "bypass", mode: "bypassPermissions", certainty: "certain" })
      await world.stopSession(first.pid)
      const second = await world.startSession({ args: ["--permission-mode", "acceptEdits"] })
      expect(await modeOf(world)).toMatchObject({ class: "prompting", mode: "acceptEdits", certainty: "certain" })
      await world.stopSession(second.pid)
      await world.startSession({ args: ["--permission-mode", "bypassPermissions"] })
      expect(await modeOf(world)).toMatchObject({ class: "bypass", certainty: "certain" })
    })
  )

  it(
    "nothing given: Claude Code's own default (its name unknown), prompting; parity decides for each sender",
    withWorld(async (world) => {
      await world.startSession()
      const policy = await onlyPolicy(world)
      expect(policy.receiverMode).toMatchObject({ class: "prompting", mode: null, certainty: "certain" })
      expect(policy.receiverMode.caveat).toContain("Shift+Tab")
      expect(policy.forSender).toEqual([
        { senderMode: "bypass", outcome: "hold", certainty: "certain" },
        { senderMode: "prompting", outcome: "accept", certainty: "certain" }
      ])
    })
  )

  it(
    "permissions.defaultMode: bypass from the user's file counts, from a project's file it does not",
    withWorld(async (world) => {
      world.write(path.join(world.home, "settings.json"), JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }))
      const first = await world.startSession()
      expect(await modeOf(world)).toMatchObject({ class: "bypass", certainty: "certain" })
      await world.stopSession(first.pid)
      world.remove(path.join(world.home, "settings.json"))
      const second = await world.startSession()
      world.write(path.join(second.cwd, ".claude", "settings.json"), JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }))
      expect(await modeOf(world)).toMatchObject({ class: "prompting", mode: "default", certainty: "certain" })
    })
  )

  it(
    "disableBypassPermissionsMode in managed settings skips a bypass flag",
    withWorld(async (world) => {
      world.write(`${world.managed}/managed-settings.json`, JSON.stringify({ permissions: { disableBypassPermissionsMode: "disable" } }))
      await world.startSession({ args: ["--dangerously-skip-permissions"] })
      expect(await modeOf(world)).toMatchObject({ class: "prompting", certainty: "certain" })
    })
  )

  it(
    "a user file that is not a regular file is skipped, as Claude Code skips it: nothing is unknown",
    withWorld(async (world) => {
      world.mkfifo(path.join(world.home, "settings.json"))
      await world.startSession()
      expect(await modeOf(world)).toMatchObject({ class: "prompting", certainty: "certain" })
    })
  )

  it(
    "arguments that cannot be read leave the class unknown, and each sender's outcome with it",
    withWorld(async (world) => {
      const session = await world.startSession()
      world.world.processes.stage(session.pid, { arguments: { _tag: "Unreadable", reason: "permission denied" } })
      const policy = await onlyPolicy(world)
      expect(policy.receiverMode).toMatchObject({ class: null, certainty: "partial" })
      expect(policy.forSender.map((o) => o.outcome)).toEqual([null, null])
    })
  )
})
