/**
 * The whole command line: `@effect/cli` parsing `process.argv` against the root command, with the
 * Node services the parser itself needs (file system, path, terminal). `bin.ts` loads this module
 * only for the invocations it does not run directly, because parsing and building the command tree
 * costs more start-up than listing a registry of twenty records.
 */
import * as Command from "@effect/cli/Command"
import { isValidationError } from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Effect, Layer } from "effect"
import * as HelpDoc from "@effect/cli/HelpDoc"
import { printCompletionScript, requestedCompletionShell } from "./Completions.js"
import { ExitCode } from "./Report.js"
import { rootCommand } from "./Root.js"
import { reportUsageError, runMain } from "./RunMain.js"

const cliEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

const ansi = new RegExp(String.raw`\u001b\[[0-9;]*m`, "g")

/** The words after the node binary and the script. */
const argsOf = (argv: ReadonlyArray<string>) => argv.slice(2)

/** The subcommand, after the root's own `--claude-home DIR` or `--claude-home=DIR`. */
const subcommandOf = (args: ReadonlyArray<string>): string | undefined => {
  let i = 0
  while (i < args.length && args[i]!.startsWith("--claude-home")) i += args[i] === "--claude-home" ? 2 : 1
  return args[i]
}

/**
 * Runs the command line. A usage error has already been printed with its help by @effect/cli; with
 * `--json` it is also printed as the contract's JSON error on stdout. It ends with exit code 2.
 */
export const runCommandLine = (argv: ReadonlyArray<string>) =>
  Command.run(rootCommand, { name: "claude-peers", version: "0.1.0" })(argv).pipe(
    Effect.catchIf(isValidationError, (error) =>
      Effect.sync(() =>
        reportUsageError(
          "error" in error ? HelpDoc.toAnsiText(error.error).replace(ansi, "").trim() : "usage error",
          argsOf(argv).includes("--json")
        )
      ).pipe(Effect.zipRight(Effect.fail(new ExitCode({ code: 2 }))))
    ),
    Effect.provide(cliEnvironment)
  )

/** Parses `argv` and runs the command it names, to the process's exit code. */
export const main = (argv: ReadonlyArray<string>): void => {
  // @effect/cli's own completion scripts do not complete this program: see Completions.ts.
  const shell = requestedCompletionShell(argsOf(argv))
  runMain(shell === undefined ? runCommandLine(argv) : printCompletionScript(shell), {
    json: argsOf(argv).includes("--json"),
    interruptIsSuccess: subcommandOf(argsOf(argv)) === "watch"
  })
}
