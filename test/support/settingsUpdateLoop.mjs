#!/usr/bin/env node
/**
 * Updates the settings file over and over (accept, hold, refuse, reset, …) with the real Settings
 * service on the Node layers, printing one `.` per finished update, until it is killed. The kill
 * test sends it SIGKILL at random moments, which no finalizer survives.
 *
 * It imports the TypeScript sources, so it runs only as the bundle `test/Settings.integration.test.ts`
 * makes of it with esbuild. Usage: node <bundle> CLAUDE_HOME
 */
import { Effect } from "effect"
import { layerNode } from "../../src/layers/Node.js"
import * as Settings from "../../src/services/Settings.js"

const changes = [
  { _tag: "Set", value: "accept" },
  { _tag: "Set", value: "hold" },
  { _tag: "Set", value: "refuse" },
  { _tag: "Reset" }
]

const layer = layerNode({ claudeHome: process.argv[2] })

const program = Effect.gen(function*() {
  const settings = yield* Settings.Settings
  for (let i = 0;; i++) {
    yield* settings.update(changes[i % changes.length]).pipe(
      Effect.zipRight(Effect.sync(() => process.stdout.write("."))),
      Effect.catchAll((error) => Effect.sync(() => process.stderr.write(`${error._tag}: ${error.message}\n`)))
    )
  }
})

Effect.runPromise(Effect.provide(program, layer))
