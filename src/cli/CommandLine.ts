/**
 * The whole command line: `@effect/cli` parsing the arguments against the root command, with the
 * Node services the parser itself needs (file system, path, terminal). `bin.ts` loads this module only
 * for the spellings `Recognize.ts` leaves to it, because building the command tree costs more
 * start-up than answering a recognized command.
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import { isValidationError } from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { printCompletionScript, requestedCompletionShell } from "./Completions.js"
import { rootCommand } from "./Root.js"
import { ExitCode, exitCodes } from "./Report.js"
import { reportUsageError, runMain } from "./RunMain.js"

const cliEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

const ansi = new RegExp(String.raw`\u001b\[[0-9;]*m`, "g")

/**
 * Runs the command line (`argv` as `process.argv`: node, the script, then the arguments). A usage
 * error has already been printed with its help by the parser; it is said once more as the contract's
 * usage error (with `--json`, as JSON on stdout: the parser knows nothing of `--json` when it fails,
 * so its presence among the arguments is what asks for it).
 */
export const runCommandLine = (argv: ReadonlyArray<string>) =>
  Command.run(rootCommand, { name: "claude-peers", version: "0.1.0" })(argv).pipe(
    Effect.catchIf(isValidationError, (error) =>
      Effect.sync(() =>
        reportUsageError(
          "error" in error ? HelpDoc.toAnsiText(error.error).replace(ansi, "").trim() : "usage error",
          argv.slice(2).includes("--json")
        )
      ).pipe(Effect.zipRight(Effect.fail(new ExitCode({ code: exitCodes.usage }))))),
    Effect.provide(cliEnvironment)
  )

/** Parses `argv` and runs the command it names, to the process's exit code. */
export const main = (argv: ReadonlyArray<string>): void => {
  // @effect/cli's own completion scripts do not complete this program: see Completions.ts.
  const shell = requestedCompletionShell(argv.slice(2))
  runMain(shell === undefined ? runCommandLine(argv) : printCompletionScript(shell), { json: argv.slice(2).includes("--json") })
}
