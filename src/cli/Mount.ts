/**
 * `claude-peers` as a subcommand of a host's own command line (`Command.withSubcommands([command])`),
 * keeping the contract:
 * - It runs on the services the host provides (`layerNode(…)` in production, `layerMemory(world)` in
 *   the host's tests). `--claude-home DIR` (and `policy --managed-dir DIR`) re-point the Claude home
 *   over the host's own ports.
 * - It reads its options as the standalone command does: each level of the tree takes its words as
 *   they are, and the whole line, put back together in the order typed, goes through the same walk
 *   (`Argv.ts`) and the same `@effect/cli` tree (`Root.ts`). So `list --claude-home DIR --json` is
 *   accepted, and an unknown option is a usage error. `--help`, `--version`, `--completions`,
 *   `--wizard` and `--log-level LEVEL` before the command's words are the host's: its parser answers
 *   them before the command runs, with the table's help; what it leaves to the command is a usage error.
 * - It writes through the host's `Console`, and installs no process-wide listener: Ctrl-C is the
 *   host's, which interrupts the command (a settings update then lets its lock and temporary file go).
 * - It ends with an `ExitCode` failure the host maps to its exit: the contract's code, after the
 *   sentence on stderr (`Console.error`) or, with `--json`, the JSON error on stdout (`Console.log`).
 *   Output is known lost only where the host's `Console` reports it through `OutputLoss` (then 7).
 */
import * as Args from "@effect/cli/Args"
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { layerServices, type Services } from "../layers/Services.js"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as ClaudeHomes from "../services/ClaudeHomes.js"
import { Files } from "../services/Files.js"
import { ProcessProbe } from "../services/ProcessProbe.js"
import { Relay } from "../services/Relay.js"
import { Timing } from "../services/Timing.js"
import { readArgv } from "./Argv.js"
import { runArguments } from "./CommandLine.js"
import { type CommandSpec, commandTable } from "./CommandTable.js"
import { handle } from "./Handlers.js"
import type { Invocation } from "./Invocation.js"
import type { OutputFailed } from "./Output.js"
import { printError } from "./Output.js"
import type { UsageError } from "./Report.js"
import { ExitCode, exitCodes, reportUsageError } from "./Report.js"
import { Runner } from "./Root.js"
import { terminalSafe } from "./Text.js"

/**
 * An invocation over the host's services; with `--claude-home` or `--managed-dir`, over a Claude
 * home of its own on the host's ports (and the host's timing).
 */
const hostRunner = (invocation: Invocation): Effect.Effect<void, ExitCode | OutputFailed, Services> => {
  const managed = invocation.command._tag === "policy" ? invocation.command.managedDirectory : undefined
  if (invocation.claudeHome === undefined && managed === undefined && invocation.claudeHomes === undefined) return handle(invocation)
  return Effect.gen(function*() {
    const home = yield* ClaudeHome.ClaudeHome
    const files = yield* Files
    // By real path, as the standalone command tells the default home: a link to the host's home is that home.
    const realOf = (dir: string) => Effect.orElseSucceed(files.realPath(dir), () => path.resolve(dir))
    const sendersHome = home.sendersHome && (invocation.claudeHome === undefined || (yield* realOf(invocation.claudeHome)) === (yield* realOf(home.root)))
    const ports = Context.make(Files, files).pipe(
      Context.add(ProcessProbe, yield* ProcessProbe),
      Context.add(Relay, yield* Relay),
      Context.add(
        ClaudeHome.ClaudeHome,
        ClaudeHome.make(invocation.claudeHome ?? home.root, {
          managedSettingsDirectory: managed ?? home.managedSettingsDirectory,
          // The host's senders run in the host's home, if in any: a name is an address only there.
          sendersHome
        })
      )
    )
    const portsLayer = Layer.succeedContext(ports)
    // Several homes: the host's home is the default one `--all-homes` starts from.
    const homes = invocation.claudeHomes === undefined ? undefined : Layer.provide(
      Layer.effect(
        ClaudeHomes.ClaudeHomes,
        ClaudeHomes.make(
          { roots: [invocation.claudeHome ?? home.root, ...invocation.claudeHomes.slice(1)], all: invocation.allHomes === true },
          { managedSettingsDirectory: managed ?? home.managedSettingsDirectory, standard: [home.root] }
        )
      ),
      portsLayer
    )
    return yield* handle(invocation).pipe(Effect.provide(layerServices(portsLayer, { timing: yield* Timing }, homes)))
  })
}

/** The words of one command line, run as the standalone command runs them; every failure an `ExitCode`. */
const runWords = (words: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    const reading = readArgv(words)
    return runArguments(reading).pipe(
      Effect.provideServiceEffect(
        Runner,
        Effect.map(Effect.context<Services>(), (services) => (invocation: Invocation) => Effect.provide(hostRunner(invocation), services))
      ),
      Effect.catchTags({
        UsageError: (error: UsageError) => reportUsageError(error.message, reading.json),
        OutputFailed: (error: OutputFailed) =>
          Effect.zipRight(printError(`claude-peers: ${terminalSafe(error.sentence)}`), Effect.fail(new ExitCode({ code: exitCodes.io })))
      })
    )
  })

/**
 * What a level's words may be, as the host's parser shows them under its `<ARGS>...`: the table's
 * arguments and options. The command's own description stays one paragraph, which is what the
 * host's list of commands shows beside each name.
 */
const wordsOf = (spec: CommandSpec) => {
  const options = spec.options.filter((option) => option.builtIn !== true)
  const terms = [
    ...(spec.arguments ?? []).map((argument) => `<${argument.name}> (${argument.description})`),
    ...options.map((option) => `${option.value === undefined ? option.name : `${option.name} ${option.value.placeholder}`} (${option.description})`)
  ]
  const description = terms.length === 0 ? "none (a command below)" : `in any order: ${terms.join("; ")}`
  return Args.text({ name: "ARGS" }).pipe(Args.withDescription(`the command's options and arguments, ${description}`), Args.repeated)
}

type Words = { readonly words: ReadonlyArray<string> }
/** A level's handler also reads the levels above it, which `withSubcommands` provides. */
type Mounted = Command.Command<string, Services | CliApp.CliApp.Environment, ExitCode, Words>

/**
 * One level of the tree. Its handler (the deepest level's runs) puts the line back together from the
 * words each level above took, its own name, and its own words, in the order they were typed.
 */
const levelOf = (spec: CommandSpec, above: ReadonlyArray<{ readonly name: string; readonly command: Mounted }>): Mounted => {
  // Every option and argument of a level, as typed: the standalone's walk decides what they are.
  const self: Mounted = Command.make(spec.name, { words: wordsOf(spec) }, ({ words }) =>
    Effect.gen(function*() {
      let line: ReadonlyArray<string> = []
      for (const [at, level] of above.entries()) {
        line = [...line, ...(at > 0 ? [level.name] : []), ...(yield* level.command).words]
      }
      return yield* runWords([...line, ...(above.length > 0 ? [spec.name] : []), ...words])
    })).pipe(Command.withDescription(spec.description)) as unknown as Mounted
  const chain = [...above, { name: spec.name, command: self }]
  const subcommands = spec.subcommands
  return subcommands === undefined
    ? self
    : (Command.withSubcommands(self, subcommands.map((sub) => levelOf(sub, chain)) as [Mounted]) as unknown as Mounted)
}

/** The mounted command: every `claude-peers` command line, on the host's services. */
export const command = levelOf(commandTable, [])
