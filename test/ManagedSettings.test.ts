/**
 * The managed settings files: where they are per platform, which drop-ins count, the order they
 * are merged in, and what the merged value is.
 */
import { describe, expect, it } from "@effect/vitest"
import { dropInNames, managedDirectoryOf, managedFilePaths } from "../src/domain/ManagedSettings.js"
import { decidePolicy } from "../src/domain/PolicyDecision.js"
import { invalidValue, reading, set, unreadable } from "./support/policyFacts.js"

describe("the managed directory", () => {
  it("is the platform's own", () => {
    expect(managedDirectoryOf("linux")).toBe("/etc/claude-code")
    expect(managedDirectoryOf("freebsd")).toBe("/etc/claude-code")
    expect(managedDirectoryOf("darwin")).toBe("/Library/Application Support/ClaudeCode")
    expect(managedDirectoryOf("win32")).toBe("C:\\Program Files\\ClaudeCode")
  })

  it("lists the base file first, then the drop-ins", () => {
    expect(managedFilePaths("/etc/claude-code/", ["a.json", "b.json"], "linux")).toEqual([
      "/etc/claude-code/managed-settings.json",
      "/etc/claude-code/managed-settings.d/a.json",
      "/etc/claude-code/managed-settings.d/b.json"
    ])
    expect(managedFilePaths("C:\\Program Files\\ClaudeCode", ["a.json"], "win32")).toEqual([
      "C:\\Program Files\\ClaudeCode\\managed-settings.json",
      "C:\\Program Files\\ClaudeCode\\managed-settings.d\\a.json"
    ])
  })
})

describe("dropInNames", () => {
  it("keeps .json files and links whose name does not start with a dot", () => {
    const names = dropInNames([
      { name: "10-policy.json", type: "File" },
      { name: "20-link.json", type: "SymbolicLink" },
      { name: ".hidden.json", type: "File" },
      { name: "notes.txt", type: "File" },
      { name: "old.json.bak", type: "File" },
      { name: "dir.json", type: "Directory" },
      { name: "fifo.json", type: "Other" }
    ])
    expect(names).toEqual(["10-policy.json", "20-link.json"])
  })

  it("orders names by UTF-16 code units, not by number or locale", () => {
    const names = dropInNames(["b.json", "9-x.json", "B.json", "10-x.json", "a.json"].map((name) => ({ name, type: "File" as const })))
    expect(names).toEqual(["10-x.json", "9-x.json", "B.json", "a.json", "b.json"])
  })
})

describe("the merged managed value", () => {
  const decide = (...readings: Parameters<typeof decidePolicy>[0]["readings"]) =>
    decidePolicy({ readings, settingSourcesKnown: true, killSwitch: { state: "unset", origin: null } })

  it("is the last file's that holds one: a drop-in overrides the base file and an earlier drop-in", () => {
    expect(decide(set("policySettings", "accept"), set("policySettings", "hold"))).toMatchObject({
      effective: "hold",
      decidedBy: "policySettings"
    })
    expect(decide(set("policySettings", "refuse"), set("policySettings", "hold"), reading("policySettings", "absent")).effective)
      .toBe("hold")
  })

  it("counts an unrecognized value as refuse in its own file, which a later drop-in can still override", () => {
    expect(decide(invalidValue("policySettings")).effective).toBe("refuse")
    expect(decide(set("policySettings", "accept"), invalidValue("policySettings")).effective).toBe("refuse")
    expect(decide(invalidValue("policySettings"), set("policySettings", "accept")).effective).toBe("accept")
  })

  it("is uncertain when a file after the last value could not be read, certain when only earlier ones could not", () => {
    expect(decide(set("policySettings", "hold"), unreadable("policySettings")).certainty).toBe("partial")
    expect(decide(unreadable("policySettings"), set("policySettings", "hold"))).toMatchObject({
      effective: "hold",
      certainty: "certain"
    })
  })
})
