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

/** `text` and a line break as UTF-8, for a line written through `process.stdout`. */
const lineBytes = (text: string): Buffer => Buffer.from(`${text}\n`, "utf8")

const encoder = new TextEncoder()

/**
 * Where a line is encoded on its way to file descriptor 1, a piece at a time. The whole line
 * encoded at once is a buffer as large as the text, 26 MB for `inspect --json` at 100,000 records:
 * writing it took about 100 ms here, most of it the kernel handing over fresh pages, and the
 * pieces take about 5, reusing these 64 KiB.
 */
const piece = new Uint8Array(64 * 1024)

/**
 * Encodes the next piece of a line into `piece`, from the unit `from` of `text`, and the line break
 * once the text is done and there is room. `encodeInto` ends on a whole character, so no piece
 * splits one.
 */
const encodePiece = (text: string, from: number) => {
  const { read, written } = encoder.encodeInto(from === 0 ? text : text.slice(from), piece)
  const ended = from + read === text.length && written < piece.length
  if (ended) piece[written] = 0x0a
  return { next: from + read, length: ended ? written + 1 : written, ended }
}

/**
 * Writes `text` and a line break to stdout, all of it, or fails. A full non-blocking pipe (EAGAIN)
 * hands the rest of the line, the unwritten bytes of its piece first, to `process.stdout`.
 */
export const printLine = (text: string): Effect.Effect<void, OutputFailed> =>
  Effect.suspend(() => {
    if (readerGone) return Effect.void
    if (throughStream) return writeRest(lineBytes(text))
    // The piece being written, and how much of it is.
    let current = { next: 0, length: 0, ended: false }
    let offset = 0
    try {
      while (!current.ended) {
        current = encodePiece(text, current.next)
        for (offset = 0; offset < current.length;) offset += fs.writeSync(1, piece, offset, current.length - offset)
      }
      return Effect.void
    } catch (error) {
      const code = codeOf(error)
      if (code === "EPIPE") {
        readerGone = true
        return Effect.void
      }
      if (code === "EAGAIN") {
        const rest = current.ended ? new Uint8Array(0) : lineBytes(text.slice(current.next))
        return writeRest(Buffer.concat([piece.subarray(offset, current.length), rest]))
      }
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
