// A host program that mounts `claude-peers/cli`'s `command`, as an application would: it runs the
// subcommand its arguments name on `layerNode`, says on stdout how it ended, then keeps running
// until Ctrl-C (SIGINT), which `NodeRuntime.runMain` turns into the interruption that ends it.
// Plain JavaScript over the built `dist/`, so that a test runs it with node alone.
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { command } from "../../dist/cli.js"
import { layerNode } from "../../dist/node.js"

const host = Command.make("host").pipe(Command.withSubcommands([command]))

const program = Command.run(host, { name: "host", version: "1.0.0" })(process.argv).pipe(
  Effect.as(0),
  Effect.catchTag("ExitCode", (error) => Effect.succeed(error.code)),
  Effect.flatMap((code) => Console.log(`host: the subcommand ended with ${code}; waiting for Ctrl-C`)),
  Effect.zipRight(Effect.never),
  Effect.provide(layerNode()),
  Effect.provide(NodeContext.layer)
)

NodeRuntime.runMain(program)
