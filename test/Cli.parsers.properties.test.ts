/**
 * The fast recognizer (`Recognize.ts`) and the full command line (`CommandLine.ts`: the same walk
 * of the words, then `@effect/cli`) held to one meaning: whenever the recognizer answers, the full
 * parser, given the command tree with a runner that records instead of running, makes the same
 * invocation of the same argv; and whenever the parser makes an invocation, the walk's `--json`
 * (which decides how a usage error is printed) is the invocation's. Argv is generated from the
 * documented grammar (every command, options in any order and on either side of the command,
 * `--opt value` and `--opt=value`, values spelled like subcommands or options, empty, duplicated,
 * unicode), then perturbed by inserting, deleting and swapping words.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc, ManagedRuntime } from "effect"
import { parserEnvironment } from "../command/src/CommandLine.js"
import { recognize } from "../command/src/Recognize.js"
import { readArgv } from "../src/cli/Argv.js"
import { runArguments } from "../src/cli/CommandLine.js"
import { type CommandSpec, commandTree, placesOf } from "../src/cli/CompletionTree.js"
import type { Invocation } from "../src/cli/Invocation.js"
import { UsageError } from "../src/cli/Report.js"
import { Runner } from "../src/cli/Root.js"

type Outcome =
  | { readonly _tag: "invocation"; readonly invocation: Invocation }
  | { readonly _tag: "usage"; readonly message: string }

/**
 * The command's parser environment, built once for every parse here: building its layers costs
 * more than a parse, and no parse leaves anything in it (the terminal is opened only to read input).
 */
const parser = ManagedRuntime.make(parserEnvironment)
afterAll(() => parser.dispose())

/** What the full command line makes of `args`, run by a runner that only records it. */
const parsed = async (args: ReadonlyArray<string>): Promise<Outcome> => {
  let recorded: Invocation | undefined
  const exit = await parser.runPromiseExit(
    runArguments(readArgv(args)).pipe(
      Effect.provideService(Runner, (invocation) => Effect.sync(() => void (recorded = invocation)))
    )
  )
  if (Exit.isSuccess(exit) && recorded !== undefined) return { _tag: "invocation", invocation: recorded }
  if (Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof UsageError) {
    return { _tag: "usage", message: exit.cause.error.message }
  }
  throw new Error(`${JSON.stringify(args)}: neither an invocation nor a usage error: ${String(Exit.isFailure(exit) ? exit.cause : "nothing ran")}`)
}

const hex64 = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 })

/** Values as people and scripts write them, and as they should not. */
const value = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("sess-a", "alpha", "/tmp/home", "work 1", "a=b", "日本語", "é", "🦀", "a\u202eb", "x\u001b]52;c;aGk=\u0007") },
  { weight: 2, arbitrary: fc.constantFrom("list", "settings", "get", "set", "reset", "resolve", "watch", "wait", "inspect", "hold", "policy") },
  { weight: 2, arbitrary: fc.constantFrom("--json", "-x", "--name", "--claude-home", "-", "--", "-h", "--help=1") },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "=", "==") },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 4 }) }
)
const interval = fc.oneof(
  fc.constantFrom("1", "500", "007", " 5", "5 ", "0", "-1", "2147483647", "2147483648", "1e3", "5.0", "0x10", "+5"),
  fc.nat().map(String),
  value
)
const state = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("idle", "busy", "waiting", "gone") }, { weight: 1, arbitrary: value })
const revision = fc.oneof(hex64, hex64.map((hex) => hex.toUpperCase()), hex64.map((hex) => ` ${hex}`), hex64.map((hex) => hex.slice(1)), value)

/** One option as written: `--opt value` (two words) or `--opt=value` (one). */
const valued = (name: string, arbitrary: fc.Arbitrary<string>) =>
  fc.tuple(arbitrary, fc.boolean()).map(([v, joined]): ReadonlyArray<string> => (joined ? [`${name}=${v}`] : [name, v]))
const flag = (name: string) => fc.constant<ReadonlyArray<string>>([name])
const maybe = (arbitrary: fc.Arbitrary<ReadonlyArray<string>>) => fc.option(arbitrary, { nil: undefined, freq: 2 })

