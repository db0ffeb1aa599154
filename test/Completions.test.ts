/**
 * `claude-peers --completions SHELL`, as the built command prints it, loaded into the real bash, zsh
 * and fish: each case is one rule of `src/cli/Completions.ts`, checked in every shell at once, so
 * that a difference names the shell it is in. A shell that is not installed is skipped, and says so.
 */
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as Usage from "@effect/cli/Usage"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { commandTree, placesOf } from "../src/cli/CompletionTree.js"
import { commandTree as rootCommand } from "../src/cli/Root.js"
import { runCli } from "./support/cli.js"
import { type CompletionRun, offered, type Shell } from "./support/completion.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-completions-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

// The shells run here: one directory and one file, so that "directories only" can be told apart.
const cwd = path.join(tmp, "work")
fs.mkdirSync(path.join(cwd, "homes"), { recursive: true })
fs.writeFileSync(path.join(cwd, "notes.txt"), "")
const home = path.join(tmp, "home")
fs.mkdirSync(home)

const scriptOf = (shell: string): string => {
  const run = runCli(["--completions", shell])
  if (run.status !== 0) throw new Error(`--completions ${shell} exited ${run.status}: ${run.stderr}`)
  return run.stdout
}

const isInstalled = (shell: Shell) => spawnSync(shell, ["-c", "exit 0"]).status === 0

const shells: ReadonlyArray<Shell> = ["bash", "zsh", "fish"]
const installed = shells.filter(isInstalled)

const setups = Object.fromEntries(installed.map((shell): [Shell, CompletionRun] => {
  const script = path.join(tmp, `claude-peers.${shell}`)
  fs.writeFileSync(script, scriptOf(shell))
  return [shell, { script, cwd, home, zshDump: path.join(tmp, "zcompdump") }]
}))

/** What each installed shell offers after `claude-peers WORDS…`; the last word is the one being completed. */
const offeredAfter = (...words: ReadonlyArray<string>) => Object.fromEntries(installed.map((shell) => [shell, offered(shell, setups[shell]!, words)]))

const inEveryShell = (...candidates: ReadonlyArray<string>) => Object.fromEntries(installed.map((shell) => [shell, [...candidates].sort()]))

const subcommands = ["inspect", "list", "policy", "resolve", "send", "settings", "wait", "watch"]

describe("claude-peers --completions", { timeout: 60_000 }, () => {
  for (const shell of shells.filter((s) => !installed.includes(s))) it.skip(`${shell} is not installed`, () => {})

  it("the first word, also after --claude-home DIR, is a subcommand", () => {
    expect(offeredAfter("--claude-home", "homes", "")).toEqual(inEveryShell(...subcommands))
    expect(offeredAfter("")).toEqual(inEveryShell(...subcommands))
  })

  it("after settings: get, set and reset, matched against what is typed", () => {
    expect(offeredAfter("settings", "")).toEqual(inEveryShell("get", "reset", "set"))
    expect(offeredAfter("settings", "s")).toEqual(inEveryShell("set"))
  })

  it("after settings set: accept, hold and refuse; once one is given, set's options", () => {
    expect(offeredAfter("settings", "set", "")).toEqual(inEveryShell("accept", "hold", "refuse"))
    expect(offeredAfter("settings", "set", "hold", "")).toEqual(inEveryShell("--expect-revision", "--help", "--json", "--through-link"))
  })

  it("a word that starts with -: the options of the command reached, past the root's --claude-home", () => {
    expect(offeredAfter("--")).toEqual(inEveryShell("--all-homes", "--claude-home", "--completions", "--help", "--version"))
    expect(offeredAfter("resolve", "--")).toEqual(inEveryShell("--allow-shared-name", "--help", "--json", "--name"))
    expect(offeredAfter("--claude-home", "homes", "list", "--")).toEqual(inEveryShell("--help", "--json"))
    expect(offeredAfter("--claude-home=homes", "list", "--")).toEqual(inEveryShell("--help", "--json"))
    expect(offeredAfter("watch", "--interval", "500", "--")).toEqual(inEveryShell("--help", "--interval", "--json", "--name", "--session", "--status"))
    expect(offeredAfter("wait", "--")).toEqual(inEveryShell("--help", "--json", "--name", "--timeout", "--until"))
    expect(offeredAfter("settings", "reset", "--")).toEqual(inEveryShell("--expect-revision", "--help", "--json", "--through-link"))
    expect(offeredAfter("policy", "--")).toEqual(inEveryShell("--allow-shared-name", "--help", "--json", "--managed-dir", "--name", "--sender-mode"))
  })

  it("after --claude-home, in either spelling, and policy's --managed-dir: directories, not files or subcommands", () => {
    expect(offeredAfter("--claude-home", "")).toEqual(inEveryShell("homes"))
    expect(offeredAfter("--claude-home=")).toEqual(inEveryShell("homes"))
    expect(offeredAfter("--claude-home=h")).toEqual(inEveryShell("homes"))
    expect(offeredAfter("policy", "--managed-dir", "")).toEqual(inEveryShell("homes"))
  })

  it("after an option that takes free text: nothing, not file names", () => {
    expect(offeredAfter("resolve", "--name", "")).toEqual(inEveryShell())
    expect(offeredAfter("settings", "set", "--expect-revision", "")).toEqual(inEveryShell())
    expect(offeredAfter("watch", "--interval", "")).toEqual(inEveryShell())
  })

  it("an option's value spelled like a subcommand is a value", () => {
    expect(offeredAfter("resolve", "--name", "settings", "")).toEqual(inEveryShell("--allow-shared-name", "--help", "--json", "--name"))
    expect(offeredAfter("--claude-home", "list", "")).toEqual(inEveryShell(...subcommands))
  })

  it("after --completions: the shells it writes for", () => {
    expect(offeredAfter("--completions", "")).toEqual(inEveryShell("bash", "fish", "sh", "zsh"))
  })

  it("after wait --until and watch --status: the states each takes, also after one was given", () => {
    expect(offeredAfter("wait", "--until", "")).toEqual(inEveryShell("busy", "gone", "idle", "waiting"))
    expect(offeredAfter("wait", "--until", "idle", "--until", "")).toEqual(inEveryShell("busy", "gone", "idle", "waiting"))
    expect(offeredAfter("watch", "--status", "")).toEqual(inEveryShell("busy", "idle", "waiting"))
  })

  it("every spelling of --completions bash prints one script, which bash also runs in POSIX mode (as sh)", () => {
    const bash = scriptOf("bash")
    expect([scriptOf("sh"), runCli(["--completions=bash"]).stdout, runCli(["list", "--completions", "bash"]).stdout]).toEqual([bash, bash, bash])
    const posix = spawnSync("bash", ["--posix", "--norc", "-c", "source \"$1\" && complete -p claude-peers", "bash", path.join(tmp, "claude-peers.bash")], {
      encoding: "utf8"
    })
    expect(posix.stderr).toBe("")
    expect(posix.status).toBe(0)
  })
})

