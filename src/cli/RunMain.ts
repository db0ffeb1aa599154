/**
 * Runs the command's program and turns its end into the process's exit code, as the contract
 * says: a typed failure has already printed itself and carries its code; a usage error is 2;
 * anything else is an unexpected failure, 1. SIGINT and SIGTERM interrupt the program, which then
 * exits 0.
 */
import { Cause, Effect, Exit, Fiber } from "effect"
import { ExitCode, UsageError } from "./Report.js"

export const runMain = (program: Effect.Effect<unknown, unknown>): void => {
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
}

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
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
  }
  process.stderr.write(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}\n`)
  return 1
}
