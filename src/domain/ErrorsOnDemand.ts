/**
 * What the services and the Node ports fail through: `failWith` and `failWithPlatformError` build
 * the typed error from the classes `ErrorClasses.ts` hands out (take the classes from here, never
 * from that module), so that the command's bundle can swap that module for
 * `ErrorClassesOnFirstUse.ts` and build the classes on the first failure rather than at start-up (a
 * command that succeeds makes none). Synchronous either way: a library user's `Effect.runSyncExit`
 * of a failing operation gets its `Exit.Fail`.
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
