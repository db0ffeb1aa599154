/**
 * Failing with one of the error classes of `ErrorClasses.ts`: the services and the Node ports make
 * their typed failures through these (and take the classes from here, never from `ErrorClasses.ts`), so that the command's bundle can build the classes on the first
 * failure rather than at start-up (a command that succeeds makes none). Synchronous either way: a
 * library user's `Effect.runSyncExit` of a failing operation gets its `Exit.Fail`.
 */
import * as Effect from "effect/Effect"
import { type ErrorClasses, errorClasses, type PlatformErrorClasses, platformErrorClasses } from "./ErrorClasses.js"

export { type ErrorClasses, errorClasses, type PlatformErrorClasses, platformErrorClasses }

/** Fails with the error `make` builds from our classes. */
export const failWith = <E>(make: (errors: ErrorClasses) => E): Effect.Effect<never, E> =>
  Effect.failSync(() => make(errorClasses()))

/** Fails with the error `make` builds from `@effect/platform`'s classes. */
export const failWithPlatformError = <E>(make: (errors: PlatformErrorClasses) => E): Effect.Effect<never, E> =>
  Effect.failSync(() => make(platformErrorClasses()))
