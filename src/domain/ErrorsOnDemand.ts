/**
 * The error classes, ours (`Errors.ts`) and `@effect/platform`'s (`SystemError`, `BadArgument`),
 * loaded when the first of them is made. Each is a Schema class, and building them costs more than
 * a `list --json` that succeeds spends on anything else of ours (measured: about 10 M of 180 M
 * instructions for ours; `@effect/platform`'s bring the Schema module's own start-up); a command that
 * succeeds makes none. So the services and the Node ports do not import the classes: they fail
 * through `failWith` and `failWithPlatformError`, which load them on the path that fails (the bundle
 * keeps those modules as modules initialized on that first use). The classes are the same either
 * way: a caller's `instanceof NotLive` or `catchTag("SystemError")` sees no difference.
 */
import type * as PlatformErrors from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import type * as Errors from "./Errors.js"

export type ErrorClasses = typeof Errors
export type PlatformErrorClasses = typeof PlatformErrors

const errorClasses: Effect.Effect<ErrorClasses> = Effect.promise(() => import("./Errors.js"))
const platformErrorClasses: Effect.Effect<PlatformErrorClasses> = Effect.promise(() => import("@effect/platform/Error"))

/** Fails with the error `make` builds from our classes. */
export const failWith = <E>(make: (errors: ErrorClasses) => E): Effect.Effect<never, E> =>
  Effect.flatMap(errorClasses, (errors) => Effect.fail(make(errors)))

/** Fails with the error `make` builds from `@effect/platform`'s classes. */
export const failWithPlatformError = <E>(make: (errors: PlatformErrorClasses) => E): Effect.Effect<never, E> =>
  Effect.flatMap(platformErrorClasses, (errors) => Effect.fail(make(errors)))
