/**
 * The watch of the file port on `node:fs` (`FilesNode.ts`): the port's only use of `Stream`.
 */
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as NFS from "node:fs"
import * as Path from "node:path"
import type { DirectoryWatchOptions, WatchEvent } from "../services/Files.js"
import { attemptSync, fromNodeError } from "./FilesNodeErrors.js"

/**
 * `fs.watch` on the directory. It keeps watching the directory it opened, not the path, so the
 * stream ends as soon as the path no longer names that same directory: after a `rename` event, the
 * path is missing or has another inode (Linux reports the directory's own removal as a `rename` of
 * its base name, which is then not emitted), and, with `recheckEvery`, at the first look that finds
 * so (a link above the directory re-pointed sends the directory nothing). A watcher `error` fails
 * the stream.
 */
export const watch = (path: string, options: DirectoryWatchOptions = {}): Stream.Stream<WatchEvent, PlatformError> =>
  Stream.asyncScoped<WatchEvent, PlatformError>(
    (emit) =>
      // Synchronous, as `NFS.watch` itself: a watch must not wait for libuv's thread pool, which a
      // host's own work can hold for as long as it likes, while its first read does not wait.
      Effect.flatMap(attemptSync("watch", path, () => NFS.statSync(path)), (watched) => {
        if (!watched.isDirectory()) {
          return Effect.fail(
            new SystemError({
              reason: "BadResource",
              module: "FileSystem",
              method: "watch",
              pathOrDescriptor: path,
              syscall: "watch",
              description: "not a directory"
            })
          )
        }
        const base = Path.basename(path)
        // A path that can no longer be stat'ed cannot be watched either: that ends the stream too.
        const isStillThere = () => {
          try {
            const now = NFS.statSync(path, { throwIfNoEntry: false })
            return now !== undefined && now.ino === watched.ino && now.dev === watched.dev
          } catch {
            return false
          }
        }
        return Effect.acquireRelease(
          attemptSync("watch", path, () => {
            let done = false
            const watcher = NFS.watch(path, (event, name) => {
              if (done) return
              if (event === "rename" && !isStillThere()) {
                if (name !== null && name !== base) void emit.single({ name })
                done = true
                emit.end()
                return
              }
              void emit.single({ name: name ?? null })
            })
            watcher.on("error", (error) => {
              if (done) return
              done = true
              emit.fail(fromNodeError("watch", path)(error))
            })
            watcher.on("close", () => {
              if (done) return
              done = true
              emit.end()
            })
            return watcher
          }),
          (watcher) => Effect.sync(() => watcher.close())
        ).pipe(
          Effect.zipLeft(
            options.recheckEvery === undefined ? Effect.void : Effect.forkScoped(
              Effect.sync(() => {
                if (!isStillThere()) emit.end()
              }).pipe(Effect.repeat(Schedule.spaced(options.recheckEvery)))
            )
          )
        )
      }),
    // Unbounded: `fs.watch` cannot be slowed down, and a bounded buffer would only reorder events.
    "unbounded"
  )
