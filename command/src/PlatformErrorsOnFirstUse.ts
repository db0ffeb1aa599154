/**
 * `@effect/platform/Error` for the library's modules in the command's build: the classes (Schema
 * classes, as ours) and functions the library uses, each a stand-in built on first use.
 */
import { loadOnFirstUse, onFirstUse } from "./OnFirstUse.js"
import type * as PlatformErrors from "./PlatformErrors.js"

const real = loadOnFirstUse(() => require("./PlatformErrors.js") as typeof PlatformErrors)

export type PlatformError = PlatformErrors.PlatformError
export type SystemErrorReason = PlatformErrors.SystemErrorReason
export type BadArgument = PlatformErrors.BadArgument
export type SystemError = PlatformErrors.SystemError

export const isPlatformError = onFirstUse(() => real().isPlatformError)
export const TypeIdError = onFirstUse(() => real().TypeIdError)
export const Module = onFirstUse(() => real().Module)
export const BadArgument = onFirstUse(() => real().BadArgument)
export const SystemErrorReason = onFirstUse(() => real().SystemErrorReason)
export const SystemError = onFirstUse(() => real().SystemError)
export const PlatformError = onFirstUse(() => real().PlatformError)
