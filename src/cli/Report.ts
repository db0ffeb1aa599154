/**
 * How the command reports: data on stdout (JSON with `--json`, a rendering for people otherwise), and
 * a failure as the contract's JSON error on stdout with `--json` or its sentence on stderr, ending the
 * command with the failure's exit code. One place maps each typed error to its reason and code.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import {
  type ChangedDuringWrite,
  type DeliveryFailed,
  encodeError,
  type Ended,
  type IdentityMismatch,
  type InboundRefused,
  type InvalidJson,
  type InvalidSettings,
  type NotAddressable,
  type NotLive,
  type TimedOut,
  type WouldBeHeld
} from "../domain/Errors.js"
import { OutputFailed, printError, printLine, printPieces } from "./Output.js"
import { jsonArrayPieces, jsonText, terminalSafe, terminalSafeLines } from "./Text.js"

export type ReportedError =
  | NotLive
  | IdentityMismatch
  | NotAddressable
  | ChangedDuringWrite
  | InvalidJson
  | InvalidSettings
  | InboundRefused
  | WouldBeHeld
  | DeliveryFailed
  | TimedOut
  | Ended
  | PlatformError

/** Ends the command with this exit code once its output has been printed. */
export class ExitCode extends Data.TaggedError("ExitCode")<{ readonly code: number }> {}

/** A command line that parsed but asks for something impossible: exit 2, like the parser's own usage errors. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * A usage error as the contract reports it: its sentence on stderr, and with `--json` also the
 * contract's JSON error on stdout. Both say the same terminal-safe sentence: it may quote an
 * argument, which is whatever was typed, and JSON leaves C1 controls and bidirectional overrides
 * as they are. Ends with the usage exit code.
 */
export const reportUsageError = (message: string, json: boolean): Effect.Effect<never, ExitCode> => {
  const sentence = terminalSafeLines(message)
  return printError(`claude-peers: ${sentence}`).pipe(
    // The exit code says it was a usage error even when the JSON line is lost.
    Effect.zipRight(json ? Effect.ignore(printLine(errorJson("usage", sentence))) : Effect.void),
    Effect.zipRight(Effect.fail(new ExitCode({ code: exitCodes.usage })))
  )
}

export const exitCodes = {
  usage: 2,
  not_live: 3,
  identity_mismatch: 4,
  changed_during_write: 5,
  invalid_json: 6,
  invalid_settings: 6,
  io: 7,
  not_addressable: 8,
  inbound_refused: 9,
  would_be_held: 10,
  delivery_failed: 11,
  timed_out: 12,
  ended: 13
} as const

type Reason = keyof typeof exitCodes

/** A failure of the file port: the only ones here with these tags. */
const isPlatformError = (error: ReportedError): error is PlatformError => error._tag === "SystemError" || error._tag === "BadArgument"

const reasonOf = (error: ReportedError): Reason => (isPlatformError(error) ? "io" : error.reason)

/**
 * The error's evidence, encoded by its own schema (the class is the schema). An I/O failure carries
 * the `PlatformError` as it is, minus its `cause`, a native error that says nothing more.
 */
const evidenceOf = (error: ReportedError): Record<string, unknown> => {
  if (!isPlatformError(error)) {
    const { _tag, ...fields } = encodeError(error)
    return fields
  }
  const { _tag, cause: _cause, ...fields } = encodeError(error)
  return { platformError: { _tag, ...fields } }
}

/** `{"error":{"reason","message",…evidence}}`, the contract's JSON error. */
export const errorJson = (reason: string, message: string, evidence: Record<string, unknown> = {}): string => {
  const { reason: _reason, ...rest } = evidence
  return jsonText({ error: { reason, message, ...rest } })
}

/** Prints a data value: its JSON on stdout with `--json`, otherwise the human rendering. */
export const printData = (json: boolean, encoded: () => unknown, human: () => string): Effect.Effect<void, OutputFailed> =>
  printLine(json ? jsonText(encoded()) : human())

/** Prints a list: with `--json` the array of `encode`'s values, in pieces (see `printPieces`), otherwise the human rendering. */
export const printList = <A>(json: boolean, items: ReadonlyArray<A>, encode: (item: A) => unknown, human: () => string): Effect.Effect<void, OutputFailed> =>
  json ? printPieces(jsonArrayPieces(items, encode)) : printLine(human())

const report = (json: boolean, error: ReportedError, note: string | undefined): Effect.Effect<never, ExitCode | OutputFailed> => {
  const reason = reasonOf(error)
  const sentence = note === undefined ? error.message : `${error.message} (${note})`
  const print = json
    ? printLine(errorJson(reason, error.message, evidenceOf(error))).pipe(
      // The JSON error was the answer: whoever reads stderr still learns what it was.
      Effect.mapError((lost) => new OutputFailed({ stream: lost.stream, code: lost.code, done: `the answer was the error ${reason}: ${error.message}` }))
    )
    : printError(`claude-peers: ${terminalSafe(sentence)}`)
  return Effect.zipRight(print, Effect.fail(new ExitCode({ code: exitCodes[reason] })))
}

/** What a command adds to a failure's sentence for people, when it knows more than the error; JSON keeps the error's own. */
export type FailureNote<R> = (error: ReportedError) => Effect.Effect<string | undefined, never, R>

/** Reports a typed failure as the contract says and ends the command with its exit code; lost output stays a failure of its own. */
export const reportFailures =
  <R2 = never>(json: boolean, note?: FailureNote<R2>) =>
  <A, R>(effect: Effect.Effect<A, ReportedError | OutputFailed, R>): Effect.Effect<A, ExitCode | OutputFailed, R | R2> =>
    Effect.catchAll(effect, (error) => {
      if (error._tag === "OutputFailed") return Effect.fail(error)
      if (json || note === undefined) return report(json, error, undefined)
      return Effect.flatMap(note(error), (text) => report(json, error, text))
    })
