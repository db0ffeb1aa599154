/**
 * The policy in effect, written once and run through the shipped composite layers on memory and on
 * the real OS (real processes carrying `--settings` in their arguments, a temporary home, project
 * folders and managed directory). One case per rule: each precedence step, tighten-only project
 * settings, unrecognized values per source kind, the kill switch, `--setting-sources`, managed
 * drop-ins, and missing and malformed files, which give states, never failures.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import * as path from "node:path"
import type { SessionPolicy, SettingsSource } from "../src/domain/Policy.js"
import { layerMemory, makeMemoryWorld } from "../src/layers/Memory.js"
import { Policy } from "../src/services/Policy.js"
import { Registry, type ResolveQuery } from "../src/services/Registry.js"
import {
  makeMemoryPolicyWorld,
  makeNodePolicyWorld,
  onlyPolicy,
  policies,
  policyOf,
  type PolicyWorld,
  resolvedOf,
  settingsText
} from "./support/policyWorlds.js"
import { recordText } from "./support/records.js"

const answer = (policy: SessionPolicy) => ({ effective: policy.effective, decidedBy: policy.decidedBy, certainty: policy.certainty })

const sourceOf = (policy: SessionPolicy, source: SettingsSource) => policy.sources.filter((s) => s.source === source)

const suite = (name: string, makeWorld: () => PolicyWorld) =>
  describe(`policy conformance: ${name}`, () => {
    const withWorld = <A>(body: (world: PolicyWorld) => Promise<A>) => async () => {
      const world = makeWorld()
      try {
        return await body(world)
      } finally {
        await world.close()
      }
    }
    const userFile = (world: PolicyWorld) => path.join(world.home, "settings.json")
    const work = (world: PolicyWorld) => path.join(world.base, "work")
    const local = (world: PolicyWorld, folder = work(world)) => path.join(folder, ".claude", "settings.local.json")
    const project = (world: PolicyWorld, folder = work(world)) => path.join(folder, ".claude", "settings.json")
    const setUser = (world: PolicyWorld, value: unknown, others: Record<string, unknown> = {}) => world.write(userFile(world), settingsText(value, others))

    describe("precedence: managed, then --settings, then the user's settings decide outright", () => {
      it(
        "nothing set anywhere: Claude Code's default, certain, every source read",
        withWorld(async (world) => {
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
          expect(policy.sources.map((s) => [s.source, s.state])).toEqual([
            ["policySettings", "absent"],
            ["flagSettings", "not_applicable"],
            ["userSettings", "absent"],
            ["localSettings", "absent"],
            ["projectSettings", "absent"]
          ])
          expect(policy.sources[0]!.path).toBe(path.join(world.managed, "managed-settings.json"))
          expect(policy.sources[2]!.path).toBe(userFile(world))
          expect(policy.unseen).toEqual(expect.arrayContaining(["serverManagedSettings", "mdmSettings", "permissionModes"]))
          expect(policy.partialBecause).toEqual([])
        })
      )

      it(
        "the user's value decides",
        withWorld(async (world) => {
          setUser(world, "hold")
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "hold", decidedBy: "userSettings", certainty: "certain" })
          expect(sourceOf(policy, "userSettings")).toEqual([
            { source: "userSettings", path: userFile(world), value: "hold", state: "set", problem: null, detail: null }
          ])
        })
      )

      it(
        "--settings JSON text wins over the user's value, looser or stricter",
        withWorld(async (world) => {
          setUser(world, "accept")
          await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
          setUser(world, "accept")
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "flagSettings", certainty: "certain" })
          expect(sourceOf(policy, "flagSettings")).toMatchObject([{ path: null, value: "refuse", state: "set" }])
        })
      )

      it(
        "--settings accept over a user refuse",
        withWorld(async (world) => {
          setUser(world, "refuse")
          await world.startSession({ args: ["--settings", " {\"crossSessionInbound\":\"accept\"} "] })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "accept", decidedBy: "flagSettings", certainty: "certain" })
        })
      )

      it(
        "a --settings file, absolute or relative to the session's folder; the last --settings wins",
        withWorld(async (world) => {
          const flag = path.join(world.base, "flag.json")
          world.write(flag, settingsText("hold"))
          world.write(path.join(work(world), "rel.json"), settingsText("refuse"))
          setUser(world, "accept")
          await world.startSession({ args: ["--settings", flag] })
          const absolute = await onlyPolicy(world)
          expect(answer(absolute)).toEqual({ effective: "hold", decidedBy: "flagSettings", certainty: "certain" })
          expect(sourceOf(absolute, "flagSettings")).toMatchObject([{ path: flag, value: "hold", state: "set" }])
          await world.stopSession(absolute.pid)
          await world.startSession({ args: ["--settings", flag, "--model", "--settings", "--settings=rel.json"] })
          const relative = await onlyPolicy(world)
          expect(answer(relative)).toEqual({ effective: "refuse", decidedBy: "flagSettings", certainty: "certain" })
          expect(sourceOf(relative, "flagSettings")).toMatchObject([{ path: path.join(work(world), "rel.json"), state: "set" }])
        })
      )

      it(
        "a --settings file that is missing now, or relative in a --worktree session, is not known: partial, never certain",
        withWorld(async (world) => {
          setUser(world, "accept")
          const gone = path.join(world.base, "gone.json")
          await world.startSession({ args: ["--settings", gone] })
          const missing = await onlyPolicy(world)
          expect(missing.certainty).toBe("partial")
          expect(sourceOf(missing, "flagSettings")).toMatchObject([{ path: gone, state: "unreadable" }])
          await world.stopSession(missing.pid)
          world.write(path.join(work(world), "rel.json"), settingsText("accept"))
          await world.startSession({ args: ["-w", "wt1", "--settings", "rel.json"] })
          const worktree = await onlyPolicy(world)
          expect(worktree.certainty).toBe("partial")
          expect(sourceOf(worktree, "flagSettings")).toMatchObject([{ path: "rel.json", state: "unreadable" }])
        })
      )

      it(
        "managed settings win over --settings and the user's",
        withWorld(async (world) => {
          world.write(path.join(world.managed, "managed-settings.json"), settingsText("hold"))
          setUser(world, "refuse")
          await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"accept\"}"] })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "policySettings", certainty: "certain" })
        })
      )
    })

    describe("project settings only tighten", () => {
      it(
        "a local hold over a user accept",
        withWorld(async (world) => {
          setUser(world, "accept")
          world.write(local(world), settingsText("hold"))
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "hold", decidedBy: "repoSettings", certainty: "certain" })
          expect(sourceOf(policy, "localSettings")).toMatchObject([{ path: local(world), value: "hold", state: "set" }])
        })
      )

      it(
        "a project accept cannot loosen a user refuse",
        withWorld(async (world) => {
          setUser(world, "refuse")
          world.write(project(world), settingsText("accept"))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "refuse", decidedBy: "userSettings", certainty: "certain" })
        })
      )

      it(
        "with nothing above, a project hold holds and a project accept leaves the default",
        withWorld(async (world) => {
          world.write(project(world), settingsText("hold"))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "repoSettings", certainty: "certain" })
          world.write(project(world), settingsText("accept"))
          expect(answer(await onlyPolicy(world))).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
        })
      )

      it(
        "a repo value equal to the user's, not accept, is credited to the repo",
        withWorld(async (world) => {
          setUser(world, "hold")
          world.write(local(world), settingsText("hold"))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "repoSettings", certainty: "certain" })
        })
      )

      it(
        "local then project: the strictest wins, even over a --settings accept",
        withWorld(async (world) => {
          world.write(local(world), settingsText("hold"))
          world.write(project(world), settingsText("refuse"))
          await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"accept\"}"] })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "refuse", decidedBy: "repoSettings", certainty: "certain" })
        })
      )

      it(
        "in a git subfolder the local file is the repository root's, the shared file the folder's own",
        withWorld(async (world) => {
          const root = work(world)
          world.mkdir(path.join(root, ".git"))
          const sub = path.join(root, "sub")
          world.write(local(world, root), settingsText("refuse"))
          world.write(project(world, root), settingsText("hold"))
          await world.startSession({ cwd: sub })
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "repoSettings", certainty: "certain" })
          expect(sourceOf(policy, "localSettings").map((s) => [s.path, s.state])).toEqual([
            [local(world, sub), "absent"],
            [local(world, root), "set"]
          ])
          expect(sourceOf(policy, "projectSettings").map((s) => [s.path, s.state])).toEqual([[project(world, sub), "absent"]])
        })
      )

      it(
        "without git, a parent folder's files do not count",
        withWorld(async (world) => {
          world.write(local(world), settingsText("refuse"))
          await world.startSession({ cwd: path.join(work(world), "sub") })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
        })
      )
    })

    describe("unrecognized values, by source", () => {
      it(
        "in the user's file: dropped, and messages are held",
        withWorld(async (world) => {
          setUser(world, "Accept")
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "hold", decidedBy: "invalidSetting", certainty: "certain" })
          expect(sourceOf(policy, "userSettings")).toMatchObject([{ value: "Accept", state: "invalid", problem: "invalid_value" }])
        })
      )

      it(
        "null counts as unrecognized",
        withWorld(async (world) => {
          setUser(world, null)
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "invalidSetting", certainty: "certain" })
        })
      )

      it(
        "in a project or local file, over a user accept",
        withWorld(async (world) => {
          setUser(world, "accept")
          world.write(project(world), settingsText("maybe"))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "invalidSetting", certainty: "certain" })
          world.remove(project(world))
          world.write(local(world), settingsText(1))
          expect(answer(await onlyPolicy(world))).toMatchObject({ effective: "hold", decidedBy: "invalidSetting" })
        })
      )

      it(
        "in --settings JSON text",
        withWorld(async (world) => {
          setUser(world, "accept")
          await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"maybe\"}"] })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "hold", decidedBy: "invalidSetting", certainty: "certain" })
        })
      )

      it(
        "does not loosen a stricter value decided elsewhere",
        withWorld(async (world) => {
          setUser(world, "refuse")
          world.write(project(world), settingsText("maybe"))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "refuse", decidedBy: "userSettings", certainty: "certain" })
        })
      )

      it(
        "in managed settings: refuse",
        withWorld(async (world) => {
          world.write(path.join(world.managed, "managed-settings.json"), settingsText("maybe"))
          setUser(world, "accept")
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "policySettings", certainty: "certain" })
          expect(sourceOf(policy, "policySettings")).toMatchObject([{ value: "maybe", state: "invalid", problem: "invalid_value" }])
        })
      )
    })

    describe("the kill switch CLAUDE_CODE_HARBOR_KITE", () => {
      it(
        "any value that is not 1, true, yes or on turns messaging off: refuse",
        withWorld(async (world) => {
          setUser(world, "accept")
          for (const value of ["0", "false", "banana"]) {
            const session = await world.startSession({ env: { CLAUDE_CODE_HARBOR_KITE: value }, socket: false })
            const policy = await onlyPolicy(world)
            expect(answer(policy), value).toEqual({ effective: "refuse", decidedBy: "disabled", certainty: "certain" })
            expect(policy.killSwitch).toEqual({ state: "off", origin: "environment" })
            await world.stopSession(session.pid)
          }
        })
      )

      it(
        "1 leaves it on; blank counts as unset",
        withWorld(async (world) => {
          setUser(world, "accept")
          const on = await world.startSession({ env: { CLAUDE_CODE_HARBOR_KITE: " TRUE " } })
          expect((await onlyPolicy(world)).killSwitch).toEqual({ state: "on", origin: "environment" })
          expect(answer(await onlyPolicy(world)).effective).toBe("accept")
          await world.stopSession(on.pid)
          await world.startSession({ env: { CLAUDE_CODE_HARBOR_KITE: " " } })
          const blank = await onlyPolicy(world)
          expect(blank.killSwitch.state).toBe("unset")
          expect(blank.unseen).toContain("remoteKillSwitch")
        })
      )

      it(
        "the env of the user's settings, of --settings and of .claude.json set it too; a project's env does not",
        withWorld(async (world) => {
          setUser(world, "accept", { env: { CLAUDE_CODE_HARBOR_KITE: "0" } })
          const user = await world.startSession({ socket: false })
          expect((await onlyPolicy(world)).killSwitch).toEqual({ state: "off", origin: "userSettings" })
          await world.stopSession(user.pid)
          setUser(world, "accept")
          const flag = await world.startSession({ args: ["--settings", "{\"env\":{\"CLAUDE_CODE_HARBOR_KITE\":\"off\"}}"], socket: false })
          expect(answer(await onlyPolicy(world))).toMatchObject({ effective: "refuse", decidedBy: "disabled" })
          await world.stopSession(flag.pid)
          world.write(path.join(world.home, ".claude.json"), JSON.stringify({ env: { CLAUDE_CODE_HARBOR_KITE: "no" } }))
          const global = await world.startSession({ env: { CLAUDE_CONFIG_DIR: world.home }, socket: false })
          expect((await onlyPolicy(world)).killSwitch).toEqual({ state: "off", origin: "globalConfig" })
          await world.stopSession(global.pid)
          world.remove(path.join(world.home, ".claude.json"))
          world.write(project(world), JSON.stringify({ env: { CLAUDE_CODE_HARBOR_KITE: "0" } }))
          await world.startSession()
          expect(answer(await onlyPolicy(world))).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "certain" })
        })
      )

      it(
        "a settings env overrides the launch environment",
        withWorld(async (world) => {
          setUser(world, "accept", { env: { CLAUDE_CODE_HARBOR_KITE: "0" } })
          await world.startSession({ env: { CLAUDE_CODE_HARBOR_KITE: "1" }, socket: false })
          expect((await onlyPolicy(world)).killSwitch).toEqual({ state: "off", origin: "userSettings" })
        })
      )
    })

    describe("one pass over sessions that share a folder", () => {
      it(
        "each reads its own project files and global config: a --project-config-root, a CLAUDE_CONFIG_DIR",
        withWorld(async (world) => {
          setUser(world, "accept")
          const root = path.join(world.base, "config-root")
          world.write(project(world, root), settingsText("refuse"))
          const configDir = path.join(world.base, "config-dir")
          world.write(path.join(configDir, ".claude.json"), JSON.stringify({ env: { CLAUDE_CODE_HARBOR_KITE: "0" } }))
          // Started in this order, so listed (by pid) and read in it: the plain one's answers come first.
          const plain = await world.startSession({ socket: false })
          const rooted = await world.startSession({ args: ["--project-config-root", root], socket: false })
          const configured = await world.startSession({ env: { CLAUDE_CONFIG_DIR: configDir }, socket: false })
          expect(new Set([plain.cwd, rooted.cwd, configured.cwd]).size).toBe(1)
          const byPid = new Map((await policies(world)).map((p) => [p.pid, p]))
          expect(answer(byPid.get(plain.pid)!)).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "certain" })
          expect(answer(byPid.get(rooted.pid)!)).toMatchObject({ effective: "refuse", decidedBy: "repoSettings" })
          expect(sourceOf(byPid.get(rooted.pid)!, "projectSettings")[0]!.path).toBe(project(world, root))
          expect(byPid.get(configured.pid)!.killSwitch).toEqual({ state: "off", origin: "globalConfig" })
          expect(byPid.get(plain.pid)!.killSwitch.state).not.toBe("off")
          expect(byPid.get(rooted.pid)!.killSwitch.state).not.toBe("off")
        })
      )

      it(
        "each reads its own: a custom OAuth URL's global config, a HOME that is the repository's root",
        withWorld(async (world) => {
          setUser(world, "accept")
          // A repository whose root is one session's home folder: that session keeps its local file in its folder.
          const repository = path.join(world.base, "home-repository")
          const folder = path.join(repository, "sub")
          world.mkdir(path.join(repository, ".git"))
          world.mkdir(folder)
          world.write(path.join(repository, ".claude", "settings.local.json"), settingsText("refuse"))
          const otherHome = path.join(world.base, "other-home")
          world.mkdir(otherHome)
          world.write(path.join(otherHome, ".claude-custom-oauth.json"), JSON.stringify({ env: { CLAUDE_CODE_HARBOR_KITE: "0" } }))
          const plain = await world.startSession({ cwd: folder, env: { HOME: otherHome }, socket: false })
          const homed = await world.startSession({ cwd: folder, env: { HOME: repository }, socket: false })
          const oauth = await world.startSession({ cwd: folder, env: { HOME: otherHome, CLAUDE_CODE_CUSTOM_OAUTH_URL: "https://example.test" }, socket: false })
          const byPid = new Map((await policies(world)).map((p) => [p.pid, p]))
          expect(answer(byPid.get(plain.pid)!)).toMatchObject({ effective: "refuse", decidedBy: "repoSettings" })
          expect(answer(byPid.get(homed.pid)!)).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "certain" })
          expect(byPid.get(oauth.pid)!.killSwitch).toEqual({ state: "off", origin: "globalConfig" })
          expect(byPid.get(plain.pid)!.killSwitch.state).not.toBe("off")
        })
      )
    })

    describe("--setting-sources and --restricted", () => {
      it(
        "--setting-sources user: local and project settings do not count",
        withWorld(async (world) => {
          setUser(world, "accept")
          world.write(local(world), settingsText("refuse"))
          world.write(project(world), settingsText("maybe"))
          await world.startSession({ args: ["--setting-sources", "user"] })
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "certain" })
          expect(sourceOf(policy, "localSettings")).toMatchObject([{ state: "not_applicable", path: local(world) }])
          expect(sourceOf(policy, "projectSettings")).toMatchObject([{ state: "not_applicable" }])
        })
      )

      it(
        "an empty --setting-sources and --restricted leave only managed and --settings",
        withWorld(async (world) => {
          setUser(world, "refuse")
          const empty = await world.startSession({ args: ["--setting-sources", ""] })
          expect(answer(await onlyPolicy(world))).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
          await world.stopSession(empty.pid)
          await world.startSession({ args: ["--restricted", "--settings", "{\"crossSessionInbound\":\"hold\"}"], socket: false })
          const restricted = await onlyPolicy(world)
          expect(answer(restricted)).toEqual({ effective: "hold", decidedBy: "flagSettings", certainty: "certain" })
          expect(sourceOf(restricted, "userSettings")).toMatchObject([{ state: "not_applicable" }])
        })
      )
    })

    describe("managed settings: the base file, then the drop-ins in name order", () => {
      it(
        "a drop-in overrides the base file; later names override earlier ones; hidden, non-.json and folders are ignored",
        withWorld(async (world) => {
          const dropIns = path.join(world.managed, "managed-settings.d")
          world.write(path.join(world.managed, "managed-settings.json"), settingsText("refuse"))
          world.write(path.join(dropIns, "10-a.json"), settingsText("hold"))
          world.write(path.join(dropIns, "20-b.json"), settingsText("accept"))
          world.write(path.join(dropIns, ".99-hidden.json"), settingsText("refuse"))
          world.write(path.join(dropIns, "30-c.txt"), settingsText("refuse"))
          world.mkdir(path.join(dropIns, "40-folder.json"))
          world.write(path.join(dropIns, "15-unrelated.json"), JSON.stringify({ permissions: {} }))
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "accept", decidedBy: "policySettings", certainty: "certain" })
          expect(sourceOf(policy, "policySettings").map((s) => [path.basename(s.path ?? ""), s.state])).toEqual([
            ["managed-settings.json", "set"],
            ["10-a.json", "set"],
            ["15-unrelated.json", "absent"],
            ["20-b.json", "set"]
          ])
        })
      )

      it(
        "a drop-in may be a link; without a base file the drop-ins decide; name order is by code unit",
        withWorld(async (world) => {
          const dropIns = path.join(world.managed, "managed-settings.d")
          world.write(path.join(world.base, "shared-policy.json"), settingsText("hold"))
          world.symlink(path.join(world.base, "shared-policy.json"), path.join(dropIns, "9-link.json"))
          world.write(path.join(dropIns, "10-z.json"), settingsText("refuse"))
          world.write(path.join(dropIns, "Z-upper.json"), settingsText("accept"))
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(sourceOf(policy, "policySettings").map((s) => path.basename(s.path ?? ""))).toEqual([
            "managed-settings.json",
            "10-z.json",
            "9-link.json",
            "Z-upper.json"
          ])
          expect(answer(policy)).toEqual({ effective: "accept", decidedBy: "policySettings", certainty: "certain" })
        })
      )

      it(
        "a managed file Claude Code cannot parse: it would not start on it, so this session read something else",
        withWorld(async (world) => {
          world.write(path.join(world.managed, "managed-settings.json"), "{\"crossSessionInbound\": \"refuse\",,}")
          setUser(world, "accept")
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(policy.certainty).toBe("partial")
          expect(sourceOf(policy, "policySettings")).toMatchObject([{ state: "invalid", problem: "invalid_json" }])
        })
      )
    })

    describe("missing and malformed files give states, never failures", () => {
      it(
        "a user file that is not JSON is skipped as a whole: no value, no hold",
        withWorld(async (world) => {
          world.write(userFile(world), "{\"crossSessionInbound\": \"refuse\",,}")
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
          expect(sourceOf(policy, "userSettings")).toMatchObject([{ state: "invalid", problem: "invalid_json", value: null }])
        })
      )

      it(
        "not an object, empty, white space, a byte-order mark",
        withWorld(async (world) => {
          world.write(userFile(world), "[\"hold\"]")
          await world.startSession()
          expect(sourceOf(await onlyPolicy(world), "userSettings")).toMatchObject([{ state: "invalid", problem: "not_an_object" }])
          for (const text of ["", "  \n"]) {
            world.write(userFile(world), text)
            expect(sourceOf(await onlyPolicy(world), "userSettings")).toMatchObject([{ state: "absent" }])
          }
          world.write(userFile(world), `\uFEFF${settingsText("hold")}`)
          expect(answer(await onlyPolicy(world))).toMatchObject({ effective: "hold", decidedBy: "userSettings" })
        })
      )

      it(
        "a FIFO or a folder where a settings file should be: not a file, never opened",
        withWorld(async (world) => {
          world.mkfifo(userFile(world))
          world.mkdir(project(world))
          await world.startSession()
          const policy = await onlyPolicy(world)
          expect(sourceOf(policy, "userSettings")).toMatchObject([{ state: "invalid", problem: "not_a_file" }])
          expect(sourceOf(policy, "projectSettings")).toMatchObject([{ state: "invalid", problem: "not_a_file" }])
          expect(answer(policy)).toEqual({ effective: null, decidedBy: "default", certainty: "certain" })
        })
      )

      it(
        "a file over Claude Code's 2 MiB limit is skipped",
        withWorld(async (world) => {
          world.write(userFile(world), `{"crossSessionInbound":"refuse","pad":"${"x".repeat(2 * 1024 * 1024)}"}`)
          await world.startSession()
          expect(sourceOf(await onlyPolicy(world), "userSettings")).toMatchObject([{ state: "invalid", problem: "too_large" }])
        })
      )

      it(
        "a missing home, project folder or managed directory is absent",
        withWorld(async (world) => {
          await world.startSession({ cwd: path.join(world.base, "gone") })
          world.remove(path.join(world.base, "gone"))
          const policy = await onlyPolicy(world)
          expect(policy.sources.every((s) => s.state === "absent" || s.state === "not_applicable")).toBe(true)
        })
      )
    })

    describe("sessions", () => {
      it(
        "every live session, sorted by pid; a dead one is not listed",
        withWorld(async (world) => {
          setUser(world, "hold")
          const a = await world.startSession()
          const b = await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
          const c = await world.startSession()
          await world.stopSession(c.pid)
          const all = await policies(world)
          expect(all.map((p) => [p.pid, p.sessionId, p.name, p.effective])).toEqual(
            [[a.pid, a.sessionId, a.name, "hold"], [b.pid, b.sessionId, b.name, "refuse"]].sort((x, y) => Number(x[0]) - Number(y[0]))
          )
        })
      )

      it(
        "one session by id or by name, refused as resolve refuses",
        withWorld(async (world) => {
          setUser(world, "hold")
          const a = await world.startSession({ name: "api" })
          await world.startSession({ name: "docs" })
          await world.startSession({ name: "Docs" })
          expect((await policyOf(world, { sessionId: a.sessionId })).pid).toBe(a.pid)
          expect((await policyOf(world, { name: "API" })).pid).toBe(a.pid)
          const refusal = async (query: ResolveQuery) => {
            const exit = await Effect.runPromise(Effect.exit(Effect.provide(Effect.flatMap(Policy, (p) => p.resolve(query)), world.layer)))
            if (Exit.isSuccess(exit)) {
              throw new Error("resolved")
            }
            return Option.getOrThrow(Cause.failureOption(exit.cause))
          }
          expect((await refusal({ sessionId: "no-such-session" }))._tag).toBe("NotLive")
          expect((await refusal({ name: "docs" }))._tag).toBe("IdentityMismatch")
          const quiet = await world.startSession({ name: "quiet", socket: false })
          expect((await refusal({ sessionId: quiet.sessionId }))._tag).toBe("NotAddressable")
        })
      )

      it(
        "resolve gives the session with its policy, the session as Registry.resolve gives it",
        withWorld(async (world) => {
          setUser(world, "hold")
          const a = await world.startSession({ name: "api" })
          await world.startSession({ name: "docs" })
          const { policy, session } = await resolvedOf(world, { name: "api" })
          expect([session.pid, session.sessionId, session.address]).toEqual([a.pid, a.sessionId, "api"])
          expect([policy.pid, policy.sessionId, policy.effective]).toEqual([a.pid, a.sessionId, "hold"])
          const registry = await Effect.runPromise(Effect.provide(Effect.flatMap(Registry, (r) => r.resolve({ name: "api" })), world.layer))
          expect(session).toEqual(registry)
        })
      )

      it(
        "a session started by an SDK host names the host's settings as unseen",
        withWorld(async (world) => {
          await world.startSession({ entrypoint: "sdk-ts" })
          expect((await onlyPolicy(world)).unseen).toContain("hostSettings")
        })
      )

      it(
        "a user file named by Cowork: cowork_settings.json",
        withWorld(async (world) => {
          setUser(world, "accept")
          world.write(path.join(world.home, "cowork_settings.json"), settingsText("refuse"))
          await world.startSession({ env: { CLAUDE_CODE_USE_COWORK_PLUGINS: "1" } })
          const policy = await onlyPolicy(world)
          expect(answer(policy)).toEqual({ effective: "refuse", decidedBy: "userSettings", certainty: "certain" })
          expect(sourceOf(policy, "userSettings")[0]!.path).toBe(path.join(world.home, "cowork_settings.json"))
        })
      )

      it(
        "a claimed spare's /proc shows the spare's launch: unread, so the answer is partial where it matters",
        withWorld(async (world) => {
          setUser(world, "accept")
          await world.startSession({ env: { CLAUDE_BG_SOURCE: "spare" }, record: { kind: "bg", jobId: "1234abcd" } })
          const policy = await onlyPolicy(world)
          expect(policy.certainty).toBe("partial")
          expect(sourceOf(policy, "flagSettings")).toMatchObject([{ state: "unreadable" }])
          expect(policy.partialBecause.map((u) => u.input)).toContain("flagSettings")
        })
      )
    })
  })

suite("memory", makeMemoryPolicyWorld)
suite("node", makeNodePolicyWorld)

describe("policy: what the OS cannot play as root (memory layers)", () => {
  it("a name that moves to another process while it is read: the session and the policy are both the new one's", async () => {
    const world = makeMemoryPolicyWorld()
    const first = await world.startSession({ name: "worker", args: ["--settings", "{\"crossSessionInbound\":\"accept\"}"] })
    let second: { readonly pid: number; readonly sessionId: string } | undefined
    world.world.processes.onNextEvidence(first.pid, () => {
      world.world.processes.kill(first.pid)
      void world.startSession({ name: "worker", args: ["--settings", "{\"crossSessionInbound\":\"refuse\"}"] }).then((s) => {
        second = s
      })
    })
    const { policy, session } = await resolvedOf(world, { name: "worker" })
    expect(second).toBeDefined()
    expect([session.pid, session.sessionId, session.address]).toEqual([second!.pid, second!.sessionId, "worker"])
    expect([policy.pid, policy.sessionId, policy.effective]).toEqual([second!.pid, second!.sessionId, "refuse"])
  })

  it("a process whose environment cannot be read: partial, and why", async () => {
    const world = makeMemoryPolicyWorld()
    world.write(`${world.home}/settings.json`, settingsText("accept"))
    const session = await world.startSession()
    world.world.processes.stage(session.pid, { environment: { _tag: "Unreadable", reason: "permission denied" } })
    const policy = await onlyPolicy(world)
    expect(answer(policy)).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "partial" })
    expect(policy.partialBecause.map((u) => u.input)).toEqual(["arguments"])
    expect(policy.partialBecause[0]!.detail).toContain("permission denied")
    // Its inbox started, so the launch environment did not turn messaging off.
    expect(policy.killSwitch.state).toBe("not_off")
  })

  it("an unreadable environment and no inbox: whether messaging is off is unknown", async () => {
    const world = makeMemoryPolicyWorld()
    world.write(path.join(world.managed, "managed-settings.json"), settingsText("hold"))
    const session = await world.startSession({ socket: false })
    world.world.processes.stage(session.pid, { environment: { _tag: "Unreadable", reason: "permission denied" } })
    const policy = await onlyPolicy(world)
    expect(policy).toMatchObject({ effective: "hold", certainty: "partial", killSwitch: { state: "unknown" } })
    expect(policy.partialBecause.map((u) => u.input)).toEqual(["environment"])
  })

  it("arguments that cannot be read: --settings unknown, partial", async () => {
    const world = makeMemoryPolicyWorld()
    world.write(`${world.home}/settings.json`, settingsText("hold"))
    const session = await world.startSession()
    world.world.processes.stage(session.pid, { arguments: { _tag: "Unreadable", reason: "ps cannot split it" } })
    const policy = await onlyPolicy(world)
    expect(policy.certainty).toBe("partial")
    expect(policy.sources.find((s) => s.source === "flagSettings")).toMatchObject({ state: "unreadable" })
    expect(policy.sources.find((s) => s.source === "flagSettings")!.detail).toContain("ps cannot split it")
  })

  it("a settings file that cannot be read: unreadable, partial only when it could change the answer", async () => {
    const world = makeMemoryPolicyWorld()
    world.write(`${world.home}/settings.json`, settingsText("accept"))
    world.write(`${world.base}/work/.claude/settings.local.json`, settingsText("hold"))
    await world.startSession()
    world.world.tree.setUnreadable(`${world.home}/settings.json`)
    const userUnread = await onlyPolicy(world)
    expect(userUnread).toMatchObject({ effective: "hold", certainty: "partial" })
    expect(userUnread.sources.find((s) => s.source === "userSettings")).toMatchObject({ state: "unreadable", detail: "permission denied" })
    world.world.tree.setUnreadable(`${world.home}/settings.json`, false)
    world.write(path.join(world.managed, "managed-settings.json"), settingsText("refuse"))
    world.world.tree.setUnreadable(`${world.home}/settings.json`)
    expect(await onlyPolicy(world)).toMatchObject({ effective: "refuse", decidedBy: "policySettings", certainty: "certain" })
  })

  it("a drop-in folder that cannot be listed: partial", async () => {
    const world = makeMemoryPolicyWorld()
    world.write(path.join(world.managed, "managed-settings.d", "10.json"), settingsText("accept"))
    world.world.tree.chmod(path.join(world.managed, "managed-settings.d"), 0o000)
    await world.startSession()
    const policy = await onlyPolicy(world)
    expect(policy.certainty).toBe("partial")
    expect(policy.sources.filter((s) => s.source === "policySettings").map((s) => s.state)).toEqual(["absent", "unreadable"])
  })

  it("a pid reused between the scan and the read of its evidence: the new process is never taken for the session", async () => {
    const world = makeMemoryPolicyWorld()
    const session = await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"accept\"}"] })
    const other = await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"hold\"}"] })
    const reuse = () => {
      world.world.processes.reuse(session.pid)
      world.world.processes.stage(session.pid, { arguments: ["node", "other", "--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
    }
    world.world.processes.onNextEvidence(session.pid, reuse)
    expect((await policies(world)).map((p) => [p.pid, p.effective])).toEqual([[other.pid, "hold"]])
    world.world.processes.kill(session.pid)
    const again = await world.startSession({ args: ["--settings", "{\"crossSessionInbound\":\"accept\"}"] })
    world.world.processes.onNextEvidence(again.pid, () => {
      world.world.processes.reuse(again.pid)
      world.world.processes.stage(again.pid, { arguments: ["node", "other", "--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
    })
    const exit = await Effect.runPromise(Effect.exit(Effect.provide(Effect.flatMap(Policy, (p) => p.resolve({ sessionId: again.sessionId })), world.layer)))
    expect(Exit.isFailure(exit) && Option.getOrThrow(Cause.failureOption(exit.cause))._tag).toBe("NotLive")
  })

  it("a pid taken, with the same session id and startedAt, while resolve reads its evidence: the policy is the new process's", async () => {
    // A resumed conversation in a new process on the same pid: the two resolves agree on pid and
    // id, and only the start times that proved the records tell the processes apart.
    const world = makeMemoryWorld()
    const { pid, startTime } = world.processes.spawn({ arguments: ["/usr/bin/claude", "--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
    const file = path.join(world.home.root, "sessions", `${pid}.json`)
    world.tree.writeFile(file, recordText(pid, { procStart: startTime, sessionId: "same", startedAt: 1796007021392 }))
    // Right after the old process's evidence is read (`onNextEvidence` runs before it is).
    const probe = world.processes.probe as { evidence: typeof world.processes.probe.evidence }
    const evidence = probe.evidence
    let swapped = false
    probe.evidence = (p, parts) =>
      Effect.tap(evidence(p, parts), () =>
        Effect.sync(() => {
          if (swapped || p !== pid) return
          swapped = true
          world.processes.kill(pid)
          const now = world.processes.reuse(pid)
          world.tree.writeFile(file, recordText(pid, { procStart: now, sessionId: "same", startedAt: 1796007021392 }))
        }))
    const resolve = Effect.flatMap(Policy, (policy) => policy.resolve({ sessionId: "same" })).pipe(Effect.provide(layerMemory(world)))
    const raced = await Effect.runPromise(resolve)
    const after = await Effect.runPromise(resolve)
    expect(swapped).toBe(true)
    expect(after.policy.effective).toBe(null)
    expect([raced.session.pid, raced.policy.effective]).toEqual([after.session.pid, after.policy.effective])
  })
})