/** @effect/cli's descriptor tree, which it keeps internal: read here only, to check the completion tree against it. */
interface DescriptorNode {
  readonly _tag: "Standard" | "GetUserInput" | "Map" | "Subcommands"
  readonly name?: string
  readonly command?: DescriptorNode
  readonly parent?: DescriptorNode
  readonly children?: ReadonlyArray<DescriptorNode>
}

const unwrapped = (node: DescriptorNode): DescriptorNode => (node._tag === "Map" ? unwrapped(node.command!) : node)
const commandOf = (node: DescriptorNode): DescriptorNode => {
  const inner = unwrapped(node)
  return inner._tag === "Subcommands" ? commandOf(inner.parent!) : inner
}
const childrenOf = (node: DescriptorNode) => {
  const inner = unwrapped(node)
  return inner._tag === "Subcommands" ? inner.children! : []
}

const namedIn = (usage: Usage.Usage): ReadonlyArray<Usage.Named> => {
  switch (usage._tag) {
    case "Named":
      return [usage]
    case "Optional":
    case "Repeated":
      return namedIn(usage.usage)
    case "Concat":
    case "Alternation":
      return [...namedIn(usage.left), ...namedIn(usage.right)]
    case "Empty":
    case "Mixed":
      return []
  }
}

/** An argument with fixed values, which @effect/cli spells `accept | hold | refuse` (other arguments are free text). */
const isChoice = (named: Usage.Named): named is Usage.Named & { readonly acceptedValues: { readonly _tag: "Some"; readonly value: string } } =>
  named.acceptedValues._tag === "Some" && named.acceptedValues.value.includes(" | ")

/** What the parser accepts, one line per fact: `settings set: --expect-revision VALUE`, `settings: set`, `settings set: argument accept | hold | refuse`. */
const parserFacts = (node: DescriptorNode, at: string): ReadonlyArray<string> => {
  const command = commandOf(node)
  const named = namedIn(Descriptor.getUsage(command as unknown as Descriptor.Command<unknown>)).slice(1)
  const facts = named.flatMap((n) =>
    n.names.flatMap((name) =>
      name.startsWith("-")
        ? [`${at}: ${name}${n.acceptedValues._tag === "Some" ? " VALUE" : ""}`]
        : isChoice(n)
        ? [`${at}: argument ${n.acceptedValues.value}`]
        : []
    )
  )
  return [
    ...facts,
    ...childrenOf(node).flatMap((child) => {
      const name = commandOf(child).name!
      return [`${at}: ${name}`, ...parserFacts(child, at === "" ? name : `${at} ${name}`)]
    })
  ]
}

const completionFacts = (): ReadonlyArray<string> =>
  placesOf(commandTree).flatMap(({ command, path: at }) => [
    ...command.options.map((option) => `${at}: ${option.name}${option.value === undefined ? "" : " VALUE"}`),
    ...(command.subcommands ?? []).map((sub) => `${at}: ${sub.name}`),
    ...(command.argumentValues === undefined ? [] : [`${at}: argument ${command.argumentValues.join(" | ")}`])
  ])

describe("the completion tree", () => {
  it("holds every command, option and argument value the parser accepts, flags as flags", () => {
    const completed = new Set(completionFacts())
    const parsed = parserFacts(rootCommand.descriptor as unknown as DescriptorNode, "")
    expect(parsed.length).toBeGreaterThan(10)
    expect(parsed.filter((fact) => !completed.has(fact))).toEqual([])
  })
})
