/**
 * Runs the command's program and turns its end into the process's exit code, as the contract says:
 * a typed failure has already printed itself and carries its code; a usage error is 2; output that
 * could not be written is 7; an interruption by a signal is 128 + its number; anything else is an
 * unexpected failure, 1.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { OutputFailed, printError, printLine } from "./Output.js"
import { ExitCode, errorJson, exitCodes, UsageError } from "./Report.js"
import { interruptedExitCode, setMainFiber } from "./Signals.js"
import { terminalSafe, terminalSafeLines } from "./Text.js"

/**
 * A usage error: its sentence on stderr, and with `--json` also the contract's JSON error on stdout.
 * Both say the same terminal-safe sentence: it may quote an argument, which is whatever was typed,
 * and JSON leaves C1 controls and bidirectional overrides as they are.
 */
export const reportUsageError = (message: string, json: boolean): void => {
  const sentence = terminalSafeLines(message)
  printError(`claude-peers: ${sentence}`)
  // Forked, not run synchronously: a full pipe hands the line to `process.stdout`, which writes it
  // later, and the process stays until it has.
  if (json) Effect.runFork(Effect.ignore(printLine(errorJson("usage", sentence))))
}

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>, json: boolean): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.isInterruptedOnly(exit.cause)) return interruptedExitCode() ?? 130
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (error instanceof ExitCode) return error.code
    if (error instanceof UsageError) {
      reportUsageError(error.message, json)
      return exitCodes.usage
    }
    if (error instanceof OutputFailed) {
      printError(`claude-peers: ${terminalSafe(error.sentence)}`)
      return exitCodes.io
    }
  }
  printError(`claude-peers: unexpected failure: ${Cause.pretty(exit.cause)}`)
  return 1
}

/**
 * What the loader (`bin/claude-peers.js`) asks to be told when the command has ended, so that it can
 * exit at once rather than after the event loop's next turn; defined only where the loader runs the
 * bundle (a library user's program, or the loader without a bundle, has none).
 */
const ended = (): void => (globalThis as { readonly [key: symbol]: (() => void) | undefined })[Symbol.for("claude-peers/ended")]?.()

export const runMain = (program: Effect.Effect<unknown, unknown>, options: { readonly json: boolean }): void => {
  const fiber = Effect.runFork(program)
  setMainFiber(fiber)
  fiber.addObserver((exit) => {
    process.exitCode = exitCodeOf(exit, options.json)
    ended()
  })
}
