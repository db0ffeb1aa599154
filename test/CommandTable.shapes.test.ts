/**
 * The shapes a command-table entry can take beyond one option each and one argument: an option
 * given more than once (`--until idle --until waiting`) and a second argument (`send ID MESSAGE`,
 * with `-` for standard input). Checked on a table of the test's own, through the same walk and the
 * same `@effect/cli` tree the real table gets, so that a command that declares them gets what it
 * declared on both paths.
 */
import * as Command from "@effect/cli/Command"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { parserEnvironment } from "../command/src/CommandLine.js"
import { arrangedArgv, readArgv } from "../src/cli/Argv.js"
import type { CommandSpec } from "../src/cli/CommandTable.js"
import { treeOf } from "../src/cli/CompletionTree.js"
import type { Command as Invoked, Invocation } from "../src/cli/Invocation.js"
import { commandTreeOf, Runner } from "../src/cli/Root.js"

const text = (placeholder: string) => ({ placeholder, completion: "text" as const, parse: (value: string) => ({ ok: true as const, value }) })
const state = {
  placeholder: "STATE",
  completion: ["idle", "busy"],
  parse: (value: string) => (value === "idle" || value === "busy" ? { ok: true as const, value } : { ok: false as const, message: `not a state: '${value}'` })
}

const table: CommandSpec = {
  name: "demo",
  description: "a table with the new shapes",
  options: [],
  subcommands: [{
    name: "send",
    description: "two arguments and a repeatable option",
    options: [
      { name: "--until", description: "repeatable", value: state, repeatable: true },
      { name: "--name", description: "once", value: text("NAME") },
      { name: "--json", description: "json" }
    ],
    arguments: [
      { name: "SESSION_ID", description: "first", required: false, value: text("SESSION_ID") },
      { name: "MESSAGE", description: "second", required: false, value: text("MESSAGE") }
    ],
    make: (given) =>
      ({ _tag: "demo", until: given.values("--until"), last: given.value("--until"), name: given.value("--name"), args: given.arguments }) as unknown as Invoked
  }]
}

const walkTree = treeOf(table)
const tree = commandTreeOf(table)

const parsed = async (args: ReadonlyArray<string>) => {
  const reading = readArgv(args, walkTree)
  if (reading.problem !== undefined) return { problem: reading.problem }
  let recorded: Invocation | undefined
  const exit = await Effect.runPromiseExit(
    Command.run(tree, { name: "demo", version: "0" })(["node", "demo", ...arrangedArgv(reading, walkTree)]).pipe(
      Effect.provideService(Runner, (invocation) => Effect.sync(() => void (recorded = invocation))),
      Effect.provide(parserEnvironment)
    )
  )
  return Exit.isSuccess(exit) && recorded !== undefined ? { command: recorded.command } : { failed: String(Exit.isFailure(exit) ? exit.cause : "") }
}

describe("a repeatable option", () => {
  it("keeps every value in the order written, on either side of the arguments", async () => {
    expect(await parsed(["send", "--until", "idle", "id", "--until=busy", "hello"])).toEqual({
      command: { _tag: "demo", until: ["idle", "busy"], last: "busy", name: undefined, args: ["id", "hello"] }
    })
  })

  it("is empty when not given, and each value goes through the table's parser", async () => {
    expect(await parsed(["send", "id"])).toEqual({ command: { _tag: "demo", until: [], last: undefined, name: undefined, args: ["id", undefined] } })
    expect(await parsed(["send", "--until", "idle", "--until", "bogus", "id"])).toMatchObject({ failed: expect.stringContaining("not a state: 'bogus'") })
  })

  it("is the only kind an option given twice may be", () => {
    expect(readArgv(["send", "--name", "a", "--name", "b"], walkTree).problem).toBe("--name is given twice")
    expect(readArgv(["send", "--until", "idle", "--until", "idle"], walkTree).problem).toBeUndefined()
    expect(walkTree.subcommands?.[0]?.options.find((option) => option.name === "--until")?.repeatable).toBe(true)
  })
})

describe("two arguments", () => {
  it("fill from the first: one word is the first argument, and make decides what it means", async () => {
    expect(await parsed(["send", "--name", "n", "hello"])).toEqual({
      command: { _tag: "demo", until: [], last: undefined, name: "n", args: ["hello", undefined] }
    })
  })

  it("take `-` (standard input) as an argument, not as an option", async () => {
    expect(readArgv(["send", "id", "-"], walkTree).problem).toBeUndefined()
    expect(await parsed(["send", "id", "-"])).toEqual({ command: { _tag: "demo", until: [], last: undefined, name: undefined, args: ["id", "-"] } })
  })

  it("refuse a third word, naming it and the command", async () => {
    expect(await parsed(["send", "id", "hello", "extra"])).toEqual({
      problem: "'extra' is one argument too many for demo send, which takes SESSION_ID then MESSAGE"
    })
  })
})

describe("a NUL in a word", () => {
  it("is a usage error on both paths, never a split value: no real command line holds one", async () => {
    expect(readArgv(["send", "--until", "idle\u0000busy", "id"], walkTree).problem).toMatch(/cannot hold a NUL/)
    expect(await parsed(["send", "--until", "idle\u0000busy", "id"])).toEqual({ problem: expect.stringMatching(/cannot hold a NUL/) })
  })
})
