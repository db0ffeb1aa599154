/**
 * `claude-peers [--claude-home DIR] list [--json]` without the command-line parser: what `bin.ts`
 * runs for those exact spellings. The handler is `list`'s own (`ListSessions.ts`), over the
 * registry and the same Node layers the root command provides (`layers/Node.ts`), minus the
 * settings service `list` does not use: its module, its JSONC parser and its hash would otherwise
 * be initialized on every run. For the same reason its file port is `FilesNodeBase.ts` without
 * `watch`: `watch` is built on Effect's `Stream`, whose channel machinery `list` never runs but would
 * otherwise compile and initialize on every run. And its output goes to file descriptor 1 with
 * `fs.writeSync` (see `writeStdout`), without creating `process.stdout`.
 */
import { Console, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import { makeNodeWith } from "../layers/FilesNodeBase.js"
import { layerNode as processProbeLayerNode } from "../layers/ProcessProbeNode.js"
import * as ClaudeHome from "../services/ClaudeHome.js"
import { Files } from "../services/Files.js"
import * as Registry from "../services/Registry.js"
import { listSessions } from "./ListSessions.js"
import { runMain } from "./RunMain.js"

/** `list` reads the registry once and never watches it: calling `watch` here is a bug, and says so. */
const noWatch = (): never => {
  throw new Error("Files.watch is not provided to the plain list command (cli/PlainList.ts)")
}

const filesLayerNode: Layer.Layer<Files> = Layer.sync(Files, () => makeNodeWith(noWatch))

/** Set once a write to fd 1 failed: from then on everything goes through `process.stdout`, in order. */
let stdoutStream = false

/**
 * Writes `text` to stdout without creating `process.stdout`: creating it loads `net` and the streams
 * for a pipe (`tty` for a terminal), about 8 ms of a run here, to print one line. A blocking fd
 * takes the whole write; anything else (EAGAIN on a non-blocking pipe, EPIPE from a reader that
 * has gone) hands the bytes not yet written to `process.stdout`, with its errors ignored as
 * `console.log` ignores them: the same result as printing through it in the first place.
 */
const writeStdout = (text: string): void => {
  const bytes = Buffer.from(text, "utf8")
  let offset = 0
  if (!stdoutStream) {
    try {
      while (offset < bytes.length) offset += fs.writeSync(1, bytes, offset)
      return
    } catch {
      stdoutStream = true
    }
  }
  process.stdout.once("error", () => undefined)
  process.stdout.write(bytes.subarray(offset), () => undefined)
}

/** `Console.log` of one string (all `list` prints) through `writeStdout`; anything else as before. */
const withFdStdout = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Console.consoleWith((console) =>
    Effect.withConsole(program, {
      ...console,
      log: (...args) =>
        args.length === 1 && typeof args[0] === "string"
          ? Effect.sync(() => writeStdout(`${args[0] as string}\n`))
          : console.log(...args)
    })
  )

export const main = (options: { readonly claudeHome: string | undefined; readonly json: boolean }): void =>
  runMain(
    withFdStdout(listSessions({ json: options.json })).pipe(
      Effect.provide(
        Registry.layer.pipe(
          Layer.provide(
            Layer.mergeAll(filesLayerNode, processProbeLayerNode, ClaudeHome.layerFromEnvironment(Option.fromNullable(options.claudeHome)))
          )
        )
      )
    ),
    // Nothing to clean up, and a handler could not run during a write blocked on a stalled reader.
    { handleSignals: false, json: options.json }
  )
