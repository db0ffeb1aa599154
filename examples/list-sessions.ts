/**
 * Embedding: the live Claude Code sessions of this user, as data. Run with a Claude home of your
 * choice (`CLAUDE_CONFIG_DIR=… node list-sessions.js`), or the default `~/.claude`.
 */
import { Registry } from "claude-peers"
import { layerNode } from "claude-peers/node"
import { Console, Effect } from "effect"

const program = Effect.gen(function*() {
  const registry = yield* Registry.Registry
  const sessions = yield* registry.list
  for (const session of sessions) {
    yield* Console.log(`${session.pid} ${session.name} ${session.status ?? "-"} → ${session.address ?? "(no inbox)"}`)
  }
  return sessions.length
})

const count = await Effect.runPromise(program.pipe(Effect.provide(layerNode())))
console.log(`${count} live session(s)`)
