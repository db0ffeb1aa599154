/**
 * The registry scan's batches: the Node ports answer synchronously, so a scan of a large registry
 * turns the host's event loop between two batches, or it would stop the host's timers and I/O for
 * its whole length.
 */
import * as Effect from "effect/Effect"

/** How many files, or pids, the scan handles between two turns of the host's event loop. */
export const scanBatchSize = 128

/**
 * One turn of the host's event loop: its due timers and its I/O run before the scan goes on. The
 * Node ports answer synchronously, and Effect's default scheduler lets other fibers run through
 * microtasks, which hold the event loop as a synchronous call does: without these turns, a scan of a
 * large registry would stop a host's timers and I/O for its whole length.
 */
export const turnEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A turn of the event loop between two of the scan's own passes over a large registry (the listing,
 * the liveness check, the verdicts); none for a small one.
 */
export const turnAfter = (items: number): Effect.Effect<void> => items > scanBatchSize ? turnEventLoop : Effect.void

/**
 * `f` over `items` in batches of `scanBatchSize`, in order, with a turn of the event loop between
 * two; `f` is told where its batch starts in `items`.
 */
export const inBatches = <A, B>(
  items: ReadonlyArray<A>,
  f: (batch: ReadonlyArray<A>, start: number) => Effect.Effect<B>
): Effect.Effect<Array<B>> => {
  if (items.length <= scanBatchSize) return Effect.map(f(items, 0), (b) => [b])
  const starts: Array<number> = []
  for (let start = 0; start < items.length; start += scanBatchSize) starts.push(start)
  return Effect.forEach(starts, (start, i) => {
    const batch = f(items.slice(start, start + scanBatchSize), start)
    return i === 0 ? batch : Effect.zipRight(turnEventLoop, batch)
  })
}
