/**
 * How the file port on `node:fs` says a failure: the one translation of a Node failure into a
 * `PlatformError`, shared by the port (`FilesNode.ts`) and its watch (`FilesNodeWatch.ts`).
 */
import { BadArgument, isPlatformError, type PlatformError, SystemError, type SystemErrorReason } from "@effect/platform/Error"
import * as Effect from "effect/Effect"

export const reasonOf = (code: string | undefined): SystemErrorReason => {
  switch (code) {
    case "ENOENT":
      return "NotFound"
    case "EACCES":
    case "EPERM":
      return "PermissionDenied"
    case "EEXIST":
      return "AlreadyExists"
    case "EISDIR":
    case "ENOTDIR":
    case "ELOOP":
      return "BadResource"
    case "EBUSY":
      return "Busy"
    default:
      return "Unknown"
  }
}

const isErrnoException = (u: unknown): u is NodeJS.ErrnoException => u instanceof Error && typeof (u as NodeJS.ErrnoException).code === "string"

export const errnoOf = (u: unknown): string | undefined => (isErrnoException(u) ? u.code : undefined)

/**
 * The one translation of a Node failure into a `PlatformError`. An errno exception is a `SystemError` whose reason a caller can act on; a
 * `PlatformError` thrown by our own code is kept; anything else was thrown for a bad argument, which
 * is how `@effect/platform-node` reports it too.
 */
export const fromNodeError = (method: string, path: string) => (cause: unknown): PlatformError => {
  if (isPlatformError(cause)) return cause
  if (!isErrnoException(cause)) {
    return new BadArgument({ module: "FileSystem", method, description: String(cause), cause })
  }
  return new SystemError({
    reason: reasonOf(cause.code),
    module: "FileSystem",
    method,
    pathOrDescriptor: typeof cause.path === "string" ? cause.path : path,
    description: cause.message,
    cause,
    ...(cause.syscall === undefined ? {} : { syscall: cause.syscall })
  })
}

/**
 * Every call of this port is synchronous. The settings' reads and writes are a few small calls each,
 * for the reason the scan's are (see `readDirectory`): through the thread pool every call costs a
 * round trip, and the first one starts the pool's threads, a few milliseconds of a `settings set`
 * that makes a dozen. And a host's own work can hold the pool for as long as it likes.
 */
export const attemptSync = <A>(method: string, path: string, run: () => A): Effect.Effect<A, PlatformError> =>
  Effect.try({ try: run, catch: fromNodeError(method, path) })
