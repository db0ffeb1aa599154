/**
 * SIGINT, SIGTERM and SIGHUP (a closed terminal, a dropped ssh connection) in the standalone command. A command takes them over only when it has
 * something to do with them, and otherwise leaves the default action (the process ends at once): a
 * handler cannot run while a write blocks on a stalled reader, so a command that installed one would
 * then ignore every signal. Either way a signal interrupts the command's fiber, so that its
 * finalizers run (the library's handlers rely on Effect's interruption only):
 * - `settings set`/`reset` hold a lock and a temporary file: the command then ends with 128 + the
 *   signal's number (never 0: an update cut short must not look done to a script).
 * - `watch` runs until interrupted: a signal is its normal end, exit 0. Its output never blocks the
 *   process (`neverBlock` in `Stdout.ts`), so that a reader that stopped reading cannot hold it.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { neverBlock } from "./Stdout.js"

const numbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const
type Signal = keyof typeof numbers

let received: Signal | undefined
let main: Fiber.RuntimeFiber<unknown, unknown> | undefined
/** The command ends normally on a signal (`watch`). */
let endsNormally = false

/** Called once by `runMain` with the command's fiber. */
export const setMainFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>): void => {
  main = fiber
  if (received !== undefined) Effect.runFork(Fiber.interrupt(fiber))
}

/** The exit code for an interruption by a signal, when one was received. */
export const interruptedExitCode = (): number | undefined => received === undefined ? undefined : endsNormally ? 0 : 128 + numbers[received]

const onSignal = (signal: Signal) => () => {
  received ??= signal
  if (main !== undefined) Effect.runFork(Fiber.interrupt(main))
}

let installed = false
const install = (): void => {
  if (installed) return
  installed = true
  for (const signal of Object.keys(numbers) as Array<Signal>) process.on(signal, onSignal(signal))
}

/** `effect` with signals interrupting it: it ends with 128 + the signal's number. */
export const interruptedOnSignal = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.zipRight(Effect.sync(install), effect)

/** `effect` with signals ending it normally: it is interrupted, and the command exits 0. */
export const endedOnSignal = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.zipRight(
    Effect.sync(() => {
      install()
      endsNormally = true
      neverBlock()
    }),
    effect
  )
