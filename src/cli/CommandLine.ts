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
import { ExitCode } from "./Report.js"
import { rootCommand } from "./Root.js"
import { runMain } from "./RunMain.js"

const cliEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

/** Runs the command line; a usage error, already printed with its help by @effect/cli, ends with exit code 2. */
export const runCommandLine = (argv: ReadonlyArray<string>) =>
  Command.run(rootCommand, { name: "claude-peers", version: "0.1.0" })(argv).pipe(
    Effect.catchIf(isValidationError, () => Effect.fail(new ExitCode({ code: 2 }))),
    Effect.provide(cliEnvironment)
  )

/** Parses `argv` and runs the command it names, to the process's exit code. */
export const main = (argv: ReadonlyArray<string>): void => runMain(runCommandLine(argv))
