#!/usr/bin/env node
/**
 * The command's entry point. It only picks what to load: a documented spelling of a hot command
 * (`Recognize.ts`) runs its handler directly (`Direct.ts`); everything else (help, mistakes, unusual
 * spellings) loads the full command line (`CommandLine.ts`), which owns every usage error and help
 * text. Nothing else is imported here, so that neither path pays for the other (the bundle keeps
 * them as two parts, see `scripts/build-bin.mjs`).
 */
import { recognize } from "./Recognize.js"

const invocation = recognize(process.argv.slice(2))

const loaded = invocation !== undefined
  ? import("./Direct.js").then((direct) => direct.main(invocation))
  : import("./CommandLine.js").then((cli) => cli.main(process.argv))

loaded.catch((error: unknown) => {
  process.stderr.write(`claude-peers: unexpected failure: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
