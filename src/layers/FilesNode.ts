/**
 * The file port on `node:fs`: the operations of `FilesNodeBase.ts` and `watch`, on `fs.watch`.
 * `watch` is the one operation built on Effect's `Stream`, so it lives here, apart: `list` runs on
 * the base alone and does not load `Stream` (see `cli/PlainList.ts`).
 */
import type { PlatformError } from "@effect/platform/Error"
import { SystemError } from "@effect/platform/Error"
import { Effect, Layer, Stream } from "effect"
import * as NFS from "node:fs"
import * as Path from "node:path"
import type { Files as FilesShape, WatchEvent } from "../services/Files.js"
import { Files } from "../services/Files.js"
import { attempt, fromNodeError, makeNodeWith } from "./FilesNodeBase.js"

/**
 * `fs.watch` on the directory. It keeps watching the directory it opened, not the path, so the
 * stream ends as soon as the path no longer names that same directory: after a `rename` event, the
 * path is missing or has another inode (Linux reports the directory's own removal as a `rename` of
 * its base name, which is then not emitted). A watcher `error` fails the stream.
 */
const watch = (path: string): Stream.Stream<WatchEvent, PlatformError> =>
  Stream.asyncScoped<WatchEvent, PlatformError>(
    (emit) =>
      Effect.flatMap(attempt("watch", path, () => NFS.promises.stat(path)), (watched) => {
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
          Effect.try({
            try: () => {
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
            },
            catch: fromNodeError("watch", path)
          }),
          (watcher) => Effect.sync(() => watcher.close())
        )
      }),
    // Unbounded: `fs.watch` cannot be slowed down, and a bounded buffer would only reorder events.
    "unbounded"
  )

export const makeNode = (): FilesShape => makeNodeWith(watch)

export const layerNode: Layer.Layer<Files> = Layer.sync(Files, makeNode)
