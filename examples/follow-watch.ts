/**
 * Embedding: follow the live sessions as a stream of changes (`appeared`, `changed`, `gone`). The
 * directory watch and the timers belong to the stream's scope: taking a few events, or interrupting
 * the fiber, releases them. Usage: node follow-watch.js [EVENTS]
 */
import { Watch } from "claude-peers"
import { layerNode } from "claude-peers/node"
import { Effect, Stream } from "effect"

const events = Number(process.argv[2] ?? "1")

const program = Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions({ interval: "1 second" }))).pipe(
  Stream.take(events),
  Stream.runForEach((event) => Effect.sync(() => console.log(`${event._tag} ${event.session.pid} ${event.session.name}`)))
)

await Effect.runPromise(program.pipe(Effect.provide(layerNode())))
