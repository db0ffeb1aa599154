/**
 * Where the Claude home is when nothing names one: the user's home directory, found as
 * `os.homedir()` finds it, without loading `node:os` when `HOME` says (see `ClaudeHome.userHome`).
 * The command's whole rule (option, `CLAUDE_CONFIG_DIR`, `~/.claude`) is checked end to end in
 * `Cli.test.ts`.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { fromEnvironment, rootFromProcess, userHome } from "../src/services/ClaudeHome.js"

const saved = { HOME: process.env.HOME, CLAUDE_CONFIG_DIR: process.env.CLAUDE_CONFIG_DIR }
const setEnv = (name: keyof typeof saved, value: string | undefined) => {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}
afterEach(() => {
  setEnv("HOME", saved.HOME)
  setEnv("CLAUDE_CONFIG_DIR", saved.CLAUDE_CONFIG_DIR)
})

describe("the user's home directory", () => {
  // With HOME unset both ask the password database (userHome through os.homedir() itself): that
  // case only shows that it does not throw here; the others show HOME read first, as libuv reads it.
  it("is what os.homedir() answers, with HOME set, set empty, and unset", () => {
    for (const home of ["/home/someone", "", "/tmp/a b", undefined]) {
      setEnv("HOME", home)
      expect(userHome(), String(home)).toBe(os.homedir())
    }
  })

  it("the command's home: the option, then a non-empty CLAUDE_CONFIG_DIR, then ~/.claude", () => {
    setEnv("HOME", "/home/someone")
    setEnv("CLAUDE_CONFIG_DIR", "/configured")
    expect(rootFromProcess("/given")).toBe("/given")
    expect(rootFromProcess(undefined)).toBe("/configured")
    setEnv("CLAUDE_CONFIG_DIR", "")
    expect(rootFromProcess(undefined)).toBe(path.join("/home/someone", ".claude"))
    setEnv("CLAUDE_CONFIG_DIR", undefined)
    expect(rootFromProcess(undefined)).toBe(path.join("/home/someone", ".claude"))
    // A comma is part of the path, as Effect's Config reads a single string.
    setEnv("CLAUDE_CONFIG_DIR", "/a,b")
    expect(rootFromProcess(undefined)).toBe("/a,b")
  })

  it("the command's rule and the library's (through Effect's ConfigProvider) agree on every environment", () => {
    for (const home of ["/home/someone", "", undefined]) {
      for (const configured of ["/configured", "", "/a,b", "relative/dir", undefined]) {
        setEnv("HOME", home)
        setEnv("CLAUDE_CONFIG_DIR", configured)
        const library = Effect.runSync(fromEnvironment()).root
        expect(path.resolve(rootFromProcess(undefined)), `${home} ${configured}`).toBe(library)
        expect(path.resolve(rootFromProcess("/given"))).toBe(Effect.runSync(fromEnvironment("/given")).root)
      }
    }
  })
})
