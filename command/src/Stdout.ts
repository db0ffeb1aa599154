/**
 * The standalone command's `Console`: `log` writes file descriptor 1, `error` file descriptor 2,
 * and what `log` could not write is reported through the library's `OutputLoss` (exit 7).
 * - Lines go to file descriptor 1 with `fs.writeSync`, without creating `process.stdout`: creating
 *   it loads `net` and the streams for a pipe, several milliseconds of a run that prints one line.
 *   Only a non-blocking pipe that is full (EAGAIN) hands the rest to `process.stdout`, which waits.
 * - A reader that went away (EPIPE: `claude-peers list | head -1`) is not a failure: nobody is left
 *   to tell. Later lines are dropped, and `watch` ends.
 * - A command that a signal ends (`watch`) never blocks in a write: no signal handler can run while
 *   `fs.writeSync` waits on a reader that stopped reading. When file descriptor 1 is a pipe or a
 *   socket, its lines all go through `process.stdout` (non-blocking), one at a time, each waited
 *   for: the wait is interruptible, and nothing piles up in memory.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import type { OutputLossReport } from "../../src/cli/Output.js"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : "EIO"

/** Set once a reader went away: later output has nobody to go to, and is dropped. */
let readerGone = false
/** The code of the first line that could not be written; later lines are not tried. */
let lost: string | undefined
/** Set once a write was handed to `process.stdout`: from then on everything goes through it, in order. */
let throughStream = false

/** What this console lost, as `OutputLoss` reads it. */
export const outputLoss: OutputLossReport = { stdout: () => lost, readerGone: () => readerGone }

/** Whether a line handed to `process.stdout` is still waiting for its reader. */
export const hasPendingOutput = (): boolean => throughStream && process.stdout.writableLength > 0

/** Sends every later line through `process.stdout` when file descriptor 1 is a pipe or a socket (see above). */
export const neverBlock = (): void => {
  try {
    const stats = fs.fstatSync(1)
    if (stats.isFIFO() || stats.isSocket()) throughStream = true
  } catch {
    // No file descriptor 1: every write fails alike, and is reported.
  }
}

/** Set once `process.stdout` has its listener for `error` events. */
let streamErrorsHeard = false

const writeRest = (bytes: Uint8Array): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    throughStream = true
    // Each write's error reaches its callback; one listener, added once, keeps the stream's `error`
    // event from ending the process (one per write would pass Node's limit of listeners, and warn).
    if (!streamErrorsHeard) {
      process.stdout.on("error", () => undefined)
      streamErrorsHeard = true
    }
    process.stdout.write(bytes, (error) => {
      if (error !== null && error !== undefined) {
        if (codeOf(error) === "EPIPE") readerGone = true
        else lost ??= codeOf(error)
      }
      resume(Effect.void)
    })
  })

/** `text`, and a line break after the line's last piece, as UTF-8, for a piece written through `process.stdout`. */
const pieceBytes = (text: string, last: boolean): Buffer => Buffer.from(last ? `${text}\n` : text, "utf8")

const encoder = new TextEncoder()

/**
 * Where a line is encoded on its way to file descriptor 1, a piece at a time. The whole line
 * encoded at once is a buffer as large as the text (30 MB for `inspect --json` at 100,000 records),
 * which the kernel hands over fresh pages for; the pieces reuse these 64 KiB.
 */
const piece = new Uint8Array(64 * 1024)

/**
 * Encodes the next piece of `text` into `piece`, from its unit `from`, and the line break once the
 * line's last text is done and there is room. `encodeInto` ends on a whole character, so no piece
 * splits one.
 */
const encodePiece = (text: string, from: number, last: boolean) => {
  const { read, written } = encoder.encodeInto(from === 0 ? text : text.slice(from), piece)
  const ended = from + read === text.length && (!last || written < piece.length)
  if (ended && last) piece[written] = 0x0a
  return { next: from + read, length: ended && last ? written + 1 : written, ended }
}

/** `first`, then what `rest` has left. */
function* startingWith(first: string, rest: Iterator<string, void>): Generator<string, void> {
  yield first
  for (let next = rest.next(); !next.done; next = rest.next()) yield next.value
}

