#!/usr/bin/env node
/**
 * Stand-in for `bin/claude-peers.js` while `src/cli/Root.ts` does not list `settings` yet: the same
 * root option and runtime wiring as `src/cli/Root.ts` and `src/cli/bin.ts` (typed failures carry
 * their exit code, usage errors are 2, anything else 1). It imports the TypeScript sources, so it
 * runs only as the bundle `test/Settings.integration.test.ts` makes of it with esbuild.
 */
import { Command, Options } from "@effect/cli"
import { isValidationError } from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Cause, Effect, Exit, Layer } from "effect"
import { ExitCode, UsageError } from "../../src/cli/Report.js"
import { settingsCommand } from "../../src/cli/settings.js"
import { layerNode } from "../../src/layers/Node.js"

const claudeHome = Options.text("claude-home").pipe(Options.optional)
const root = Command.make("claude-peers", { claudeHome }).pipe(
  Command.withSubcommands([settingsCommand]),
  Command.provide(({ claudeHome }) => layerNode(claudeHome))
)

const program = Command.run(root, { name: "claude-peers", version: "0.1.0" })(process.argv).pipe(
  Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
)
Effect.runFork(program).addObserver((exit) => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return void (process.exitCode = 0)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && failure.value instanceof ExitCode) return void (process.exitCode = failure.value.code)
  if (failure._tag === "Some" && failure.value instanceof UsageError) {
    process.stderr.write(`claude-peers: ${failure.value.message}\n`)
    return void (process.exitCode = 2)
  }
  if (failure._tag === "Some" && isValidationError(failure.value)) return void (process.exitCode = 2)
  process.stderr.write(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}\n`)
  process.exitCode = 1
})
