/**
 * SIGINT and SIGTERM. A command takes them over only when it has something to do with them, and
 * otherwise leaves the default action (the process ends at once): a handler cannot run while a
 * write blocks on a stalled reader, so a command that installed one would then ignore every signal.
 * - `settings set`/`reset` hold a lock and a temporary file: a signal interrupts them, their
 *   finalizers clean up, and the command ends with 128 + the signal's number (never 0: an update cut
 *   short must not look done to a script).
 * - `watch` runs until interrupted: a signal is its normal end, exit 0.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

const numbers = { SIGINT: 2, SIGTERM: 15 } as const
type Signal = keyof typeof numbers

let received: Signal | undefined
let main: Fiber.RuntimeFiber<unknown, unknown> | undefined
/** The command ends normally on a signal (`watch`): the signal wakes these instead of interrupting it. */
let endsNormally = false
const waiting = new Set<() => void>()

/** Called once by `runMain` with the command's fiber. */
export const setMainFiber = (fiber: Fiber.RuntimeFiber<unknown, unknown>): void => {
  main = fiber
}

/** The exit code for an interruption by a signal, when one was received. */
export const interruptedExitCode = (): number | undefined => (received === undefined ? undefined : 128 + numbers[received])

const onSignal = (signal: Signal) => () => {
  received ??= signal
  if (endsNormally) for (const wake of [...waiting]) wake()
  else if (main !== undefined) Effect.runFork(Fiber.interrupt(main))
}

let installed = false
const install = (): void => {
  if (installed) return
  installed = true
  process.on("SIGINT", onSignal("SIGINT"))
  process.on("SIGTERM", onSignal("SIGTERM"))
}

/** From now on a signal interrupts the command, so that its finalizers run. */
export const interruptOnSignal: Effect.Effect<void> = Effect.sync(install)

/**
 * From now on a signal ends the command normally: the returned effect completes at the first signal
 * (at once if one came already). The handlers are in place before this returns, so a signal that
 * arrives while the command prints its first line is not lost.
 */
export const endOnSignal: Effect.Effect<Effect.Effect<void>> = Effect.sync(() => {
  install()
  endsNormally = true
  return Effect.async<void>((resume) => {
    if (received !== undefined) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    waiting.add(wake)
    return Effect.sync(() => void waiting.delete(wake))
  })
})
