/**
 * Embedding: read the user-level `crossSessionInbound`, then change it only if nobody changed the
 * file since it was read (the revision is the BLAKE3 of the bytes read). Every other byte of the
 * user's settings file is kept.
 */
import { setPolicy, Settings } from "claude-peers"
import { layerNode } from "claude-peers/node"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const settings = yield* Settings.Settings
  const before = yield* settings.read
  const after = yield* settings.update(setPolicy("hold"), { expectRevision: before.revision })
  return { before: before.crossSessionInbound, after: after.crossSessionInbound, revision: after.revision }
}).pipe(
  // Another writer came first: read again and decide again, rather than overwrite what it wrote.
  Effect.catchTag("ChangedDuringWrite", (e) => Effect.succeed({ conflict: e.conflict, actualRevision: e.actualRevision }))
)

console.log(JSON.stringify(await Effect.runPromise(program.pipe(Effect.provide(layerNode())))))
