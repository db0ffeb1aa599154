/**
 * The whole command line: the words placed by `Argv.ts`, then parsed by `@effect/cli` against the
 * command tree (`Root.ts`). The standalone command comes here for what its fast path leaves (help,
 * mistakes, unusual spellings), a mounted command for every command line.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import { isValidationError } from "@effect/cli/ValidationError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { arrangedArgv, type Reading } from "./Argv.js"
import { commandTable } from "./CommandTable.js"
import { printCompletionScript, requestedCompletionShell } from "./Completions.js"
import { completionShells } from "./CompletionTree.js"
import { printLine } from "./Output.js"
import { usageMessage, withParserConsole } from "./ParserOutput.js"
import { UsageError } from "./Report.js"
import { commandTree, Runner } from "./Root.js"
import { quotedWord } from "./Text.js"

/** The version `--version` prints. */
export const version = "0.1.0"

/** The program's help names the parser's options that the command keeps, since it lists none of the parser's. */
const withBuiltIns = Command.withDescription(
  commandTree,
  `${commandTable.description} Also: --help (-h) after any command, --version, --completions bash|fish|sh|zsh.`
)

/** `@effect/cli` on words in the order it takes them; its usage errors become the command's. */
const parse = (words: ReadonlyArray<string>) =>
  withParserConsole((commandConsole) =>
    Command.run(withBuiltIns, { name: "claude-peers", version })(["node", "claude-peers", ...words]).pipe(
      Effect.updateService(Runner, (run) => (invocation) => Console.withConsole(run(invocation), commandConsole)),
      Effect.catchIf(isValidationError, (error) => Effect.fail(new UsageError({ message: "error" in error ? usageMessage(error.error) : "usage error" }))),
      // The parser's own options (`--log-level`, `--wizard`) are refused here, so help does not list
      // them; the ones kept (`--help`, `--version`, `--completions`) are in the program's description.
      Effect.provide(CliConfig.layer({ showBuiltIns: false }))
    )
  )

/**
 * What a command line asks for, done: a completion script, help for the command its words lead
 * to, or the command, run by the `Runner` in context. Usage errors are failures, for whoever runs
 * this to report (with `--json`, as JSON too: `reading.json`).
 */
export const runArguments = (reading: Reading) => {
  if (reading.help) return parse([...reading.path, "--help"])
  if (reading.problem !== undefined) return Effect.fail(new UsageError({ message: reading.problem }))
  // Built-ins answered here, wherever they stand: `@effect/cli` takes them only before the options
  // the walk places ahead of them (`--claude-home DIR --version` read as a bad subcommand).
  const completions = requestedCompletionShell(reading)
  if (completions !== undefined) {
    return completions.shell !== undefined
      ? printCompletionScript(completions.shell)
      : Effect.fail(new UsageError({ message: `--completions takes ${completionShells.join(", ")}, not ${quotedWord(completions.value)}` }))
  }
  if (reading.options.some((given) => given.some((option) => option.name === "--version"))) return printLine(version)
  return parse(arrangedArgv(reading))
}
