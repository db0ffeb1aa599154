/**
 * The command's composition root: each command's handler over the Node services it uses, for its
 * Claude home. A short command's services are provided without building layers
 * (`provideNodeRegistry`, `provideNodeSettings`, `provideNodePolicy`); `watch`, which runs until
 * stopped, gets every service from `layerNode`. The fast path (`Recognize.ts`, one bundle part per
 * command: `direct/`) and the full command line (`Root.ts`, through `runInvocation`) run the same
 * functions here.
 */
import * as Effect from "effect/Effect"
import { layerNode, provideNodePolicy, provideNodeRegistry, provideNodeSettings } from "../layers/Node.js"
import { rootFromProcess } from "../services/ClaudeHome.js"
import * as Handlers from "./Handlers.js"
import type { CommandOf, Invocation } from "./Invocation.js"

/** The invocation's Claude home: the option, then `CLAUDE_CONFIG_DIR`, then `~/.claude`, from this process's environment. */
const claudeHome = (invocation: Invocation) => rootFromProcess(invocation.claudeHome)

const registry = (invocation: Invocation) => provideNodeRegistry({ claudeHome: claudeHome(invocation) })
const settings = (invocation: Invocation) => provideNodeSettings({ claudeHome: claudeHome(invocation) })

export const runList = (invocation: Invocation) => Handlers.list(invocation.json).pipe(registry(invocation))

export const runInspect = (invocation: Invocation) => Handlers.inspect(invocation.json).pipe(registry(invocation))

export const runResolve = (invocation: Invocation, command: CommandOf<"resolve">) =>
  Handlers.resolve(invocation.json, command).pipe(registry(invocation))

export const runSettingsGet = (invocation: Invocation) =>
  Handlers.settingsGet(invocation.json).pipe(settings(invocation))

export const runSettingsSet = (invocation: Invocation, command: CommandOf<"settings set">) =>
  Handlers.settingsSet(invocation.json, command).pipe(settings(invocation))

export const runSettingsReset = (invocation: Invocation, command: CommandOf<"settings reset">) =>
  Handlers.settingsReset(invocation.json, command).pipe(settings(invocation))

export const runPolicy = (invocation: Invocation, command: CommandOf<"policy">) =>
  Handlers.policy(invocation.json, command).pipe(
    provideNodePolicy({ claudeHome: claudeHome(invocation), managedSettingsDirectory: command.managedDirectory })
  )

export const runWatch = (invocation: Invocation, command: CommandOf<"watch">) =>
  Handlers.watch(invocation.json, command).pipe(Effect.provide(layerNode({ claudeHome: claudeHome(invocation) })))

/** Any invocation: what the full command line runs. */
export const runInvocation = (invocation: Invocation) => {
  const { command } = invocation
  switch (command._tag) {
    case "list":
      return runList(invocation)
    case "inspect":
      return runInspect(invocation)
    case "resolve":
      return runResolve(invocation, command)
    case "settings get":
      return runSettingsGet(invocation)
    case "settings set":
      return runSettingsSet(invocation, command)
    case "settings reset":
      return runSettingsReset(invocation, command)
    case "watch":
      return runWatch(invocation, command)
    case "policy":
      return runPolicy(invocation, command)
  }
}
