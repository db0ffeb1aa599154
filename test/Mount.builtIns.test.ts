/**
 * `@effect/cli`'s built-in options on the mounted command (issue 21): before the command's words they
 * are the host's, and `--log-level` changes nothing of the answer; whatever the host's parser leaves
 * to the command is a usage error, as on the standalone command, which offers none of them
 * (`Cli.fullStreams.test.ts`).
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Console, Effect, Exit, Layer } from "effect"
import { command } from "../src/cli.js"
import { layerMemory, makeMemoryWorld } from "../src/testing.js"

const host = Command.make("my-tool").pipe(Command.withSubcommands([command]))
const runHost = Command.run(host, { name: "my-tool", version: "1.0.0" })

const answer = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const world = makeMemoryWorld()
    world.tree.makeDirectory(world.home.root, 0o700)
    world.tree.makeDirectory(world.home.sessionsDirectory, 0o700)
    const proc = world.processes.spawn()
    world.tree.writeFile(
      `${world.home.sessionsDirectory}/${proc.pid}.json`,
      JSON.stringify({ pid: proc.pid, sessionId: `session-${proc.pid}`, name: "api", messagingSocketPath: "/tmp/a.sock", procStart: proc.startTime })
    )
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Effect.console
    const captured: Console.Console = {
      ...base,
      log: (...parts) => Effect.sync(() => void stdout.push(parts.join(" "))),
      error: (...parts) => Effect.sync(() => void stderr.push(parts.join(" ")))
    }
    const exit = yield* runHost(["node", "my-tool", ...args]).pipe(
      Console.withConsole(captured),
      Effect.provide(Layer.merge(layerMemory(world), NodeContext.layer)),
      Effect.exit
    )
    return { success: Exit.isSuccess(exit), stdout, stderr }
  })

describe("the mounted command and the host's built-in options", () => {
  it.effect("--log-level LEVEL before the command's words is the host's and leaves the answer as it is", () =>
    Effect.gen(function*() {
      const plain = yield* answer(["claude-peers", "list", "--json"])
      expect(plain.success).toBe(true)
      expect(plain.stdout).toHaveLength(1)
      const leading = [["--log-level", "debug", "claude-peers", "list", "--json"], ["claude-peers", "--log-level", "debug", "list", "--json"]]
      for (const args of leading) {
        expect(yield* answer(args), args.join(" ")).toEqual(plain)
      }
    }))

  it.effect("what the host's parser leaves to the command (after its words, or `--log-level=debug`) is the command's usage error, as standalone", () =>
    Effect.gen(function*() {
      for (const tail of [["--log-level=debug"], ["--log-level", "debug"], ["--wizard"]]) {
        const refused = yield* answer(["claude-peers", "list", "--json", ...tail])
        expect(refused.success).toBe(false)
        expect((JSON.parse(refused.stdout[0]!) as { error: { reason: string } }).error.reason).toBe("usage")
      }
    }))
})