/** A command as the README documents it: the words naming it, then its options and arguments, each a group of words. */
const documented = fc.oneof(
  fc.record({ path: fc.constantFrom(["list"], ["inspect"], ["settings", "get"]), groups: fc.tuple(maybe(flag("--json"))) }),
  fc.record({
    path: fc.constant(["resolve"]),
    // One question mostly; sometimes both or neither (a usage error).
    groups: fc.oneof(
      { weight: 4, arbitrary: fc.tuple(value.map((id): ReadonlyArray<string> => [id]), maybe(flag("--allow-shared-name")), maybe(flag("--json"))) },
      { weight: 4, arbitrary: fc.tuple(valued("--name", value), maybe(flag("--json"))) },
      {
        weight: 1,
        arbitrary: fc.tuple(
          maybe(value.map((id): ReadonlyArray<string> => [id])),
          maybe(valued("--name", value)),
          maybe(flag("--allow-shared-name")),
          maybe(flag("--json"))
        )
      }
    )
  }),
  fc.record({
    path: fc.constant(["settings", "set"]),
    groups: fc.tuple(
      fc.oneof({ weight: 3, arbitrary: fc.constantFrom("accept", "hold", "refuse") }, { weight: 1, arbitrary: value }).map((v): ReadonlyArray<string> => [v]),
      maybe(valued("--expect-revision", revision)),
      maybe(flag("--json"))
    )
  }),
  fc.record({ path: fc.constant(["settings", "reset"]), groups: fc.tuple(maybe(valued("--expect-revision", revision)), maybe(flag("--json"))) }),
  fc.record({
    path: fc.constant(["watch"]),
    groups: fc.tuple(
      maybe(valued("--interval", interval)),
      maybe(valued("--name", value)),
      maybe(valued("--session", value)),
      maybe(valued("--status", state)),
      maybe(valued("--status", state)),
      maybe(flag("--json"))
    )
  }),
  fc.record({
    path: fc.constant(["wait"]),
    // One session and one or more states mostly; sometimes neither, or no state (usage errors).
    groups: fc.tuple(
      fc.oneof(value.map((id): ReadonlyArray<string> => [id]), valued("--name", value)),
      maybe(valued("--until", state)),
      maybe(valued("--until", state)),
      maybe(valued("--timeout", interval)),
      maybe(flag("--json"))
    )
  }),
  fc.record({
    path: fc.constant(["policy"]),
    // All sessions, one by id or by name; sometimes both (a usage error).
    groups: fc.tuple(
      maybe(value.map((id): ReadonlyArray<string> => [id])),
      maybe(valued("--name", value)),
      maybe(valued("--managed-dir", value)),
      maybe(flag("--json"))
    )
  }),
  fc.record({
    path: fc.constant(["send"]),
    // A session by id (then the message) or by name, the message or `-`; sometimes both or neither.
    groups: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(
          fc.tuple(value, value).map(([id, message]): ReadonlyArray<string> => [id, message]),
          maybe(flag("--allow-shared-name")),
          maybe(valued("--timeout", interval)),
          maybe(flag("--json"))
        )
      },
      {
        weight: 4,
        arbitrary: fc.tuple(valued("--name", value), value.map((m): ReadonlyArray<string> => [m]), maybe(flag("--allow-hold")), maybe(flag("--json")))
      },
      {
        weight: 1,
        arbitrary: fc.tuple(
          maybe(value.map((id): ReadonlyArray<string> => [id])),
          maybe(valued("--name", value)),
          maybe(value.map((m): ReadonlyArray<string> => [m])),
          maybe(flag("--allow-shared-name"))
        )
      }
    )
  })
)

/** Where each group goes: after the command (most often), or before it; `--claude-home` before or after. */
const commandLine = fc
  .record({
    command: documented,
    home: maybe(valued("--claude-home", value)),
    homeAfter: fc.boolean(),
    before: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    order: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    // One run in eight gives an option or an argument twice.
    duplicate: fc.nat(7).chain((roll) => (roll === 0 ? fc.nat() : fc.constant(undefined)))
  })
  .map(({ before, command, duplicate, home, homeAfter, order }) => {
    const groups = command.groups.filter((group): group is ReadonlyArray<string> => group !== undefined)
    const sorted = groups.map((group, at) => ({ group, key: order[at]! })).sort((a, b) => a.key - b.key).map(({ group }) => group)
    if (duplicate !== undefined && sorted.length > 0) sorted.push(sorted[duplicate % sorted.length]!)
    // Arguments stay after the command: before it, they would be taken for a subcommand.
    const early = sorted.filter((group, at) => before[at % 4] === true && group[0]!.startsWith("--"))
    const late = sorted.filter((group) => !early.includes(group))
    const root = home === undefined ? [] : [home]
    return [...(homeAfter ? [] : root), ...early, ...command.path.map((word) => [word]), ...late, ...(homeAfter ? root : [])].flat()
  })

const pool = [
  "--help",
  "-h",
  "--",
  "--bogus",
  "extra",
  "-x",
  "--json",
  "--json=yes",
  "--claude-home",
  "--name",
  "--interval",
  "--expect-revision",
  "settings",
  "list",
  "get",
  "",
  "--allow-shared-name",
  "--name=",
  "=",
  "-"
]

type Edit = { readonly _tag: "insert"; readonly at: number; readonly word: string } | {
  readonly _tag: "delete" | "swap"
  readonly at: number
  readonly other: number
}

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ _tag: fc.constant("insert" as const), at: fc.nat(), word: fc.oneof(fc.constantFrom(...pool), value) }),
  fc.record({ _tag: fc.constantFrom("delete" as const, "swap" as const), at: fc.nat(), other: fc.nat() })
)

