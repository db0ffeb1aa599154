/**
 * What a running Claude Code process's environment says about messaging between sessions: the
 * kill switch `CLAUDE_CODE_HARBOR_KITE`, and the variables that switch off user, project and local
 * settings. Read from `/proc/<pid>/environ` (NUL-separated `KEY=VALUE`), which holds the
 * environment the process was started with.
 *
 * The kill switch is not only the launch environment. At start, and again whenever its settings
 * change, Claude Code copies the `env` members of its settings into its own environment, in this
 * order, each overriding the one before: `~/.claude.json`'s `env`, then the `env` of each settings
 * source it reads (user, flag, managed; a project's or local settings file may not set this
 * variable and is ignored for it). So `{"env":{"CLAUDE_CODE_HARBOR_KITE":"0"}}` in the user's
 * settings turns messaging off even though no shell ever exported it.
 */
import type { ClaudeArguments, FolderOrUserSource } from "./ClaudeArguments.js"

export const killSwitchVariable = "CLAUDE_CODE_HARBOR_KITE"

const variablesOf = (block: string): ReadonlyMap<string, string> => {
  const variables = new Map<string, string>()
  for (const entry of block.split("\0")) {
    const equals = entry.indexOf("=")
    if (equals <= 0) continue
    const name = entry.slice(0, equals)
    if (!variables.has(name)) variables.set(name, entry.slice(equals + 1))
  }
  return variables
}

/**
 * An environment block (`/proc/<pid>/environ`) read as a map. A reader asks a few names of a
 * process's environment, which holds dozens: `get` finds a name in the block, and the whole map is
 * built only for what walks or counts it.
 */
class EnvironBlock implements ReadonlyMap<string, string> {
  readonly #block: string
  #variables: ReadonlyMap<string, string> | undefined
  constructor(block: string) {
    this.#block = block
  }
  get(name: string): string | undefined {
    // A variable's name is a string, not empty, with neither `=` nor NUL: no other name is in the block.
    if (typeof name !== "string" || name === "" || name.includes("=") || name.includes("\0")) return undefined
    const block = this.#block
    const key = `${name}=`
    // An entry starts the block or follows a NUL; the first one with the name is the variable.
    let start = key.length
    if (!block.startsWith(key)) {
      const at = block.indexOf(`\0${key}`)
      if (at === -1) return undefined
      start += at + 1
    }
    const end = block.indexOf("\0", start)
    return block.slice(start, end === -1 ? block.length : end)
  }
  has(name: string): boolean {
    return this.get(name) !== undefined
  }
  get size(): number {
    return this.#all().size
  }
  forEach(callback: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    this.#all().forEach((value, key) => callback.call(thisArg, value, key, this))
  }
  entries(): MapIterator<[string, string]> {
    return this.#all().entries()
  }
  keys(): MapIterator<string> {
    return this.#all().keys()
  }
  values(): MapIterator<string> {
    return this.#all().values()
  }
  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.#all()[Symbol.iterator]()
  }
  /** As `util.inspect` shows a `Map`. */
  [Symbol.for("nodejs.util.inspect.custom")](_depth: number, options: object, inspect: (value: unknown, options: object) => string): string {
    return inspect(this.#all(), options)
  }
  #all(): ReadonlyMap<string, string> {
    return this.#variables ??= variablesOf(this.#block)
  }
}

/**
 * An environment block as the process's `getenv` answers it: where a name appears twice, the first
 * wins. Entries without `=`, or with nothing before it, are not variables and are skipped.
 */
export const parseEnviron = (block: string): ReadonlyMap<string, string> => new EnvironBlock(block)

/** Claude Code's reading of a yes/no variable: `1`, `true`, `yes`, `on` in any case, around white space. */
export const isEnvTruthy = (value: string | undefined): boolean => value !== undefined && ["1", "true", "yes", "on"].includes(value.toLowerCase().trim())

/**
 * What one value of `CLAUDE_CODE_HARBOR_KITE` does. Blank counts as unset. Any other value turns
 * messaging on only when it is truthy: `0`, `false`, `no`, `off` turn it off, and so do `banana`
 * and `2`, because Claude Code asks "is it truthy?", not "is it false?". Unset leaves the decision
 * to a switch Claude Code fetches from Anthropic's servers (on unless Anthropic turns it off),
 * which cannot be seen from here.
 */
export type KillSwitchValue = "on" | "off" | "unset"

export const killSwitchValueOf = (value: string | undefined): KillSwitchValue =>
  value === undefined || value.trim() === "" ? "unset" : isEnvTruthy(value) ? "on" : "off"

/** Where the kill switch's value can come from, lowest precedence first. */
export const KillSwitchOrigins = ["environment", "globalConfig", "userSettings", "flagSettings", "policySettings"] as const
export type KillSwitchOrigin = typeof KillSwitchOrigins[number]

const originRank = Object.fromEntries(KillSwitchOrigins.map((origin, i) => [origin, i])) as Record<KillSwitchOrigin, number>

