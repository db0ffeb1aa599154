/**
 * The standalone command's composition root: each command's handler over the Node services it uses,
 * for its Claude home, with the signal handling it needs (`Signals.ts`). A short command's services are provided without building layers
 * (`provideNodeRegistry`, `provideNodeSettings`, `provideNodePolicy`); `watch`, which runs until
 * stopped, gets every service from `layerNode`; `send` gets its relay from `layerNode`'s. The fast path (`Recognize.ts`, one bundle part per
 * command: `direct/`) and the full command line (`CommandLine.ts`, through `runInvocation`) run the
 * same functions here.
 */
// The stand-in, not the package: a run that finds its home builds no error class.
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Handlers from "../../src/cli/Handlers.js"
import type { CommandOf, Invocation } from "../../src/cli/Invocation.js"
import { reportFailures } from "../../src/cli/Report.js"
import { layerNode, type NodeOptions } from "../../src/layers/Node.js"
import { rootOf, userHome } from "../../src/services/ClaudeHome.js"
import { type PlatformError, SystemError } from "./PlatformErrorsOnFirstUse.js"
import { provideNodeDelivery, provideNodePolicy, provideNodeRegistry, provideNodeSettings } from "./Provide.js"
import { endedOnSignal, interruptedOnSignal } from "./Signals.js"

/**
 * The invocation's Claude home, from this process's environment: the option, then
 * `CLAUDE_CONFIG_DIR`, then `~/.claude`. Where that needs the user's home and there is none to find
 * (`HOME` unset, and a uid the password database does not know, as in a container run under an
 * arbitrary uid), an `io` failure that says what to set.
 */
const claudeHome = (invocation: Invocation): Effect.Effect<string, PlatformError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(rootOf(invocation.claudeHome, process.env.CLAUDE_CONFIG_DIR, userHome))
    } catch (cause) {
      return Effect.fail(
        new SystemError({
          reason: "NotFound",
          module: "FileSystem",
          method: "homedir",
          description: "the user's home directory cannot be found (HOME is unset and the system knows no home for " +
            "this user): name the Claude home with --claude-home DIR or CLAUDE_CONFIG_DIR",
          cause
        })
      )
    }
  })

/**
 * Whether the invocation's one home is the caller's default home (no `--claude-home`, or one that is
 * it by real path): only there is a session's name an address for the caller's senders, since Claude
 * Code resolves a name only among the sessions of the sender's own home.
 */
const isDefaultHome = (invocation: Invocation, home: string): boolean => {
  if (invocation.claudeHome === undefined) return true
  const real = (dir: string) => {
    try {
      return fs.realpathSync(dir)
    } catch {
      return path.resolve(dir)
    }
  }
  try {
    return real(home) === real(rootOf(undefined, process.env.CLAUDE_CONFIG_DIR, userHome))
  } catch {
    return false
  }
}

/** The Node options of an invocation over its Claude home: several homes when it asked for them. */
const optionsOf = (invocation: Invocation, home: string): NodeOptions =>
  invocation.claudeHomes === undefined
    ? { claudeHome: home, sendersHome: isDefaultHome(invocation, home) }
    : { claudeHome: home, claudeHomes: invocation.claudeHomes.slice(1), allHomes: invocation.allHomes === true }

/** `run` over the invocation's Claude home; a home that cannot be found is reported as every failure is. */
const inHome = <A, E, R>(invocation: Invocation, run: (options: NodeOptions) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(reportFailures(invocation.json)(claudeHome(invocation)), (home) => run(optionsOf(invocation, home)))

export const runList = (invocation: Invocation) => inHome(invocation, (options) => Handlers.list(invocation.json).pipe(provideNodeRegistry(options)))

export const runInspect = (invocation: Invocation) => inHome(invocation, (options) => Handlers.inspect(invocation.json).pipe(provideNodeRegistry(options)))

export const runResolve = (invocation: Invocation, command: CommandOf<"resolve">) =>
  inHome(invocation, (options) => Handlers.resolve(invocation.json, command).pipe(provideNodeRegistry(options)))

export const runSettingsGet = (invocation: Invocation) =>
  inHome(invocation, (options) => Handlers.settingsGet(invocation.json).pipe(provideNodeSettings(options)))

export const runSettingsSet = (invocation: Invocation, command: CommandOf<"settings set">) =>
  interruptedOnSignal(
    inHome(invocation, (options) => Handlers.settingsSet(invocation.json, command).pipe(provideNodeSettings(options)))
  )

export const runSettingsReset = (invocation: Invocation, command: CommandOf<"settings reset">) =>
  interruptedOnSignal(
    inHome(invocation, (options) => Handlers.settingsReset(invocation.json, command).pipe(provideNodeSettings(options)))
  )

export const runPolicy = (invocation: Invocation, command: CommandOf<"policy">) =>
  inHome(invocation, (options) => {
    const withManaged = { ...options, managedSettingsDirectory: command.managedDirectory }
    return Handlers.policy(invocation.json, command).pipe(provideNodePolicy(withManaged))
  })

export const runWatch = (invocation: Invocation, command: CommandOf<"watch">) =>
  endedOnSignal(
    inHome(invocation, (options) => Handlers.watch(invocation.json, command).pipe(Effect.provide(layerNode(options))))
  )

/** `wait` holds nothing to release: a signal keeps its default action (the process ends). */
export const runWait = (invocation: Invocation, command: CommandOf<"wait">) =>
  inHome(invocation, (options) => Handlers.wait(invocation.json, command).pipe(Effect.provide(layerNode(options))))

/** A relay is a process of its own: a signal interrupts the send, which stops it (its layer's finalizers). */
export const runSend = (invocation: Invocation, command: CommandOf<"send">) =>
  interruptedOnSignal(
    inHome(invocation, (options) => Handlers.send(invocation.json, command).pipe(provideNodeDelivery(options)))
  )

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
    case "wait":
      return runWait(invocation, command)
    case "send":
      return runSend(invocation, command)
  }
}