const perturbed = (args: ReadonlyArray<string>, edits: ReadonlyArray<Edit>): ReadonlyArray<string> =>
  edits.reduce<ReadonlyArray<string>>((words, change) => {
    const next = [...words]
    const at = change.at % (next.length + 1)
    if (change._tag === "insert") next.splice(at, 0, change.word)
    else if (next.length > 0 && change._tag === "delete") next.splice(at % next.length, 1)
    else if (next.length > 0) {
      const i = at % next.length
      const j = change.other % next.length
      ;[next[i], next[j]] = [next[j]!, next[i]!]
    }
    return next
  }, args)

const argv = fc.tuple(commandLine, fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([args, edits, keep]) =>
  // Half the runs as documented; the other half perturbed.
  keep ? args : perturbed(args, edits)
)

describe("the recognizer and the full parser", () => {
  it("agree on every invocation the recognizer makes, and on --json", { timeout: 120_000 }, async () => {
    const seen = { recognized: 0, parserOnly: 0, usage: 0, help: 0 }
    await fc.assert(
      fc.asyncProperty(argv, async (args) => {
        const reading = readArgv(args)
        const recognized = recognize(args)
        // Help is the parser's to print, as is the program's own help when no command is named; neither runs anything.
        if (reading.help || (reading.path.length === 0 && reading.words.length === 0 && reading.problem === undefined)) {
          seen.help++
          expect(recognized).toBeUndefined()
          return
        }
        const outcome = await parsed(args)
        if (recognized !== undefined) {
          seen.recognized++
          expect(outcome).toEqual({ _tag: "invocation", invocation: recognized })
        } else if (outcome._tag === "invocation") {
          seen.parserOnly++
        } else {
          seen.usage++
        }
        if (outcome._tag === "invocation") expect(reading.json).toBe(outcome.invocation.json)
      }),
      { numRuns: 2000 }
    )
    // The property says something only if both sides are exercised: recognized spellings, usage errors, help.
    expect(seen.recognized).toBeGreaterThan(200)
    expect(seen.usage).toBeGreaterThan(100)
    expect(seen.help).toBeGreaterThan(10)
  })

  it("every --opt=VALUE spelling the README documents is the --opt VALUE one, on both paths", async () => {
    const rev = "ab".repeat(32)
    const pairs: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
      [["--claude-home=/tmp/h", "list"], ["--claude-home", "/tmp/h", "list"]],
      [["list", "--claude-home=/tmp/h"], ["--claude-home", "/tmp/h", "list"]],
      [["resolve", "--name=alpha", "--json"], ["resolve", "--name", "alpha", "--json"]],
      [["settings", "set", "hold", `--expect-revision=${rev}`], ["settings", "set", "hold", "--expect-revision", rev]],
      [["settings", "reset", `--expect-revision=${rev}`], ["settings", "reset", "--expect-revision", rev]],
      [["watch", "--interval=500"], ["watch", "--interval", "500"]]
    ]
    for (const [joined, spaced] of pairs) {
      const invocation = recognize(spaced)
      expect(invocation, spaced.join(" ")).toBeDefined()
      expect(recognize(joined), joined.join(" ")).toEqual(invocation)
      expect(await parsed(joined), joined.join(" ")).toEqual({ _tag: "invocation", invocation })
      expect(await parsed(spaced), spaced.join(" ")).toEqual({ _tag: "invocation", invocation })
    }
  })
})

describe("the command table the walk reads", () => {
  it("gives each option name one meaning: a flag everywhere or a value everywhere", () => {
    // An option written before its command is read by the first declaration found below.
    const kinds = new Map<string, Set<string>>()
    for (const { command } of placesOf(commandTree as CommandSpec)) {
      for (const option of command.options) {
        kinds.set(option.name, (kinds.get(option.name) ?? new Set()).add(option.value === undefined ? "flag" : "value"))
      }
    }
    expect([...kinds].filter(([, kind]) => kind.size > 1)).toEqual([])
    expect(kinds.size).toBeGreaterThan(5)
  })

  it("makes every option that takes a value, of every command in it, a usage error without one, in both spellings", () => {
    const valued = placesOf(commandTree).flatMap(({ command, path }) =>
      command.options.filter((option) => option.value !== undefined).map((option) => ({ words: path === "" ? [] : path.split(" "), option: option.name }))
    )
    // policy's --managed-dir among them: a command the table has inherits the rule.
    expect(valued.map(({ option }) => option)).toEqual(expect.arrayContaining(["--claude-home", "--name", "--expect-revision", "--interval", "--managed-dir"]))
    for (const { option, words } of valued) {
      for (const args of [[...words, option], [...words, option, "--json"], [...words, `${option}=`], [...words, option, ""]]) {
        const reading = readArgv(args)
        expect(reading.problem, args.join(" ")).toMatch(new RegExp(`^${option} needs a value`))
        expect(recognize(args), args.join(" ")).toBeUndefined()
      }
    }
  })
})