/** Hands the rest of a line to `process.stdout`: `first`, then the texts `rest` has left, each written once the one after it is asked for (the last one carries the line break). */
const writeRestOf = (first: Uint8Array, rest: Iterator<string, void>): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (first.length > 0) yield* writeRest(first)
    for (let next = rest.next(); !next.done && !readerGone && lost === undefined;) {
      const text = next.value
      next = rest.next()
      const bytes = pieceBytes(text, next.done === true)
      if (bytes.length > 0) yield* writeRest(bytes)
    }
  })

/**
 * Writes a line made of `texts` and a line break to stdout, all of it, or records why not. The next
 * text is asked for before a text is written (the line break follows the last, so the writer must
 * know which is last): at most two are held at once. A full non-blocking pipe (EAGAIN) hands the
 * rest of the line, the unwritten bytes of its piece first, to `process.stdout`.
 */
export const writePieces = (texts: Iterable<string>): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (readerGone || lost !== undefined) return Effect.void
    // A line of no texts is an empty line.
    const iterator = startingWith("", texts[Symbol.iterator]())
    if (throughStream) return writeRestOf(new Uint8Array(0), iterator)
    // Only the writes are caught: a text that cannot be made is a defect, not lost output.
    for (let next = iterator.next(); !next.done;) {
      const text = next.value
      next = iterator.next()
      const last = next.done === true
      // The piece being written, and how much of it is.
      let current = { next: 0, length: 0, ended: false }
      let offset = 0
      try {
        while (!current.ended) {
          current = encodePiece(text, current.next, last)
          for (offset = 0; offset < current.length;) offset += fs.writeSync(1, piece, offset, current.length - offset)
        }
      } catch (error) {
        const code = codeOf(error)
        if (code === "EPIPE") readerGone = true
        else if (code === "EAGAIN") {
          const unwritten = piece.subarray(offset, current.length)
          const restOfText = current.ended ? new Uint8Array(0) : pieceBytes(text.slice(current.next), last)
          return writeRestOf(Buffer.concat([unwritten, restOfText]), next.done === true ? iterator : startingWith(next.value, iterator))
        } else lost = code
        return Effect.void
      }
    }
    return Effect.void
  })

/** Writes `text` and a line break to stdout, as `writePieces` does. */
export const writeLine = (text: string): Effect.Effect<void> => writePieces([text])

/** Set once a diagnostic was handed to `process.stderr`: later ones follow it there, in order. */
let stderrThroughStream = false

/**
 * Writes a diagnostic line to stderr. A full non-blocking pipe (EAGAIN) hands the rest to
 * `process.stderr`, which waits for its reader; where even stderr cannot be written, there is nobody
 * left to tell.
 */
export const writeError = (text: string): void => {
  const bytes = Buffer.from(`${text}\n`, "utf8")
  let offset = 0
  try {
    if (!stderrThroughStream) {
      while (offset < bytes.length) offset += fs.writeSync(2, bytes, offset, bytes.length - offset)
      return
    }
  } catch (error) {
    if (codeOf(error) !== "EAGAIN") return
  }
  if (!stderrThroughStream) process.stderr.on("error", () => undefined)
  stderrThroughStream = true
  process.stderr.write(bytes.subarray(offset))
}

const joined = (parts: ReadonlyArray<unknown>): string => parts.map(String).join(" ")
const toStderr = (...parts: ReadonlyArray<unknown>) => Effect.sync(() => writeError(joined(parts)))
const nothing = () => Effect.void

/** The console every line of the standalone command goes through. */
export const stdoutConsole: Console.Console = {
  [Console.TypeId]: Console.TypeId,
  log: (...parts) => writeLine(joined(parts)),
  error: toStderr,
  warn: toStderr,
  info: toStderr,
  debug: toStderr,
  trace: toStderr,
  assert: (condition, ...parts) => (condition ? Effect.void : toStderr(...parts)),
  clear: Effect.void,
  count: nothing,
  countReset: nothing,
  dir: (item) => toStderr(item),
  dirxml: toStderr,
  group: nothing,
  groupEnd: Effect.void,
  table: (data) => toStderr(data),
  time: nothing,
  timeEnd: nothing,
  timeLog: nothing,
  unsafe: globalThis.console
}