/**
 * One place's say on the variable: it sets it (to a string, blank included, which overrides and
 * counts as unset), it does not, or it could not be read. `NotOff` is a launch environment that
 * could not be read while the session is known to have started its inbox, which Claude Code does
 * only with messaging on: whatever it holds, it does not turn messaging off.
 */
export type KillSwitchLayer =
  | { readonly origin: KillSwitchOrigin; readonly _tag: "Set"; readonly value: string }
  | { readonly origin: KillSwitchOrigin; readonly _tag: "NotSet" }
  | { readonly origin: KillSwitchOrigin; readonly _tag: "NotOff" }
  | { readonly origin: KillSwitchOrigin; readonly _tag: "Unreadable" }

/**
 * The kill switch as this machine shows it: `not_off` when it is on or unset but which cannot be
 * told, `unknown` when a place that could set it last was unreadable.
 */
export interface KillSwitch {
  readonly state: KillSwitchValue | "not_off" | "unknown"
  /** The place whose value is in effect; null when nothing readable sets it. */
  readonly origin: KillSwitchOrigin | null
}

/**
 * The kill switch from its layers, in any order: the highest-precedence place that sets the
 * variable decides, unless a place of higher precedence could not be read (it may set it too).
 */
export const killSwitchOf = (layers: ReadonlyArray<KillSwitchLayer>): KillSwitch => {
  const byPrecedence = [...layers].sort((a, b) => originRank[b.origin] - originRank[a.origin])
  for (const layer of byPrecedence) {
    switch (layer._tag) {
      case "Unreadable":
        return { state: "unknown", origin: null }
      case "NotOff":
        return { state: "not_off", origin: null }
      case "Set":
        return { state: killSwitchValueOf(layer.value), origin: layer.origin }
      case "NotSet":
        continue
    }
  }
  return { state: "unset", origin: null }
}

/**
 * A settings document's `env` value for the kill switch, as Claude Code copies it into its
 * environment: a string as it is, a number or boolean as its text (`0`, `false`), anything else
 * dropped. Only own members count; a document that is not an object sets nothing.
 */
export const killSwitchInSettings = (document: unknown): string | undefined => {
  if (typeof document !== "object" || document === null || Array.isArray(document)) return undefined
  const env: unknown = Object.hasOwn(document, "env") ? (document as Record<string, unknown>)["env"] : undefined
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.hasOwn(env, killSwitchVariable)) return undefined
  const value: unknown = (env as Record<string, unknown>)[killSwitchVariable]
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : undefined
}

/**
 * Which of the user, project and local settings Claude Code reads for a process. Without
 * `--setting-sources` it reads all three; `--restricted` or a truthy `CLAUDE_CODE_RESTRICTED` in
 * its launch environment, and a self-hosted remote review session, read none, whatever
 * `--setting-sources` says. Null when that is not known: the environment could not be read (and the
 * arguments leave some source in), or the command line names a source that does not exist (Claude
 * Code would have refused to start, so this process reads something else).
 */
export const enabledFolderSources = (
  args: ClaudeArguments,
  environ: ReadonlyMap<string, string> | null
): ReadonlyArray<FolderOrUserSource> | null => {
  if (environ === null) {
    // The environment can only take sources away: with none left by the arguments, none is read.
    const atMost = folderSourcesAtMost(args)
    return atMost !== null && atMost.length === 0 ? atMost : null
  }
  if (isEnvTruthy(environ.get("CLAUDE_CODE_RESTRICTED")) || isRemoteReviewSession(environ)) return []
  return folderSourcesAtMost(args)
}

/**
 * The sources the arguments leave in, whatever the environment holds (it can only take some away):
 * an upper bound of `enabledFolderSources`; null when the command line names one that does not exist.
 */
export const folderSourcesAtMost = (args: ClaudeArguments): ReadonlyArray<FolderOrUserSource> | null => {
  if (args.restricted) return []
  if (args.settingSources === null) return ["userSettings", "projectSettings", "localSettings"]
  return args.settingSources._tag === "Listed" ? args.settingSources.sources : null
}

const isRemoteReviewSession = (environ: ReadonlyMap<string, string>): boolean =>
  isEnvTruthy(environ.get("CLAUDE_CODE_REMOTE")) &&
  environ.get("CLAUDE_CODE_ENVIRONMENT_KIND")?.trim() === "byoc" &&
  environ.get("CLAUDE_CODE_REMOTE_ENVIRONMENT_TYPE")?.trim() === "self_hosted" &&
  environ.get("CLAUDE_CODE_REMOTE_SESSION_ORIGIN")?.trim() === "review"

/**
 * The name of the user settings file in the session's Claude home: a session that uses Cowork
 * plugins (a truthy `CLAUDE_CODE_USE_COWORK_PLUGINS`) reads `cowork_settings.json` instead of
 * `settings.json`, so the user file this project edits is not the one such a session obeys.
 */
export const userSettingsFileName = (environ: ReadonlyMap<string, string>): "settings.json" | "cowork_settings.json" =>
  isEnvTruthy(environ.get("CLAUDE_CODE_USE_COWORK_PLUGINS")) ? "cowork_settings.json" : "settings.json"
