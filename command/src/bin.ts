#!/usr/bin/env node
/**
 * The command's entry point. It only picks what to load: a documented spelling of a hot command
 * (`Recognize.ts`) runs its handler directly, from the command's own module of `direct/`;
 * everything else (help, mistakes, unusual spellings) loads the full command line
 * (`CommandLine.ts`), which owns every usage error and help text. Nothing else is imported here, so
 * that no path pays for another (the bundle keeps each as a part of its own, see
 * `command/build.mjs`).
 */
import type { Invocation } from "../../src/cli/Invocation.js"
import { recognize } from "./Recognize.js"

const runDirect = (invocation: Invocation): Promise<void> => {
  const { command } = invocation
  switch (command._tag) {
    case "list":
      return import("./direct/list.js").then((part) => part.main(invocation))
    case "inspect":
      return import("./direct/inspect.js").then((part) => part.main(invocation))
    case "resolve":
      return import("./direct/resolve.js").then((part) => part.main(invocation, command))
    case "settings get":
      return import("./direct/settingsGet.js").then((part) => part.main(invocation))
    case "settings set":
      return import("./direct/settingsSet.js").then((part) => part.main(invocation, command))
    case "settings reset":
      return import("./direct/settingsReset.js").then((part) => part.main(invocation, command))
    case "watch":
      return import("./direct/watch.js").then((part) => part.main(invocation, command))
    case "policy":
      return import("./direct/policy.js").then((part) => part.main(invocation, command))
    // It runs for as long as the session takes: the full command line's start-up costs it nothing that matters.
    case "wait":
      return import("./CommandLine.js").then((cli) => cli.main(process.argv))
    case "send":
      return import("./direct/send.js").then((part) => part.main(invocation, command))
  }
}

const invocation = recognize(process.argv.slice(2))

const loaded = invocation !== undefined
  ? runDirect(invocation)
  : import("./CommandLine.js").then((cli) => cli.main(process.argv))

loaded.catch((error: unknown) => {
  process.stderr.write(`claude-peers: unexpected failure: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
