/**
 * `ErrorClasses.ts` for the command's bundle only: the same classes, built when the first failure
 * asks for them. Each is a Schema class, and building ours and `@effect/platform`'s at start-up costs
 * a command that succeeds (see the bench). esbuild turns each `require` of an ES module into a call of
 * that module's lazy initializer, so the classes are built on first use and the call stays
 * synchronous. The library never loads this file: as an ES module on Node it has no `require`.
 */
import type { ErrorClasses, PlatformErrorClasses } from "./ErrorClasses.js"

export type { ErrorClasses, PlatformErrorClasses }

let errors: ErrorClasses | undefined
let platformErrors: PlatformErrorClasses | undefined

/**
 * Tells the loader (`bin/claude-peers.js`) that this run builds the error classes, and with them
 * `effect/Schema`: a code cache it writes holds them, which runs that succeed should not have to
 * load, so the loader keeps such a cache only until a run that succeeds comes along.
 */
const coldPath = <A>(classes: A): A => {
  ;(globalThis as Record<symbol, unknown>)[Symbol.for("claude-peers/cold-path")] = true
  return classes
}

export const errorClasses = (): ErrorClasses => (errors ??= coldPath(require("./Errors.js") as ErrorClasses))

export const platformErrorClasses = (): PlatformErrorClasses =>
  (platformErrors ??= coldPath(require("./PlatformErrors.js") as PlatformErrorClasses))
