/**
 * `src/services/ScanBatches.ts` for the command's build: batches of 1,024, with no turns of the
 * event loop between them. The command runs one scan and nothing else in its process, so there is
 * no host to let run; the batches still bound what a scan holds at once (each batch's records are
 * read and judged before the next is read).
 */
import * as Effect from "effect/Effect"

export const scanBatchSize = 1024

export const turnEventLoop: Effect.Effect<void> = Effect.void

export const turnAfter = (_items: number): Effect.Effect<void> => Effect.void

export const inBatches = <A, B>(
  items: ReadonlyArray<A>,
  f: (batch: ReadonlyArray<A>, start: number) => Effect.Effect<B>
): Effect.Effect<Array<B>> => {
  if (items.length <= scanBatchSize) return Effect.map(f(items, 0), (b) => [b])
  const starts: Array<number> = []
  for (let start = 0; start < items.length; start += scanBatchSize) starts.push(start)
  return Effect.forEach(starts, (start) => f(items.slice(start, start + scanBatchSize), start))
}
