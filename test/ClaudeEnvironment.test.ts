/**
 * The launch environment and the kill switch: `CLAUDE_CODE_HARBOR_KITE` is on only when truthy,
 * blank counts as unset, and the `env` of the user, flag and managed settings (and `.claude.json`)
 * override the launch environment in that order.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { claudeArgumentsOf } from "../src/domain/ClaudeArguments.js"
import {
  enabledFolderSources,
  isEnvTruthy,
  killSwitchInSettings,
  type KillSwitchLayer,
  killSwitchOf,
  killSwitchValueOf,
  parseEnviron,
  userSettingsFileName
} from "../src/domain/ClaudeEnvironment.js"

describe("parseEnviron", () => {
  it("splits NUL-separated KEY=VALUE, keeps = inside values and empty values, skips entries without =", () => {
    const env = parseEnviron("A=1\0B=x=y\0EMPTY=\0junk\0=nokey\0")
    expect([...env]).toEqual([["A", "1"], ["B", "x=y"], ["EMPTY", ""]])
  })

  it("answers the first of a duplicated name, as getenv does", () => {
    expect(parseEnviron("K=first\0K=second").get("K")).toBe("first")
  })

  it("property: every name answers as the block's map would, and the map walks as that map does", () => {
    // The map as it was built before names were looked up in the block: the reference.
    const reference = (block: string) => {
      const variables = new Map<string, string>()
      for (const entry of block.split("\0")) {
        const equals = entry.indexOf("=")
        if (equals > 0 && !variables.has(entry.slice(0, equals))) variables.set(entry.slice(0, equals), entry.slice(equals + 1))
      }
      return variables
    }
    const piece = fc.constantFrom("A", "B", "AB", "=", "\0", "x", "A=", "\0A=", "B=1", "\0\0")
    const block = fc.array(piece, { maxLength: 24 }).map((pieces) => pieces.join(""))
    const name = fc.oneof(fc.constantFrom("", "=", "A=", "\0", "A\0", "x", "AB=x"), fc.array(piece, { maxLength: 3 }).map((pieces) => pieces.join("")))
    fc.assert(
      fc.property(block, fc.array(name, { maxLength: 8 }), fc.boolean(), (text, names, walkFirst) => {
        const expected = reference(text)
        const env = parseEnviron(text)
        // Looked up before and after the whole map is built.
        if (walkFirst) expect([...env]).toEqual([...expected])
        for (const n of [...expected.keys(), ...names]) {
          expect(env.get(n), JSON.stringify([text, n])).toBe(expected.get(n))
          expect(env.has(n)).toBe(expected.has(n))
        }
        expect([...env]).toEqual([...expected])
        expect([...env.keys()]).toEqual([...expected.keys()])
        expect([...env.values()]).toEqual([...expected.values()])
        expect([...env.entries()]).toEqual([...expected.entries()])
        expect(env.size).toBe(expected.size)
        const walked: Array<[string, string]> = []
        env.forEach((value, key, map) => {
          expect(map).toBe(env)
          walked.push([key, value])
        })
        expect(walked).toEqual([...expected])
      }),
      { numRuns: 500 }
    )
  })
})

describe("the kill switch value", () => {
  it("is off for every value that is not truthy", () => {
    for (const value of ["0", "false", "no", "off", "FALSE", " Off ", "banana", "2", "disabled"]) {
      expect(killSwitchValueOf(value)).toBe("off")
    }
  })

  it("is on for 1, true, yes and on in any case and around white space", () => {
    for (const value of ["1", "true", "TRUE", "yes", "Yes", " on ", "\ttrue\n"]) {
      expect(killSwitchValueOf(value)).toBe("on")
      expect(isEnvTruthy(value)).toBe(true)
    }
  })

  it("is unset when absent, empty or white space", () => {
    for (const value of [undefined, "", "   ", "\t"]) expect(killSwitchValueOf(value)).toBe("unset")
  })
})

describe("killSwitchOf", () => {
  const set = (origin: KillSwitchLayer["origin"], value: string): KillSwitchLayer => ({ origin, _tag: "Set", value })
  const notSet = (origin: KillSwitchLayer["origin"]): KillSwitchLayer => ({ origin, _tag: "NotSet" })
  const unreadable = (origin: KillSwitchLayer["origin"]): KillSwitchLayer => ({ origin, _tag: "Unreadable" })

  it("lets a settings env override the launch environment, managed over flag over user over .claude.json", () => {
    expect(killSwitchOf([set("environment", "1"), set("userSettings", "0")])).toEqual({ state: "off", origin: "userSettings" })
    expect(killSwitchOf([set("policySettings", "1"), set("flagSettings", "0"), set("userSettings", "0")])).toEqual({
      state: "on",
      origin: "policySettings"
    })
    expect(killSwitchOf([set("globalConfig", "0"), set("environment", "1")])).toEqual({ state: "off", origin: "globalConfig" })
  })

  it("lets a blank higher value override a lower one, and count as unset", () => {
    expect(killSwitchOf([set("environment", "0"), set("userSettings", " ")])).toEqual({ state: "unset", origin: "userSettings" })
  })

  it("is unknown when a place above the one that sets it could not be read, known when only places below could not", () => {
    expect(killSwitchOf([set("environment", "1"), unreadable("flagSettings")]).state).toBe("unknown")
    expect(killSwitchOf([unreadable("environment"), set("userSettings", "0")])).toEqual({ state: "off", origin: "userSettings" })
    expect(killSwitchOf([unreadable("environment"), notSet("userSettings")]).state).toBe("unknown")
  })

  it("is not_off when the launch environment is unknown but the session started its inbox", () => {
    expect(killSwitchOf([{ origin: "environment", _tag: "NotOff" }, notSet("userSettings")]).state).toBe("not_off")
    expect(killSwitchOf([{ origin: "environment", _tag: "NotOff" }, set("userSettings", "no")]).state).toBe("off")
  })

  it("is unset when nothing sets it", () => {
    expect(killSwitchOf([notSet("environment"), notSet("policySettings")])).toEqual({ state: "unset", origin: null })
  })
})

describe("killSwitchInSettings", () => {
  it("reads env.CLAUDE_CODE_HARBOR_KITE as Claude Code copies it: strings, numbers and booleans as text", () => {
    expect(killSwitchInSettings({ env: { CLAUDE_CODE_HARBOR_KITE: "0" } })).toBe("0")
    expect(killSwitchInSettings({ env: { CLAUDE_CODE_HARBOR_KITE: 0 } })).toBe("0")
    expect(killSwitchInSettings({ env: { CLAUDE_CODE_HARBOR_KITE: false } })).toBe("false")
  })

  it("ignores other shapes and other spellings of the name", () => {
    expect(killSwitchInSettings({ env: { CLAUDE_CODE_HARBOR_KITE: { off: true } } })).toBeUndefined()
    expect(killSwitchInSettings({ env: { claude_code_harbor_kite: "0" } })).toBeUndefined()
    expect(killSwitchInSettings({ env: ["CLAUDE_CODE_HARBOR_KITE=0"] })).toBeUndefined()
    expect(killSwitchInSettings({ CLAUDE_CODE_HARBOR_KITE: "0" })).toBeUndefined()
    expect(killSwitchInSettings([])).toBeUndefined()
  })
})

describe("enabledFolderSources", () => {
  const env = (entries: Record<string, string> = {}) => new Map(Object.entries(entries))
  const args = (...words: ReadonlyArray<string>) => claudeArgumentsOf(["claude", ...words])

  it("is all three without --setting-sources, and those named with it", () => {
    expect(enabledFolderSources(args(), env())).toEqual(["userSettings", "projectSettings", "localSettings"])
    expect(enabledFolderSources(args("--setting-sources", "project"), env())).toEqual(["projectSettings"])
    expect(enabledFolderSources(args("--setting-sources", ""), env())).toEqual([])
  })

  it("is none under --restricted or a truthy CLAUDE_CODE_RESTRICTED, whatever --setting-sources says", () => {
    expect(enabledFolderSources(args("--setting-sources", "user", "--restricted"), env())).toEqual([])
    expect(enabledFolderSources(args(), env({ CLAUDE_CODE_RESTRICTED: "yes" }))).toEqual([])
    expect(enabledFolderSources(args(), env({ CLAUDE_CODE_RESTRICTED: "0" }))).toHaveLength(3)
  })

  it("is none in a self-hosted remote review session", () => {
    const review = {
      CLAUDE_CODE_REMOTE: "true",
      CLAUDE_CODE_ENVIRONMENT_KIND: "byoc",
      CLAUDE_CODE_REMOTE_ENVIRONMENT_TYPE: "self_hosted",
      CLAUDE_CODE_REMOTE_SESSION_ORIGIN: "review"
    }
    expect(enabledFolderSources(args(), env(review))).toEqual([])
    expect(enabledFolderSources(args(), env({ ...review, CLAUDE_CODE_REMOTE_SESSION_ORIGIN: "web" }))).toHaveLength(3)
  })

  it("is unknown when the environment could not be read, unless the arguments already leave none", () => {
    expect(enabledFolderSources(args(), null)).toBeNull()
    expect(enabledFolderSources(args("--setting-sources", "user"), null)).toBeNull()
    expect(enabledFolderSources(args("--restricted"), null)).toEqual([])
    expect(enabledFolderSources(args("--setting-sources", ""), null)).toEqual([])
  })

  it("is unknown for a source list Claude Code would have refused", () => {
    expect(enabledFolderSources(args("--setting-sources", "user,flag"), env())).toBeNull()
  })
})

describe("userSettingsFileName", () => {
  it("is cowork_settings.json for a session that uses Cowork plugins, settings.json otherwise", () => {
    expect(userSettingsFileName(new Map([["CLAUDE_CODE_USE_COWORK_PLUGINS", "1"]]))).toBe("cowork_settings.json")
    expect(userSettingsFileName(new Map([["CLAUDE_CODE_USE_COWORK_PLUGINS", "0"]]))).toBe("settings.json")
    expect(userSettingsFileName(new Map())).toBe("settings.json")
  })
})
