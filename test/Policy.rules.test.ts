/**
 * One example per rule of the policy in effect, on whole sessions as the service would see them:
 * precedence, tighten-only project settings, unrecognized values per source, the kill switch,
 * `--setting-sources`, and what happens when something could not be read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { describePolicy, SessionPolicy } from "../src/domain/Policy.js"
import { sessionPolicyOf } from "../src/domain/PolicyEvidence.js"
import { bytes, failed, missing, session, type SessionOverrides, settingsFile, textFile } from "./support/policyFacts.js"

const managedFile = "/etc/claude-code/managed-settings.json"
const dropIn = (name: string) => `/etc/claude-code/managed-settings.d/${name}`
const userFile = "/home/u/.claude/settings.json"
const projectFile = "/home/u/app/.claude/settings.json"
const localFile = "/home/u/app/.claude/settings.local.json"
const flagFile = "/home/u/flag.json"

const answer = (overrides: SessionOverrides) => {
  const policy = sessionPolicyOf(session(overrides))
  return { effective: policy.effective, decidedBy: policy.decidedBy, certainty: policy.certainty }
}

describe("precedence: managed, then --settings, then the user's settings decide outright", () => {
  it("managed settings win over --settings and user settings", () => {
    expect(answer({
      managed: [settingsFile(managedFile, "hold")],
      cmdline: ["claude", "--settings", flagFile],
      flag: settingsFile(flagFile, "refuse"),
      user: settingsFile(userFile, "accept")
    })).toEqual({ effective: "hold", decidedBy: "policySettings", certainty: "certain" })
  })

  it("--settings wins over user settings, looser or not", () => {
    expect(answer({
      cmdline: ["claude", "--settings", flagFile],
      flag: settingsFile(flagFile, "accept"),
      user: settingsFile(userFile, "refuse")
    })).toEqual({ effective: "accept", decidedBy: "flagSettings", certainty: "certain" })
  })

  it("--settings JSON text counts like a file", () => {
    const text = "{\"crossSessionInbound\":\"refuse\"}"
    expect(answer({
      cmdline: ["claude", "--settings", text],
      flag: { path: null, read: { _tag: "Bytes", bytes: bytes(text) } },
      user: settingsFile(userFile, "accept")
    })).toMatchObject({ effective: "refuse", decidedBy: "flagSettings" })
  })

  it("--settings JSON text Claude Code could not parse means this process read something else", () => {
    const text = "{\"crossSessionInbound\":\"refuse\",}"
    const policy = sessionPolicyOf(session({
      cmdline: ["claude", "--settings", text],
      flag: { path: null, read: { _tag: "Bytes", bytes: bytes(text) } },
      user: settingsFile(userFile, "accept")
    }))
    expect(policy).toMatchObject({ effective: "accept", certainty: "partial" })
    expect(policy.sources.find((s) => s.source === "flagSettings")?.state).toBe("unreadable")
  })

  it("user settings decide when nothing above holds a value", () => {
    expect(answer({ user: settingsFile(userFile, "accept") })).toEqual({
      effective: "accept",
      decidedBy: "userSettings",
      certainty: "certain"
    })
  })

  it("nothing set anywhere is Claude Code's default, described in words", () => {
    const policy = sessionPolicyOf(session())
    expect(policy).toMatchObject({ effective: null, decidedBy: "default", certainty: "certain" })
    expect(describePolicy(policy.effective, policy.decidedBy)).toContain(
      "delivers automatically only when the sender's permission-mode class matches the receiver's, and holds otherwise"
    )
    expect(policy.unseen).toEqual([
      "serverManagedSettings",
      "mdmSettings",
      "policyHelper",
      "remoteKillSwitch",
      "permissionModes",
      "senderModeFlag",
      "alwaysDeliverChoice"
    ])
  })
})

describe("project settings may only tighten: local first, then project", () => {
  it("a stricter local value wins as repoSettings", () => {
    expect(answer({ user: settingsFile(userFile, "accept"), local: [settingsFile(localFile, "hold")] })).toMatchObject({
      effective: "hold",
      decidedBy: "repoSettings"
    })
  })

  it("a stricter project value wins over a stricter local one", () => {
    expect(answer({
      user: settingsFile(userFile, "accept"),
      local: [settingsFile(localFile, "hold")],
      project: settingsFile(projectFile, "refuse")
    })).toMatchObject({ effective: "refuse", decidedBy: "repoSettings" })
  })

  it("a looser project value changes nothing", () => {
    expect(answer({ user: settingsFile(userFile, "refuse"), project: settingsFile(projectFile, "accept") })).toMatchObject({
      effective: "refuse",
      decidedBy: "userSettings"
    })
  })

  it("the same non-accept value takes the credit from user settings, not from managed settings", () => {
    expect(answer({ user: settingsFile(userFile, "hold"), local: [settingsFile(localFile, "hold")] }).decidedBy).toBe("repoSettings")
    expect(answer({ managed: [settingsFile(managedFile, "hold")], local: [settingsFile(localFile, "hold")] }).decidedBy).toBe(
      "policySettings"
    )
  })

  it("alone, a repository can hold or refuse, but never turn the default into accept", () => {
    expect(answer({ project: settingsFile(projectFile, "hold") })).toMatchObject({ effective: "hold", decidedBy: "repoSettings" })
    expect(answer({ project: settingsFile(projectFile, "accept") })).toMatchObject({ effective: null, decidedBy: "default" })
  })

  it("cannot loosen managed settings either", () => {
    expect(answer({ managed: [settingsFile(managedFile, "refuse")], local: [settingsFile(localFile, "accept")] })).toMatchObject({
      effective: "refuse",
      decidedBy: "policySettings"
    })
  })

  it("the repository root's local file wins over the folder's own", () => {
    const rootLocal = "/home/u/.claude/settings.local.json"
    expect(answer({ local: [settingsFile(localFile, "refuse"), settingsFile(rootLocal, "hold")] }).effective).toBe("hold")
    expect(answer({ local: [settingsFile(localFile, "refuse"), missing(rootLocal)] }).effective).toBe("refuse")
  })
})

describe("a file Claude Code's settings schema refuses is skipped whole (as Claude Code 2.1.332 does: seen on real sessions)", () => {
  const refused: ReadonlyArray<Record<string, unknown>> = [
    { permissions: "oops" },
    { permissions: null },
    { permissions: { defaultMode: 5 } },
    { permissions: { allow: "Bash" } },
    { env: "x" },
    { model: 5 },
    { skipDangerousModePermissionPrompt: "yes" }
  ]

  it("its value decides nothing, and the reading says why", () => {
    for (const others of refused) {
      const sessionFacts = session({ user: settingsFile(userFile, "hold", others), project: settingsFile(projectFile, "accept") })
      const policy = sessionPolicyOf(sessionFacts)
      expect(policy.decidedBy, JSON.stringify(others)).not.toBe("userSettings")
      expect(policy.effective, JSON.stringify(others)).not.toBe("hold")
      expect(policy.sources.find((s) => s.source === "userSettings"), JSON.stringify(others)).toMatchObject({ state: "invalid", problem: "invalid_settings" })
    }
  })

  it("but its unrecognized crossSessionInbound still holds messages, as Claude Code warns before it checks the schema", () => {
    expect(answer({ user: settingsFile(userFile, "Accept", { model: 5 }) })).toMatchObject({ effective: "hold", decidedBy: "invalidSetting" })
  })

  it("managed files are read with Claude Code's lenient schema: a bad member is dropped, the rest applies", () => {
    expect(answer({ managed: [settingsFile(managedFile, "refuse", { model: 5, permissions: null })], user: settingsFile(userFile, "accept") })).toMatchObject({
      effective: "refuse",
      decidedBy: "policySettings"
    })
  })

  it("members of the right type, or that Claude Code coerces, leave the file as it is", () => {
    const kept = {
      permissions: { defaultMode: "plan", allow: [], deny: ["Bash"] },
      env: { A: 1 },
      model: "opus",
      skipDangerousModePermissionPrompt: true,
      hooks: []
    }
    expect(answer({ user: settingsFile(userFile, "hold", kept) })).toMatchObject({ effective: "hold", decidedBy: "userSettings", certainty: "certain" })
  })
})

describe("an unrecognized value", () => {
  it("in user settings is dropped and holds messages", () => {
    expect(answer({ user: settingsFile(userFile, "Accept") })).toMatchObject({ effective: "hold", decidedBy: "invalidSetting" })
  })

  it("in --settings is dropped, so the user's value decides, and at least holds", () => {
    const flagged = { cmdline: ["claude", "--settings", flagFile], flag: settingsFile(flagFile, null) }
    expect(answer({ ...flagged, user: settingsFile(userFile, "refuse") })).toMatchObject({
      effective: "refuse",
      decidedBy: "userSettings"
    })
    expect(answer({ ...flagged, user: settingsFile(userFile, "accept") })).toMatchObject({
      effective: "hold",
      decidedBy: "invalidSetting"
    })
  })

  it("in project or local settings holds messages over the user's accept", () => {
    expect(answer({ user: settingsFile(userFile, "accept"), project: settingsFile(projectFile, 1) })).toMatchObject({
      effective: "hold",
      decidedBy: "invalidSetting"
    })
    expect(answer({ user: settingsFile(userFile, "accept"), local: [settingsFile(localFile, ["hold"])] }).effective).toBe("hold")
  })

  it("in managed settings is refuse", () => {
    expect(answer({ managed: [settingsFile(managedFile, "maybe")], user: settingsFile(userFile, "accept") })).toMatchObject({
      effective: "refuse",
      decidedBy: "policySettings"
    })
  })

  it("is not the same as a file that is not JSON: that file is skipped and holds nothing", () => {
    expect(answer({ user: textFile(userFile, "{\"crossSessionInbound\": \"refuse\",,}") })).toMatchObject({
      effective: null,
      decidedBy: "default",
      certainty: "certain"
    })
  })
})

describe("managed drop-ins", () => {
  it("merge in name order over the base file", () => {
    expect(answer({
      managed: [settingsFile(managedFile, "accept"), settingsFile(dropIn("10-a.json"), "refuse"), settingsFile(dropIn("20-b.json"), "hold")]
    })).toMatchObject({ effective: "hold", decidedBy: "policySettings" })
  })

  it("a drop-in folder that could not be listed leaves the answer partial", () => {
    expect(answer({ managed: [settingsFile(managedFile, "accept"), failed("/etc/claude-code/managed-settings.d")] }))
      .toMatchObject({ effective: "accept", certainty: "partial" })
  })

  it("a managed file that is not a JSON object leaves the answer partial: Claude Code does not start on one", () => {
    const policy = sessionPolicyOf(session({ managed: [textFile(managedFile, "{oops")], user: settingsFile(userFile, "accept") }))
    expect(policy).toMatchObject({ effective: "accept", certainty: "partial" })
    expect(policy.sources[0]).toMatchObject({ source: "policySettings", state: "invalid", problem: "invalid_json" })
  })

  it("a parent's --managed-settings leaves the answer partial", () => {
    expect(answer({ cmdline: ["claude", "--managed-settings", "{}"], user: settingsFile(userFile, "accept") }).certainty).toBe(
      "partial"
    )
  })
})

describe("the kill switch CLAUDE_CODE_HARBOR_KITE", () => {
  it("refuses with every spelling that is not a true value, before anything else", () => {
    for (const value of ["0", "false", "no", "off", "OFF", "banana"]) {
      expect(answer({
        environ: new Map([["CLAUDE_CODE_HARBOR_KITE", value]]),
        managed: [settingsFile(managedFile, "accept")]
      })).toEqual({ effective: "refuse", decidedBy: "disabled", certainty: "certain" })
    }
  })

  it("does nothing when true or blank", () => {
    for (const value of ["1", "true", "", "  "]) {
      expect(answer({ environ: new Map([["CLAUDE_CODE_HARBOR_KITE", value]]), user: settingsFile(userFile, "accept") }).effective)
        .toBe("accept")
    }
  })

  it("is turned off by the env of user settings, but not by a project's", () => {
    const off = { env: { CLAUDE_CODE_HARBOR_KITE: "0" } }
    const byUser = sessionPolicyOf(session({ user: settingsFile(userFile, "accept", off) }))
    expect(byUser).toMatchObject({ effective: "refuse", decidedBy: "disabled", killSwitch: { state: "off", origin: "userSettings" } })
    expect(answer({ user: settingsFile(userFile, "accept"), project: settingsFile(projectFile, "hold", off) })).toMatchObject({
      effective: "hold",
      decidedBy: "repoSettings"
    })
  })

  it("is turned off by .claude.json's env", () => {
    const globalConfig = textFile("/home/u/.claude.json", "{\"env\":{\"CLAUDE_CODE_HARBOR_KITE\":\"false\"}}")
    expect(answer({ globalConfig: [globalConfig], user: settingsFile(userFile, "accept") }).decidedBy).toBe("disabled")
  })
})

describe("--setting-sources", () => {
  it("excludes user, project and local settings, never --settings or managed", () => {
    const everything = {
      user: settingsFile(userFile, "refuse"),
      project: settingsFile(projectFile, "refuse"),
      local: [settingsFile(localFile, "refuse")]
    }
    expect(answer({ ...everything, cmdline: ["claude", "--setting-sources", ""] })).toMatchObject({
      effective: null,
      decidedBy: "default",
      certainty: "certain"
    })
    expect(answer({
      ...everything,
      cmdline: ["claude", "--setting-sources", "", "--settings", flagFile],
      flag: settingsFile(flagFile, "accept"),
      managed: [settingsFile(managedFile, "hold")]
    })).toMatchObject({ effective: "hold", decidedBy: "policySettings" })
  })

  it("reports an excluded file as not_applicable, and its unrecognized value holds nothing", () => {
    const policy = sessionPolicyOf(session({ cmdline: ["claude", "--setting-sources", "user"], project: settingsFile(projectFile, "Hold") }))
    expect(policy.effective).toBeNull()
    expect(policy.sources.find((s) => s.source === "projectSettings")).toMatchObject({ state: "not_applicable", path: projectFile })
  })

  it("names only the sources it keeps", () => {
    expect(answer({
      cmdline: ["claude", "--setting-sources=local"],
      user: settingsFile(userFile, "accept"),
      local: [settingsFile(localFile, "hold")]
    })).toMatchObject({ effective: "hold", decidedBy: "repoSettings" })
  })

  it("--restricted excludes them all", () => {
    expect(answer({ cmdline: ["claude", "--restricted"], user: settingsFile(userFile, "accept") }).effective).toBeNull()
  })
})

describe("what could not be read", () => {
  it("an unknown environment leaves the answer partial, unless it already refuses", () => {
    const unknownEnvironment = { environ: null, hasSocket: false }
    const open = sessionPolicyOf(session({ ...unknownEnvironment, cmdline: ["claude", "--setting-sources", "user"], user: settingsFile(userFile, "accept") }))
    expect(open).toMatchObject({ effective: "accept", certainty: "partial", killSwitch: { state: "unknown" } })
    expect(open.partialBecause.map((p) => p.input)).toContain("environment")
    expect(answer({ ...unknownEnvironment, managed: [settingsFile(managedFile, "refuse")] })).toEqual({
      effective: "refuse",
      decidedBy: "policySettings",
      certainty: "certain"
    })
  })

  it("an unknown environment can only take away sources: what --setting-sources leaves out stays out", () => {
    const unknownEnvironment = { environ: null, hasSocket: true }
    const none = sessionPolicyOf(session({
      ...unknownEnvironment,
      cmdline: ["claude", "--setting-sources", ""],
      user: settingsFile(userFile, "hold"),
      local: [settingsFile(localFile, "refuse")]
    }))
    expect(none).toMatchObject({ effective: null, decidedBy: "default" })
    expect(none.sources.filter((s) => s.source !== "policySettings" && s.source !== "flagSettings").map((s) => s.state)).toEqual([
      "not_applicable",
      "not_applicable",
      "not_applicable"
    ])
    // The user's file may be read or not (CLAUDE_CODE_RESTRICTED could be set); the project's is out.
    const userOnly = sessionPolicyOf(session({
      ...unknownEnvironment,
      cmdline: ["claude", "--setting-sources", "user"],
      project: settingsFile(projectFile, "refuse")
    }))
    expect(userOnly).toMatchObject({ effective: null })
    expect(userOnly.sources.find((s) => s.source === "projectSettings")?.state).toBe("not_applicable")
  })

  it("a session with an inbox did not start with messaging off", () => {
    const policy = sessionPolicyOf(session({ environ: null, hasSocket: true, cmdline: ["claude", "--restricted"] }))
    expect(policy).toMatchObject({ certainty: "certain", killSwitch: { state: "not_off" } })
  })

  it("unread arguments leave --settings and --setting-sources unknown", () => {
    const policy = sessionPolicyOf(session({ cmdline: null, user: settingsFile(userFile, "accept") }))
    expect(policy).toMatchObject({ effective: "accept", certainty: "partial" })
    expect(policy.sources.find((s) => s.source === "flagSettings")?.state).toBe("unreadable")
    // The --settings file could also set CLAUDE_CODE_HARBOR_KITE in its env.
    expect(policy.partialBecause.map((p) => p.input).sort()).toEqual(["arguments", "environment", "flagSettings"])
  })

  it("an unreadable user file is partial while nothing above decides, and irrelevant once managed settings do", () => {
    expect(answer({ user: failed(userFile) })).toMatchObject({ effective: null, certainty: "partial" })
    const decided = sessionPolicyOf(session({ user: failed(userFile), managed: [settingsFile(managedFile, "refuse")] }))
    expect(decided).toMatchObject({ effective: "refuse", certainty: "certain", partialBecause: [] })
    expect(decided.sources.find((s) => s.source === "userSettings")?.state).toBe("unreadable")
  })

  it("an unreadable local file is partial even under managed accept, because it could tighten", () => {
    const policy = sessionPolicyOf(session({ local: [failed(localFile)], managed: [settingsFile(managedFile, "accept")] }))
    expect(policy).toMatchObject({ effective: "accept", decidedBy: "policySettings", certainty: "partial" })
    expect(policy.partialBecause).toEqual([{ input: "localSettings", path: localFile, detail: "permission denied" }])
  })

  it("the answer encodes with its Schema", () => {
    const policy = sessionPolicyOf(session({ local: [failed(localFile)], user: settingsFile(userFile, { x: 1 }) }))
    expect(Schema.decodeUnknownSync(SessionPolicy)(JSON.parse(JSON.stringify(Schema.encodeSync(SessionPolicy)(policy))))).toEqual(policy)
  })
})
