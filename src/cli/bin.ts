#!/usr/bin/env node
/**
 * The command's entry point. It only picks what to load: `list` runs from status lines and prompt
 * hooks many times a minute, so its start-up is the product's speed there, and its plain
 * spellings, `[--claude-home DIR] list [--json]` exactly, load only `list` and its layers
 * (`PlainList.ts`). Everything else (other commands, help, any other spelling) loads the full
 * command line (`CommandLine.ts`), which owns every usage error and help text. This module imports
 * nothing else, so that neither path pays for the other (the bundle keeps them as two parts, see
 * `scripts/build-bin.mjs`).
 */

/**
 * The plain `list` invocations, or undefined for anything else. A directory that is empty or
 * starts with `-` is left to the parser, which decides whether it is a value or an option.
 */
const plainList = (args: ReadonlyArray<string>): { readonly claudeHome: string | undefined; readonly json: boolean } | undefined => {
  let claudeHome: string | undefined
  let rest = args
  if (args[0] === "--claude-home") {
    const dir = args[1]
    if (dir === undefined || dir === "" || dir.startsWith("-")) return undefined
    claudeHome = dir
    rest = args.slice(2)
  }
  if (rest[0] !== "list") return undefined
  if (rest.length === 1) return { claudeHome, json: false }
  if (rest.length === 2 && rest[1] === "--json") return { claudeHome, json: true }
  return undefined
}

const plain = plainList(process.argv.slice(2))

const loaded = plain !== undefined
  ? import("./PlainList.js").then((list) => list.main(plain))
  : import("./CommandLine.js").then((cli) => cli.main(process.argv))

loaded.catch((error: unknown) => {
  process.stderr.write(`claude-peers: unexpected failure: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
