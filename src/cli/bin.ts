#!/usr/bin/env node
/**
 * The command's entry point: it only wires the runtime. Exit codes follow the contract: a typed
 * failure has already printed itself and carries its code; a usage error is 2; anything else is
 * an unexpected failure, 1. SIGINT and SIGTERM interrupt the program, which then exits 0.
 */
import { Command } from "@effect/cli"
import { isValidationError } from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { ExitCode, UsageError } from "./Report.js"
import { rootCommand } from "./Root.js"

const cliEnvironment = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

const program = Command.run(rootCommand, { name: "claude-peers", version: "0.1.0" })(process.argv).pipe(
  Effect.provide(cliEnvironment)
)

const fiber = Effect.runFork(program)
const interrupt = () => {
  Effect.runFork(Fiber.interrupt(fiber))
}
process.once("SIGINT", interrupt)
process.once("SIGTERM", interrupt)

fiber.addObserver((exit) => {
  process.off("SIGINT", interrupt)
  process.off("SIGTERM", interrupt)
  process.exitCode = exitCodeOf(exit)
})

function exitCodeOf(exit: Exit.Exit<unknown, unknown>): number {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (error instanceof ExitCode) return error.code
    if (error instanceof UsageError) {
      process.stderr.write(`claude-peers: ${error.message}\n`)
      return 2
    }
    // @effect/cli has already printed the usage error and the help that goes with it.
    if (isValidationError(error)) return 2
  }
  process.stderr.write(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}\n`)
  return 1
}
