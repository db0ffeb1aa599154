/**
 * The whole command line: the words placed by `Argv.ts`, then parsed by `@effect/cli` against the
 * command tree, with the Node services the parser itself needs (file system, path, terminal).
 * `bin.ts` loads this module only for the spellings `Recognize.ts` leaves to it, because building
 * the command tree costs more start-up than answering a recognized command.
 */
import * as Command from "@effect/cli/Command"
import { isValidationError } from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { arrangedArgv, type Reading, readArgv } from "./Argv.js"
import { Runner } from "./Base.js"
import { printCompletionScript, requestedCompletionShell } from "./Completions.js"
import { usageMessage, withParserConsole } from "./ParserOutput.js"
import { UsageError } from "./Report.js"
import { commandTree } from "./Root.js"
import { runInvocation } from "./Run.js"
import { runMain } from "./RunMain.js"

/** What `@effect/cli` itself needs to run (its built-in options read files and the terminal). */
export const parserEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

/** `@effect/cli` on words in the order it takes them; its usage errors become the command's. */
const parse = (words: ReadonlyArray<string>) =>
  withParserConsole((commandConsole) =>
    Command.run(commandTree, { name: "claude-peers", version: "0.1.0" })(["node", "claude-peers", ...words]).pipe(
      Effect.updateService(Runner, (run) => (invocation) => Console.withConsole(run(invocation), commandConsole)),
      Effect.catchIf(isValidationError, (error) =>
        Effect.fail(new UsageError({ message: "error" in error ? usageMessage(error.error) : "usage error" })))
    )
  )

/**
 * What a command line asks for, done: a completion script, help for the command its words lead
 * to, or the command, run by the `Runner` in context. Usage errors are failures, for whoever runs
 * this to report (with `--json`, as JSON too: `reading.json`).
 */
export const runArguments = (reading: Reading) => {
  const shell = requestedCompletionShell(reading)
  if (shell !== undefined) return printCompletionScript(shell)
  if (reading.help) return parse([...reading.path, "--help"])
  if (reading.problem !== undefined) return Effect.fail(new UsageError({ message: reading.problem }))
  return parse(arrangedArgv(reading))
}

/** Parses `argv` (as `process.argv`: node, the script, then the arguments) and runs the command it names, to the process's exit code. */
export const main = (argv: ReadonlyArray<string>): void => {
  const reading = readArgv(argv.slice(2))
  runMain(runArguments(reading).pipe(Effect.provideService(Runner, runInvocation), Effect.provide(parserEnvironment)), { json: reading.json })
}
