/**
 * The standalone command's full command line (`src/cli/CommandLine.ts`) with the Node services the
 * parser itself needs (file system, path, terminal). `bin.ts` loads this module only for the
 * spellings `Recognize.ts` leaves to it, because building the command tree costs more start-up than
 * answering a recognized command.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readArgv } from "../../src/cli/Argv.js"
import { runArguments } from "../../src/cli/CommandLine.js"
import { Runner } from "../../src/cli/Root.js"
import { runInvocation } from "./Run.js"
import { runMain } from "./RunMain.js"

/** What `@effect/cli` itself needs to run (its built-in options read files and the terminal). */
export const parserEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

/** Parses `argv` (as `process.argv`: node, the script, then the arguments) and runs the command it names, to the process's exit code. */
export const main = (argv: ReadonlyArray<string>): void => {
  const reading = readArgv(argv.slice(2))
  runMain(runArguments(reading).pipe(Effect.provideService(Runner, runInvocation), Effect.provide(parserEnvironment)), { json: reading.json })
}
