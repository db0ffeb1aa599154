/**
 * The command's composition root: an invocation's handler over the Node layers for its Claude home.
 * The fast path (`Recognize.ts`) and the full command line (`Root.ts`) both run invocations here.
 */
import * as Effect from "effect/Effect"
import { layerNode } from "../layers/Node.js"
import { handle } from "./Handlers.js"
import type { Invocation } from "./Invocation.js"

export const runInvocation = (invocation: Invocation) =>
  handle(invocation.command, invocation.json).pipe(
    Effect.provide(layerNode({
      claudeHome: invocation.claudeHome,
      managedSettingsDirectory: invocation.command._tag === "policy" ? invocation.command.managedDirectory : undefined
    }))
  )
