/**
 * Mounting: `claude-peers` as a subcommand of your own command line (`my-tool claude-peers list --json`).
 * The mounted command runs on the services you provide (`layerNode()` here, `layerMemory(world)` in
 * your tests: see `runInMemory` below), writes through Effect's `Console` (so a test can capture it),
 * installs no signal listener (Ctrl-C is the runtime's, which interrupts it), and ends a failure it
 * has reported with an `ExitCode` error carrying the contract's exit code (2 usage, 3 not live, …).
 * `teardown` hands the runtime those codes, and 130 for an interruption (the default teardown's 0
 * would tell a script that a cut-short update or send was done).
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { command as peers, type ExitCode, teardown } from "claude-peers/cli"
import { layerNode } from "claude-peers/node"
import { layerMemory, makeMemoryWorld } from "claude-peers/testing"
import { Console, Effect, Layer } from "effect"
import { pathToFileURL } from "node:url"

const myTool = Command.make("my-tool").pipe(Command.withSubcommands([peers]))
const cli = Command.run(myTool, { name: "my-tool", version: "1.0.0" })

/** In your tests: the same command on a memory world, its output captured. */
export const runInMemory = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const base = yield* Effect.console
    const captured: Console.Console = { ...base, log: (...parts) => Effect.sync(() => void lines.push(parts.join(" "))) }
    const exit = yield* cli(["node", "my-tool", ...args]).pipe(
      Console.withConsole(captured),
      Effect.provide(Layer.merge(layerMemory(makeMemoryWorld()), NodeContext.layer)),
      Effect.exit
    )
    return { exit, lines }
  })

// In production, when run as a program (a test that imports `runInMemory` runs nothing on the real
// machine): Ctrl-C interrupts the command (a settings update lets its lock go), and ends with 130.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cli(process.argv).pipe(
    // Reported already (its sentence or JSON error): the code alone is left to give.
    Effect.catchTag("ExitCode", (e: ExitCode) => Effect.sync(() => void (process.exitCode = e.code))),
    Effect.provide(Layer.merge(layerNode(), NodeContext.layer)),
    NodeRuntime.runMain({ teardown })
  )
}
