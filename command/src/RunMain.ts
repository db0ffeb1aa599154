/**
 * Runs the command's program and turns its end into the process's exit code, as the contract says:
 * a typed failure has already printed itself and carries its code; a usage error is 2; output that
 * could not be written is 7; an interruption by a signal is 128 + its number (0 for `watch`, which a
 * signal ends, at once even behind a reader that stopped reading); anything else is an unexpected
 * failure, 1. Every line goes through the fd-1
 * `Console` (`Stdout.ts`), which reports what it lost.
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { LineInPieces, OutputFailed, OutputLoss } from "../../src/cli/Output.js"
import { ExitCode, reportUsageError, UsageError } from "../../src/cli/Report.js"
import { terminalSafe } from "../../src/cli/Text.js"
import { interruptedExitCode, setMainFiber } from "./Signals.js"
import { hasPendingOutput, outputLoss, stdoutConsole, writeError, writePieces } from "./Stdout.js"

/** The program with the command's console and what it loses. */
const onStdout = <A, E>(program: Effect.Effect<A, E>) =>
  program.pipe(Console.withConsole(stdoutConsole), Effect.provideService(OutputLoss, outputLoss), Effect.provideService(LineInPieces, writePieces))

/** The exit code of a failure that could not be reported as the contract says. */
const unreported = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) return interruptedExitCode() ?? 130
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (error instanceof ExitCode) return error.code
    if (error instanceof OutputFailed) {
      writeError(`claude-peers: ${terminalSafe(error.sentence)}`)
      return 7
    }
  }
  writeError(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}`)
  return 1
}

/** A usage error reported (its JSON forked: a full pipe hands the line to `process.stdout`, which writes it later). */
const reported = (json: boolean) => <A, E>(program: Effect.Effect<A, E>) =>
  Effect.catchIf(program, (error): error is E & UsageError => error instanceof UsageError, (error) => reportUsageError(error.message, json))

export const runMain = (program: Effect.Effect<unknown, unknown>, options: { readonly json: boolean }): void => {
  const fiber = Effect.runFork(onStdout(reported(options.json)(program)))
  setMainFiber(fiber)
  fiber.addObserver((exit) => {
    process.exitCode = unreported(exit)
    // A signal ends the process even when a line still waits on a reader that stopped reading (the
    // pending write would keep it alive): the line gets a moment to go, no more.
    if (interruptedExitCode() !== undefined && hasPendingOutput()) setTimeout(() => process.exit(), 20).unref()
  })
}
