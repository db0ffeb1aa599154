/**
 * Where the Claude home is: one rule (`rootOf`: the option, then a non-empty `CLAUDE_CONFIG_DIR`, then
 * `<user home>/.claude`), which the library reads through Effect's `Config` (`fromEnvironment`) and
 * the command through the process's environment. The command's whole rule is checked end to end in
 * `Cli.test.ts`.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import { fromEnvironment, rootOf, userHome } from "../src/services/ClaudeHome.js"

const saved = { HOME: process.env.HOME, CLAUDE_CONFIG_DIR: process.env.CLAUDE_CONFIG_DIR }
const setEnv = (name: keyof typeof saved, value: string | undefined) => {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}
afterEach(() => {
  setEnv("HOME", saved.HOME)
  setEnv("CLAUDE_CONFIG_DIR", saved.CLAUDE_CONFIG_DIR)
})

const noHome = () => {
  throw new Error("the rule asked for the user's home")
}

describe("the Claude home", () => {
  it("the user's home is what os.homedir() answers, with HOME set, set empty, and unset", () => {
    for (const home of ["/home/someone", "", "/tmp/a b", undefined]) {
      setEnv("HOME", home)
      expect(userHome(), String(home)).toBe(os.homedir())
    }
  })

  it("the rule: the option, then CLAUDE_CONFIG_DIR (empty: the working directory), then ~/.claude, asking for the user's home only then", () => {
    const home = () => "/home/someone"
    expect(rootOf("/given", "/configured", noHome)).toBe("/given")
    expect(rootOf("/given", undefined, noHome)).toBe("/given")
    expect(rootOf(undefined, "/configured", noHome)).toBe("/configured")
    // A comma is part of the path, as Effect's Config reads a single string.
    expect(rootOf(undefined, "/a,b", noHome)).toBe("/a,b")
    // Set but empty: the working directory, as Claude Code takes it.
    expect(rootOf(undefined, "", noHome, () => "/work/here")).toBe("/work/here")
    expect(rootOf(undefined, "", noHome)).toBe(process.cwd())
    expect(rootOf(undefined, undefined, home)).toBe(path.join("/home/someone", ".claude"))
  })

  it("the library reads CLAUDE_CONFIG_DIR through the program's ConfigProvider", () => {
    const withConfig = (map: Map<string, string>, claudeHome?: string) =>
      Effect.runSync(Effect.withConfigProvider(fromEnvironment(claudeHome), ConfigProvider.fromMap(map))).root
    expect(withConfig(new Map([["CLAUDE_CONFIG_DIR", "/configured"]]))).toBe("/configured")
    expect(withConfig(new Map([["CLAUDE_CONFIG_DIR", "/configured"]]), "/given")).toBe("/given")
    setEnv("HOME", "/home/someone")
    expect(withConfig(new Map([["CLAUDE_CONFIG_DIR", ""]]))).toBe(process.cwd())
    expect(withConfig(new Map())).toBe(path.join("/home/someone", ".claude"))
  })

  it("the library's reading and the process environment's agree on every environment", () => {
    for (const home of ["/home/someone", "", undefined]) {
      for (const configured of ["/configured", "", "/a,b", "relative/dir", undefined]) {
        setEnv("HOME", home)
        setEnv("CLAUDE_CONFIG_DIR", configured)
        const fromProcess = (option: string | undefined) => path.resolve(rootOf(option, process.env.CLAUDE_CONFIG_DIR, userHome))
        expect(fromProcess(undefined), `${home} ${configured}`).toBe(Effect.runSync(fromEnvironment()).root)
        expect(fromProcess("/given")).toBe(Effect.runSync(fromEnvironment("/given")).root)
      }
    }
  })
})
