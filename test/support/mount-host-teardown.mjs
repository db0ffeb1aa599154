// A host program that mounts `claude-peers/cli`'s `command` with the README's runtime:
// `NodeRuntime.runMain({ teardown })`, so the process ends with the code `teardown` gives the
// command's end (Ctrl-C: 130). Plain JavaScript over the built `dist/`.
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { command, teardown } from "../../dist/cli.js"
import { layerNode } from "../../dist/node.js"

const host = Command.make("host").pipe(Command.withSubcommands([command]))

Command.run(host, { name: "host", version: "1.0.0" })(process.argv).pipe(
  Effect.provide(layerNode()),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ teardown })
)
// `runMain` has taken SIGINT over by the time it returns: a test may send it from here on.
process.stderr.write("host: ready\n")
