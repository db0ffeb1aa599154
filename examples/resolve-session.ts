/**
 * Embedding: resolve a session id (or a name) to its one live process before sending it anything,
 * and act on each refusal by its tag. Usage: node resolve-session.js SESSION_ID
 */
import { Registry } from "claude-peers"
import { layerNode } from "claude-peers/node"
import { Effect } from "effect"

const sessionId = process.argv[2] ?? "no-such-session"

const program = Effect.gen(function*() {
  const registry = yield* Registry.Registry
  const session = yield* registry.resolve({ sessionId }, { allowSharedName: true })
  return `deliver to ${session.address} (pid ${session.pid})`
}).pipe(
  Effect.catchTags({
    // Nothing runs with that id: the refusal says why, from the files that carried it.
    NotLive: (e) => Effect.succeed(`not live: ${e.reasons.map((r) => r.verdict).join(", ") || "no file carries it"}`),
    // Two live sessions answer: never pick one.
    IdentityMismatch: (e) => Effect.succeed(`ambiguous: pids ${e.candidates.map((c) => c.pid).join(", ")}`),
    // Running, but its inbox did not start (`--restricted`).
    NotAddressable: (e) => Effect.succeed(`not addressable: pid ${e.session.pid}`)
  })
)

console.log(await Effect.runPromise(program.pipe(Effect.provide(layerNode()))))
