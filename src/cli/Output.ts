/**
 * The command's output. Two rules earn their place here:
 * - Output that cannot be written is a failure, never a silent success: a full disk or a closed
 *   stdout ends the command with exit 7 and a sentence on stderr, because a script reading nothing
 *   would take an empty answer for "no sessions", or an update for not done. A reader that went away
 *   (EPIPE: `claude-peers list | head -1`) is not a failure: nobody is left to tell.
 * - Lines go to file descriptor 1 with `fs.writeSync`, without creating `process.stdout`: creating
 *   it loads `net` and the streams for a pipe, several milliseconds of a run that prints one line.
 *   Only a non-blocking pipe that is full (EAGAIN) hands the rest to `process.stdout`, which waits.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"

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

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : "EIO"

/** Set once a reader went away: later output has nobody to go to, and is dropped. */
let readerGone = false
/** Set once a write was handed to `process.stdout`: from then on everything goes through it, in order. */
let throughStream = false

/** Whether stdout's reader went away (EPIPE); `watch` ends then. */
export const stdoutReaderGone = (): boolean => readerGone

const writeRest = (bytes: Uint8Array): Effect.Effect<void, OutputFailed> =>
  Effect.async<void, OutputFailed>((resume) => {
    throughStream = true
    process.stdout.once("error", () => undefined)
    process.stdout.write(bytes, (error) => {
      if (error === null || error === undefined) return resume(Effect.void)
      if (codeOf(error) === "EPIPE") {
        readerGone = true
        return resume(Effect.void)
      }
      resume(Effect.fail(new OutputFailed({ stream: "stdout", code: codeOf(error) })))
    })
  })

/**
 * `text` and a line break as UTF-8, encoded straight into a buffer one byte longer. `${text}\n`
 * would be a new string of the whole text, copied once more before encoding: for `inspect --json`
 * at 100,000 records that is 26 MB of fresh memory, about 90 ms here.
 */
const lineBytes = (text: string): Buffer => {
  const length = Buffer.byteLength(text, "utf8")
  const bytes = Buffer.allocUnsafe(length + 1)
  bytes.write(text, 0, length, "utf8")
  bytes[length] = 0x0a
  return bytes
}

/** Writes `text` and a line break to stdout, all of it, or fails. */
export const printLine = (text: string): Effect.Effect<void, OutputFailed> =>
  Effect.suspend(() => {
    if (readerGone) return Effect.void
    const bytes = lineBytes(text)
    if (throughStream) return writeRest(bytes)
    let offset = 0
    try {
      while (offset < bytes.length) offset += fs.writeSync(1, bytes, offset)
      return Effect.void
    } catch (error) {
      const code = codeOf(error)
      if (code === "EPIPE") {
        readerGone = true
        return Effect.void
      }
      if (code === "EAGAIN") return writeRest(bytes.subarray(offset))
      return Effect.fail(new OutputFailed({ stream: "stdout", code }))
    }
  })

/** Writes a diagnostic line to stderr; where even stderr cannot be written, there is nobody left to tell. */
export const printError = (text: string): void => {
  try {
    fs.writeSync(2, `${text}\n`)
  } catch {
    return
  }
}

/** Whether a file descriptor is open: a command started with stdout closed must not let a file it opens become fd 1. */
export const isOpen = (fd: number): boolean => {
  try {
    fs.fstatSync(fd)
    return true
  } catch {
    return false
  }
}
