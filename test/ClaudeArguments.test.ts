/**
 * Claude Code's own scan of its argument vector for `--settings`, `--setting-sources`,
 * `--restricted` and the rest: last occurrence wins, `--` ends the options, another flag's value
 * is never a flag, and the executable is not an option.
 */
import { describe, expect, it } from "@effect/vitest"
import { claudeArgumentsOf, flagValues, hasFlag, lastFlagValue, optionsOf, settingsFlagOf, settingSourcesOf } from "../src/domain/ClaudeArguments.js"

const claude = (...args: ReadonlyArray<string>) => claudeArgumentsOf(["/usr/local/bin/claude", ...args])

describe("the --settings scan", () => {
  it("takes the last occurrence, in either spelling", () => {
    expect(lastFlagValue("--settings", ["--settings", "a.json", "--settings=b.json"])).toBe("b.json")
    expect(lastFlagValue("--settings", ["--settings=a.json", "--settings", "b.json"])).toBe("b.json")
    expect(flagValues("--settings", ["--settings", "a.json", "--settings=b.json"])).toEqual(["a.json", "b.json"])
  })

  it("takes the next word as the value even when it looks like an option", () => {
    expect(lastFlagValue("--settings", ["--settings", "--verbose"])).toBe("--verbose")
  })

  it("stops at a bare --", () => {
    expect(lastFlagValue("--settings", ["--settings", "a.json", "--", "--settings", "b.json"])).toBe("a.json")
    expect(lastFlagValue("--settings", ["--", "--settings", "b.json"])).toBeUndefined()
  })

  it("never reads another flag's value as a flag", () => {
    expect(lastFlagValue("--settings", ["--model", "--settings", "x.json"])).toBeUndefined()
    expect(lastFlagValue("--settings", ["--append-system-prompt", "--settings", "--settings", "y.json"])).toBe("y.json")
  })

  it("skips every word of a list flag up to the next option", () => {
    expect(lastFlagValue("--settings", ["--add-dir", "a", "b", "--settings", "x.json"])).toBe("x.json")
    // The words after a list flag's value are its own, up to the next option.
    expect(lastFlagValue("--setting-sources", ["--add-dir", "a", "b", "--setting-sources", "user"])).toBe("user")
  })

  it("gives an optional-value flag the next word only when it does not look like an option", () => {
    expect(lastFlagValue("--settings", ["--resume", "--settings", "a.json"])).toBe("a.json")
    expect(lastFlagValue("--settings", ["--resume", "abc", "--settings", "a.json"])).toBe("a.json")
  })

  it("ignores a flag with no word after it", () => {
    expect(lastFlagValue("--settings", ["--verbose", "--settings"])).toBeUndefined()
  })
})

describe("the executable", () => {
  it("is skipped: one word for the native binary, two for a JavaScript runtime and its script", () => {
    expect(optionsOf(["/opt/claude/claude", "--settings", "a.json"])).toEqual(["--settings", "a.json"])
    expect(optionsOf(["node", "/usr/lib/node_modules/cli.js", "--settings", "a.json"])).toEqual(["--settings", "a.json"])
    expect(optionsOf(["/usr/bin/bun", "cli.js", "-p"])).toEqual(["-p"])
  })

  it("is never read as a flag even when its name would be one", () => {
    expect(claudeArgumentsOf(["--restricted", "--verbose"]).restricted).toBe(false)
  })
})

describe("--settings value", () => {
  it("is JSON text when, trimmed, it starts with { and ends with }", () => {
    expect(settingsFlagOf("  {\"crossSessionInbound\":\"hold\"}\n")).toEqual({ _tag: "JsonText", text: "{\"crossSessionInbound\":\"hold\"}" })
  })

  it("is otherwise a path, kept as given", () => {
    expect(settingsFlagOf("{\"a\":1")).toEqual({ _tag: "File", path: "{\"a\":1" })
    expect(settingsFlagOf("[1]")).toEqual({ _tag: "File", path: "[1]" })
    expect(settingsFlagOf(" rel/s.json ")).toEqual({ _tag: "File", path: " rel/s.json " })
  })

  it("is ignored when empty", () => {
    expect(claude("--settings", "").settings).toBeNull()
    expect(claude("--settings=").settings).toBeNull()
    expect(claude("--settings", "s.json").settings).toEqual({ _tag: "File", path: "s.json" })
  })
})

describe("--setting-sources", () => {
  it("names user, project and local, trimmed, in any order", () => {
    expect(settingSourcesOf(" local , user")).toEqual({ _tag: "Listed", sources: ["localSettings", "userSettings"] })
  })

  it("names none when empty", () => {
    expect(settingSourcesOf("")).toEqual({ _tag: "Listed", sources: [] })
  })

  it("is invalid with any other name, an empty item or another case", () => {
    for (const text of ["user,,local", "User", "flag", "policy", "user,"]) {
      expect(settingSourcesOf(text)).toEqual({ _tag: "Invalid", text })
    }
  })

  it("takes the last occurrence", () => {
    expect(claude("--setting-sources", "user", "--setting-sources=project").settingSources).toEqual({
      _tag: "Listed",
      sources: ["projectSettings"]
    })
  })
})

describe("--restricted and the host flags", () => {
  it("--restricted counts before -- and not as another flag's value", () => {
    expect(hasFlag("--restricted", ["--verbose", "--restricted"])).toBe(true)
    expect(hasFlag("--restricted", ["--", "--restricted"])).toBe(false)
    expect(hasFlag("--restricted", ["--name", "--restricted"])).toBe(false)
  })

  it("reads --project-config-root and notices --managed-settings", () => {
    const args = claude("--project-config-root", "/srv/p", "--managed-settings", "{\"a\":1}")
    expect(args.projectConfigRoot).toBe("/srv/p")
    expect(args.parentManagedSettings).toBe(true)
    expect(claude("--managed-settings=").parentManagedSettings).toBe(false)
    expect(claude().projectConfigRoot).toBeNull()
  })
})
