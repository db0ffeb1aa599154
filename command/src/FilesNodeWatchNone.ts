/**
 * `src/layers/FilesNodeWatch.ts` for the parts of the command's bundle that never watch: every recognized
 * command but `watch` (`command/build.mjs`). Their handlers read the registry and the settings,
 * and the only caller of the port's `watch` is the `Watch` service, which the build checks none of
 * those parts contains. Leaving the watch out leaves out `Stream` and the channel machinery: about
 * 45 KB of `list`'s part to read and 37 KB of its code cache to load on every run. The full command
 * line and the `watch` part keep the real one.
 */
import type * as FilesNodeWatch from "../../src/layers/FilesNodeWatch.js"

export const watch: typeof FilesNodeWatch.watch = (path) => {
  throw new Error(`claude-peers: this part of the command cannot watch ${path}: only \`watch\` and the full command line can (a bug of the build)`)
}
