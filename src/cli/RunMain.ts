/**
 * Runs the command's program and turns its end into the process's exit code, as the contract
 * says: a typed failure has already printed itself and carries its code; a usage error is 2;
 * anything else is an unexpected failure, 1.
 *
 * SIGINT and SIGTERM interrupt the program. For `watch`, which runs until interrupted, that is its
 * normal end: exit 0. For any other command it is not success (an update cut short must not look
 * done to a script): the shell's 128 + signal number.
 */
import { Cause, Effect, Exit, Fiber } from "effect"
import { ExitCode, UsageError } from "./Report.js"

export interface RunOptions {
  /** `--json` was asked for: a usage error is also printed as the contract's JSON error, on stdout. */
  readonly json?: boolean
  /** Interruption by a signal is the command's normal end (`watch`). */
  readonly interruptIsSuccess?: boolean
  /**
   * Turn SIGINT and SIGTERM into an interruption (default). A command with nothing to clean up
   * whose output is one blocking write (plain `list`) keeps the default action instead: a handler
   * cannot run while the write blocks on a stalled reader, and the signal would be lost.
   */
  readonly handleSignals?: boolean
}

const signalNumbers = { SIGINT: 2, SIGTERM: 15 } as const

export const runMain = (program: Effect.Effect<unknown, unknown>, options: RunOptions = {}): void => {
  const fiber = Effect.runFork(program)
  if (options.handleSignals === false) {
    fiber.addObserver((exit) => {
      process.exitCode = exitCodeOf(exit, options, undefined)
    })
    return
  }
  let signal: keyof typeof signalNumbers | undefined
  const onSignal = (name: keyof typeof signalNumbers) => () => {
    signal ??= name
    Effect.runFork(Fiber.interrupt(fiber))
  }
  const onInt = onSignal("SIGINT")
  const onTerm = onSignal("SIGTERM")
  process.once("SIGINT", onInt)
  process.once("SIGTERM", onTerm)
  fiber.addObserver((exit) => {
    process.off("SIGINT", onInt)
    process.off("SIGTERM", onTerm)
    process.exitCode = exitCodeOf(exit, options, signal)
  })
}

/** A usage error's message, on stderr, and with `--json` also as `{"error":{"reason":"usage",…}}` on stdout. */
export const reportUsageError = (message: string, json: boolean): void => {
  if (json) process.stdout.write(`${JSON.stringify({ error: { reason: "usage", message } })}\n`)
}

const exitCodeOf = (
  exit: Exit.Exit<unknown, unknown>,
  options: RunOptions,
  signal: keyof typeof signalNumbers | undefined
): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) {
    return options.interruptIsSuccess === true ? 0 : 128 + signalNumbers[signal ?? "SIGINT"]
  }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (error instanceof ExitCode) return error.code
    if (error instanceof UsageError) {
      process.stderr.write(`claude-peers: ${error.message}\n`)
      reportUsageError(error.message, options.json === true)
      return 2
    }
  }
  process.stderr.write(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}\n`)
  return 1
}
