/**
 * `src/services/ScanBatches.ts` for the command's build: one batch, no turns of the event loop. The
 * command runs one scan and nothing else in its process, so there is no host to let run.
 */
import * as Effect from "effect/Effect"

export const scanBatchSize = Number.POSITIVE_INFINITY

export const turnEventLoop: Effect.Effect<void> = Effect.void

export const turnAfter = (_items: number): Effect.Effect<void> => Effect.void

export const inBatches = <A, B>(
  items: ReadonlyArray<A>,
  f: (batch: ReadonlyArray<A>, start: number) => Effect.Effect<B>
): Effect.Effect<Array<B>> => Effect.map(f(items, 0), (b) => [b])
