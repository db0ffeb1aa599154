/**
 * The command's standard input, for `send … -`. It is read as bytes, so that text that is not UTF-8
 * is refused rather than silently repaired, and read only up to a bound: a message longer than any
 * that can be sent is refused without holding an endless stream in memory. Whoever runs the command
 * chooses where it comes from, as with `Console`: the standalone command reads file descriptor 0, a
 * host or a test provides its own.
 */
import { SystemError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

export interface StandardInputReader {
  /**
   * The bytes until the end of input, or the first `maxBytes + 1` of them when there are more
   * (enough to tell that there were too many).
   */
  readonly read: (maxBytes: number) => Effect.Effect<Uint8Array, SystemError>
}

/** Reads this process's standard input; an interruption stops reading and lets the stream go. */
const processStandardInput: StandardInputReader = {
  read: (maxBytes) =>
    Effect.async<Uint8Array, SystemError>((resume) => {
      const stream = process.stdin
      const chunks: Array<Buffer> = []
      let length = 0
      const finish = () => {
        stream.off("data", onData)
        stream.off("end", onEnd)
        stream.off("error", onError)
        stream.pause()
      }
      const onData = (chunk: Buffer | string) => {
        const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
        chunks.push(bytes)
        length += bytes.length
        if (length > maxBytes) {
          finish()
          resume(Effect.succeed(new Uint8Array(Buffer.concat(chunks).subarray(0, maxBytes + 1))))
        }
      }
      const onEnd = () => {
        finish()
        resume(Effect.succeed(new Uint8Array(Buffer.concat(chunks))))
      }
      const onError = (error: Error) => {
        finish()
        resume(
          Effect.fail(new SystemError({ reason: "Unknown", module: "Stream", method: "read", description: `standard input: ${error.message}`, cause: error }))
        )
      }
      stream.on("data", onData)
      stream.once("end", onEnd)
      stream.once("error", onError)
      return Effect.sync(finish)
    })
}

export class StandardInput extends Context.Reference<StandardInput>()("claude-peers/cli/StandardInput", {
  defaultValue: (): StandardInputReader => processStandardInput
}) {}
