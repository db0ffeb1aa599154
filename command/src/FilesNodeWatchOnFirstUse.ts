/**
 * `src/layers/FilesNodeWatch.ts` for the command's bundle only, in the parts that watch (the full command line
 * and `watch`): the same watch, its module loaded on the first call. That module is the port's only
 * use of `Stream`; initializing `Stream` and the channel machinery behind it at start-up would cost
 * every command the full command line runs, and only `watch` watches. esbuild turns the
 * `require` of an ES module into a call of that module's lazy initializer, so the call stays
 * synchronous.
 */
import type * as FilesNodeWatch from "../../src/layers/FilesNodeWatch.js"

let loaded: typeof FilesNodeWatch | undefined

export const watch = (...args: Parameters<typeof FilesNodeWatch.watch>): ReturnType<typeof FilesNodeWatch.watch> =>
  (loaded ??= require("../../src/layers/FilesNodeWatch.js") as typeof FilesNodeWatch).watch(...args)
