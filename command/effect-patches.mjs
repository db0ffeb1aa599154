/**
 * Start-up work of Effect's own modules that the command never needs, patched out of the command's
 * bundle (`build.mjs`); the library imports Effect as it is. A patch stays only while it buys the
 * command at least 2 ms (docs/speed.md); a runtime change worth having belongs upstream. Each patch names its module, the
 * exact texts it replaces (a text that is missing fails the build: another version of Effect is
 * read again before it is bundled), and code it appends. `test/EffectPatches.test.ts` holds each
 * patch to the behaviour of the code it replaces.
 */
import * as fs from "node:fs"

const effectModule = (name) => new RegExp(`[\\\\/]effect[\\\\/]dist[\\\\/]esm[\\\\/]${name.replace(/[/.]/g, (c) => (c === "/" ? "[\\\\/]" : "\\."))}$`)

export const libraryPatches = [
  {
    // The logger module reads `process.stdout` when it is initialized, to pick the pretty logger's
    // colors, and reading it creates the stream: on a pipe (a status line, a script) that loads `net`
    // and the streams, which the command never uses (its output goes to file descriptor 1, see `src/Stdout.ts`). The three constants become
    // functions, computed when a pretty logger is made.
    module: effectModule("internal/logger.js"),
    edits: [
      ["const hasProcessStdout = typeof process === \"object\" && process !== null && typeof process.stdout === \"object\" && process.stdout !== null;", ""],
      ["const processStdoutIsTTY = hasProcessStdout && process.stdout.isTTY === true;", ""],
      ["const hasProcessStdoutOrDeno = hasProcessStdout || \"Deno\" in globalThis;", ""],
      [/\b(hasProcessStdout|processStdoutIsTTY|hasProcessStdoutOrDeno)\b/g, "$1()"]
    ],
    append: `
function hasProcessStdout() { return typeof process === "object" && process !== null && typeof process.stdout === "object" && process.stdout !== null }
function processStdoutIsTTY() { return hasProcessStdout() && process.stdout.isTTY === true }
function hasProcessStdoutOrDeno() { return hasProcessStdout() || "Deno" in globalThis }
`
  }
]

/** An esbuild plugin that applies every patch to the module it names. */
export const libraryPatchesPlugin = {
  name: "library-patches",
  setup(build) {
    for (const patch of libraryPatches) {
      build.onLoad({ filter: patch.module }, async (args) => ({
        contents: applyPatch(patch, await fs.promises.readFile(args.path, "utf8"), args.path),
        loader: "js"
      }))
    }
  }
}

/** A module's text with `patch` applied; fails when an edit's text (or pattern) is not there. */
export const applyPatch = (patch, source, file) => {
  let text = source
  for (const [from, to] of patch.edits) {
    const found = typeof from === "string" ? text.includes(from) : text.search(from) !== -1
    if (!found) throw new Error(`${file}: expected \`${from}\``)
    text = text.replace(from, to)
  }
  return text + (patch.append ?? "")
}
