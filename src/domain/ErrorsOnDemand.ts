/**
 * The error classes of `Errors.ts`, loaded when the first of them is made. Each is a Schema class,
 * and building them costs more than a `list --json` that succeeds spends on anything else of ours
 * (measured: about 10 M of 180 M instructions); a command that succeeds makes none. So the services
 * do not import the classes: they fail through `failWith`, which loads them on the path that fails.
 * (The bundle keeps `Errors.ts` as a module initialized on that first use.) The classes are the
 * same either way: a caller's `instanceof NotLive` or `catchTag("NotLive")` sees no difference.
 */
import * as Effect from "effect/Effect"
import type * as Errors from "./Errors.js"

export type ErrorClasses = typeof Errors

const errorClasses: Effect.Effect<ErrorClasses> = Effect.promise(() => import("./Errors.js"))

/** Fails with the error `make` builds from the classes. */
export const failWith = <E>(make: (errors: ErrorClasses) => E): Effect.Effect<never, E> =>
  Effect.flatMap(errorClasses, (errors) => Effect.fail(make(errors)))
