/**
 * How the command reports a failure: one place maps each typed error to its contract reason and
 * exit code, prints `{"error":{"reason","message"}}` on stdout with `--json` or the sentence on
 * stderr without, and ends the command with that exit code.
 */
import { isPlatformError, type PlatformError } from "@effect/platform/Error"
import { Console, Data, Effect } from "effect"
import type { ChangedDuringWrite, IdentityMismatch, InvalidJson, InvalidSettings, NotLive } from "../domain/Errors.js"
import { terminalSafe } from "./Text.js"

export type ReportedError = NotLive | IdentityMismatch | ChangedDuringWrite | InvalidJson | InvalidSettings | PlatformError

/** Ends the command with this exit code once its output has been printed. */
export class ExitCode extends Data.TaggedError("ExitCode")<{ readonly code: number }> {}

export const exitCodes = {
  not_live: 3,
  identity_mismatch: 4,
  changed_during_write: 5,
  invalid_json: 6,
  invalid_settings: 6,
  io: 7
} as const

const reasonOf = (error: ReportedError): keyof typeof exitCodes =>
  isPlatformError(error) ? "io" : error.reason

/** Prints a data value: JSON on stdout with `--json`, otherwise the human rendering. */
export const printData = (json: boolean, value: unknown, human: () => string) =>
  Console.log(json ? JSON.stringify(value) : human())

export const reportFailures =
  (json: boolean) => <A, R>(effect: Effect.Effect<A, ReportedError, R>): Effect.Effect<A, ExitCode, R> =>
    Effect.catchAll(
      effect,
      (error) => {
        const reason = reasonOf(error)
        const message = error.message
        return (json
          ? Console.log(JSON.stringify({ error: { reason, message } }))
          : Console.error(`claude-peers: ${terminalSafe(message)}`)).pipe(
            Effect.zipRight(Effect.fail(new ExitCode({ code: exitCodes[reason] })))
          )
      }
    )

/** A command line that parsed but asks for something impossible: exit 2, like @effect/cli's own usage errors. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}
