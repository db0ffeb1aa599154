/**
 * The command's output, through Effect's `Console`: data and help on `log`, diagnostics on `error`.
 * Whoever runs the command chooses where that goes: the standalone command writes file descriptors 1
 * and 2, a host that mounts the command writes its own `Console`, a test captures it.
 *
 * Output that cannot be written is a failure, never a silent success (a script reading nothing would
 * take an empty answer for "no sessions", or an update for not done): exit 7 and a sentence. A
 * `Console` cannot fail, so the one that writes says what it lost through `OutputLoss`; a command
 * only knows of lost output that its `Console`'s owner reports there. A reader that went away
 * (`claude-peers list | head -1`) is not a failure: nobody is left to tell, and `watch` ends.
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * The output could not be written: the command's own result is then unknown to its caller. `done`
 * says what the command did all the same, when that matters to whoever reads stderr (an update that
 * was made, an answer that was a refusal).
 */
export class OutputFailed extends Data.TaggedError("OutputFailed")<{
  readonly stream: "stdout" | "stderr"
  readonly code: string
  readonly done?: string | undefined
}> {
  /** The sentence the command ends with on stderr. */
  get sentence(): string {
    const lost = `the output could not be written to ${this.stream} (${this.code})`
    return this.done === undefined ? `${lost}, so the command's answer was lost` : `${lost}; ${this.done}`
  }
}

/** What the `Console`'s owner knows of what it could not write. */
export interface OutputLossReport {
  /** The error code of the first line `log` could not write (`EIO`, `ENOSPC`), or undefined. */
  readonly stdout: () => string | undefined
  /** Whether `log`'s reader went away: later lines have nobody to go to. */
  readonly readerGone: () => boolean
}

/** How a command learns of lost output; by default nothing is lost (a `Console` that cannot tell). */
export class OutputLoss extends Context.Reference<OutputLoss>()("claude-peers/cli/OutputLoss", {
  defaultValue: (): OutputLossReport => ({ stdout: () => undefined, readerGone: () => false })
}) {}

const checked = Effect.flatMap(OutputLoss, (loss) => {
  const code = loss.stdout()
  return code === undefined ? Effect.void : Effect.fail(new OutputFailed({ stream: "stdout", code }))
})

/** Writes `text` as one line through `console`'s `log`; fails if its owner reports the line lost. */
export const lineTo = (console: Console.Console, text: string): Effect.Effect<void, OutputFailed> => Effect.zipRight(console.log(text), checked)

/** Writes `text` as one line of data (stdout), or fails. */
export const printLine = (text: string): Effect.Effect<void, OutputFailed> => Console.consoleWith((console) => lineTo(console, text))

/** Writes one line made of `pieces`, in order, holding at most two of them at once (the one being written, and the next). */
export type PiecesWriter = (pieces: Iterable<string>) => Effect.Effect<void>

/**
 * How a line that comes in pieces is written (a JSON array: `inspect --json` over 100,000 records is
 * 30 MB of text). By default its pieces are joined and given to `Console.log` as one line, as any other;
 * a writer given here (the standalone command's) writes each piece as it comes, so that the whole text
 * is never held at once. Lost output is reported through `OutputLoss` either way.
 */
export class LineInPieces extends Context.Reference<LineInPieces>()("claude-peers/cli/LineInPieces", {
  defaultValue: (): PiecesWriter | undefined => undefined
}) {}

/** Writes one line of data made of `pieces` (stdout), or fails. */
export const printPieces = (pieces: Iterable<string>): Effect.Effect<void, OutputFailed> =>
  Effect.flatMap(LineInPieces, (write) => (write === undefined ? printLine(Array.from(pieces).join("")) : Effect.zipRight(write(pieces), checked)))

/** Writes a diagnostic line (stderr); where even that cannot be written, there is nobody left to tell. */
export const printError = (text: string): Effect.Effect<void> => Console.error(text)

/** Whether the reader of the output went away (`watch` ends then). */
export const readerGone: Effect.Effect<() => boolean> = Effect.map(OutputLoss, (loss) => loss.readerGone)
