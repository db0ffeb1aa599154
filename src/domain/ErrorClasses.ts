/**
 * The error classes the services and the Node ports make their failures from: ours (`Errors.ts`) and
 * `@effect/platform`'s (`SystemError`, `BadArgument`). The library imports them as any module does.
 * The command's bundle puts `ErrorClassesOnFirstUse.ts` in this module's place (see
 * `scripts/build-bin.mjs`), which builds them on the first failure instead of at start-up; both hand
 * out the very same classes, synchronously, so a failure is a plain `Effect.fail` either way.
 */
import * as PlatformErrors from "@effect/platform/Error"
import * as Errors from "./Errors.js"

export type ErrorClasses = typeof Errors
export type PlatformErrorClasses = typeof PlatformErrors

export const errorClasses = (): ErrorClasses => Errors

export const platformErrorClasses = (): PlatformErrorClasses => PlatformErrors
