/**
 * The permission mode a session was launched in, reduced to the class that decides delivery when
 * no setting does (`bypass` or `prompting`), as Claude Code 2.1.332 picks its initial mode.
 *
 * The rules, in Claude Code's order: the candidates are `--dangerously-skip-permissions`, then
 * `--permission-mode`, then an agent's own mode (`--agent`, read from a file this reader does not
 * open), then `permissions.defaultMode` of the merged settings, then `--inherit-permission-mode`;
 * the first one that may run is the mode. When none is given, Claude Code takes its own default:
 * `auto` where the account may use auto mode (settings Anthropic serves decide), else `default`;
 * the class is `prompting` either way, and the name is not known from outside (`mode: null`).
 * - A `bypassPermissions` from the settings counts only when managed, `--settings` or user
 *   settings give it: a project's files come with the repository, and Claude Code drops their
 *   bypass (taking `default`). Their `auto` is ignored the same way (no candidate).
 * - `permissions.disableBypassPermissionsMode: "disable"` skips every bypass candidate.
 * - A background job (`kind: "bg"`) runs bypass only once its disclaimer was accepted
 *   (`bypassPermissionsModeAccepted` in the global config, or `skipDangerousModePermissionPrompt` in
 *   managed or user settings); otherwise Claude Code takes `default`.
 * - `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` forces `default`; a `--proactivity` level other than
 *   `default`, with no mode on the command line, picks the mode itself and never bypass.
 *
 * This is the mode at launch. Shift+Tab switches it in a running session, and nothing outside the
 * process shows that, so the answer always carries that caveat. Certainty is found as the policy's
 * is: every input that could not be read is given every value it could hold.
 */
import { hasFlag, lastFlagValue, optionsOf } from "./ClaudeArguments.js"
import { isEnvTruthy } from "./ClaudeEnvironment.js"
import { isJsonObject } from "./JsonText.js"
import type { Observed } from "./Observed.js"
import type { PermissionModeClass } from "./PermissionMode.js"
import { type ReceiverMode, receiverModeCaveat, type SettingsSource, type UnreadInput } from "./Policy.js"

/** What one settings file says about permission modes; `Unknown` when it could not be read. */
export type ModeSettings =
  | {
    readonly _tag: "Known"
    readonly defaultMode: string | undefined
    readonly disableBypass: boolean | undefined
    readonly skipBypassPrompt: boolean
  }
  | { readonly _tag: "Unknown"; readonly reason: string }

export const noModeSettings: ModeSettings = { _tag: "Known", defaultMode: undefined, disableBypass: undefined, skipBypassPrompt: false }

/** A settings document's permission-mode members; `manual` is Claude Code's alias of `default`. */
export const modeSettingsOfDocument = (document: Readonly<Record<string, unknown>>): ModeSettings => {
  const permissions = Object.hasOwn(document, "permissions") ? document["permissions"] : undefined
  const members = isJsonObject(permissions) ? permissions : {}
  const mode = Object.hasOwn(members, "defaultMode") ? members["defaultMode"] : undefined
  const disable = Object.hasOwn(members, "disableBypassPermissionsMode") ? members["disableBypassPermissionsMode"] : undefined
  return {
    _tag: "Known",
    defaultMode: typeof mode === "string" && mode !== "" ? normalMode(mode) : undefined,
    disableBypass: disable === undefined ? undefined : disable === "disable",
    skipBypassPrompt: Object.hasOwn(document, "skipDangerousModePermissionPrompt") && Boolean(document["skipDangerousModePermissionPrompt"])
  }
}

const normalMode = (mode: string): string => (mode === "manual" ? "default" : mode)

/** One settings file, of one source, as the mode rules see it. */
export interface ModeFile {
  readonly source: SettingsSource
  readonly path: string | null
  readonly settings: ModeSettings
}

export interface ModeFacts {
  /** The launch arguments, program first (for a background job, its job state's flags). */
  readonly cmdline: Observed<ReadonlyArray<string>>
  readonly environ: Observed<ReadonlyMap<string, string>>
  /** Whether it reads user, project and local settings; null when that is unknown. */
  readonly folderSourcesEnabled: ReadonlySet<SettingsSource> | null
  /** Every settings file read, of every source. */
  readonly files: ReadonlyArray<ModeFile>
  /** A background job: bypass needs the disclaimer accepted. */
  readonly background: boolean
  /** `bypassPermissionsModeAccepted` in the global config: true, false, or null when unknown. */
  readonly bypassAccepted: boolean | null
}

const bypass = "bypassPermissions"

/** Settings merged as Claude Code merges them: user, project, local, flag, managed, a later source winning. */
const mergeOrder: ReadonlyArray<SettingsSource> = ["userSettings", "projectSettings", "localSettings", "flagSettings", "policySettings"]
const trusted: ReadonlySet<SettingsSource> = new Set(["policySettings", "flagSettings", "userSettings"])

interface KnownFile {
  readonly source: SettingsSource
  readonly defaultMode: string | undefined
  readonly disableBypass: boolean | undefined
  readonly skipBypassPrompt: boolean
}

interface Scenario {
  readonly args: ReadonlyArray<string>
  readonly scrub: boolean
  readonly files: ReadonlyArray<KnownFile>
  readonly bypassAccepted: boolean
  readonly background: boolean
  /** `--restricted`, or a truthy `CLAUDE_CODE_RESTRICTED`: no bypass is available. */
  readonly restricted: boolean
}

/**
 * `mode: null`: Claude Code's own default, `auto` or `default` by what the account may use.
 * `bypassAvailable`: Claude Code's `isBypassPermissionsModeAvailable`, which makes plan mode count
 * as bypass for delivery.
 */
type Outcome = { readonly _tag: "Mode"; readonly mode: string | null; readonly bypassAvailable: boolean } | { readonly _tag: "AgentMode" }

const lastSet = <A>(files: ReadonlyArray<KnownFile>, pick: (file: KnownFile) => A | undefined): A | undefined => {
  let found: A | undefined
  for (const source of mergeOrder) {
    for (const file of files) {
      if (file.source !== source) continue
      const value = pick(file)
      if (value !== undefined) found = value
    }
  }
  return found
}

/** Claude Code's initial mode for a scenario where everything is known. */
const launchMode = (scenario: Scenario): Outcome => {
  if (scenario.scrub) return { _tag: "Mode", mode: "default", bypassAvailable: false }
  const { args, files } = scenario
  const bypassRuns = !scenario.background || scenario.bypassAccepted ||
    files.some((file) => (file.source === "policySettings" || file.source === "userSettings") && file.skipBypassPrompt)
  const candidates: Array<string> = []
  const skip = hasFlag("--dangerously-skip-permissions", args)
  const given = lastFlagValue("--permission-mode", args)
  if (skip) candidates.push(bypassRuns ? bypass : "default")
  if (given !== undefined) candidates.push(given === bypass && !bypassRuns ? "default" : normalMode(given))
  if (lastFlagValue("--agent", args) !== undefined && candidates.length === 0) return { _tag: "AgentMode" }
  const inherited = lastFlagValue("--inherit-permission-mode", args)
  const fromSettings = lastSet(files, (file) => file.defaultMode)
  if (fromSettings === bypass) {
    const grantedByTrusted = files.some((file) => trusted.has(file.source) && file.defaultMode === bypass)
    if (!grantedByTrusted) {
      if (inherited === undefined) candidates.push("default")
    } else candidates.push(bypassRuns ? bypass : "default")
  } else if (fromSettings === "auto") {
    if (files.some((file) => trusted.has(file.source) && file.defaultMode === "auto")) candidates.push(fromSettings)
  } else if (fromSettings !== undefined) candidates.push(fromSettings)
  if (inherited !== undefined) candidates.push(normalMode(inherited))
  const disabled = lastSet(files, (file) => file.disableBypass) === true
  const mode = candidates.find((candidate) => !(candidate === bypass && disabled)) ?? null
  // Claude Code 2.1.332: `(mode === "bypassPermissions" || allowDangerouslySkipPermissions && !unconsented)
  // && !disabled && !restricted`, where a background job's allowance counts only once its bypass
  // disclaimer was accepted.
  const allowed = hasFlag("--allow-dangerously-skip-permissions", args) && bypassRuns
  const bypassAvailable = (mode === bypass || allowed) && !disabled && !scenario.restricted
  const proactivity = lastFlagValue("--proactivity", args)
  const modeOnCommandLine = skip || given !== undefined
  // With no mode on the command line, a level decides the mode, never bypass: `auto` or another by
  // what the account may use, a name not known from outside.
  if (proactivity !== undefined && proactivity !== "default" && !modeOnCommandLine) return { _tag: "Mode", mode: null, bypassAvailable }
  return { _tag: "Mode", mode, bypassAvailable }
}

/**
 * The class Claude Code 2.1.332 gives the session (`bypassPermissions`, or `plan` in an interactive
 * session where bypass is available, is `bypass`): `function S(e){return e.mode==="bypassPermissions"
 * ||NP(e.mode,e.isBypassPermissionsModeAvailable)}`, `NP` being plan, available, and interactive.
 */
const classOf = (outcome: Outcome, interactive: boolean): PermissionModeClass | "unknown" =>
  outcome._tag === "AgentMode"
    ? "unknown"
    : outcome.mode === bypass || (outcome.mode === "plan" && outcome.bypassAvailable && interactive)
    ? "bypass"
    : "prompting"

/** What an unread file may say, for the modes: every combination that could change the class. */
const unknownFileOptions = (source: SettingsSource): ReadonlyArray<KnownFile> => [
  { source, defaultMode: undefined, disableBypass: undefined, skipBypassPrompt: false },
  { source, defaultMode: "default", disableBypass: undefined, skipBypassPrompt: false },
  { source, defaultMode: bypass, disableBypass: undefined, skipBypassPrompt: true },
  { source, defaultMode: undefined, disableBypass: true, skipBypassPrompt: false },
  { source, defaultMode: undefined, disableBypass: false, skipBypassPrompt: true }
]

const product = <A>(dimensions: ReadonlyArray<ReadonlyArray<A>>): ReadonlyArray<ReadonlyArray<A>> =>
  dimensions.reduce<ReadonlyArray<ReadonlyArray<A>>>((partial, options) => partial.flatMap((prefix) => options.map((option) => [...prefix, option])), [[]])

/**
 * The receiver's launch mode class. Arguments that could not be read leave it unknown (they can
 * name any mode); an unread environment, file or global config is varied over what it could hold.
 */
export const receiverModeOf = (facts: ModeFacts): ReceiverMode => {
  if (facts.cmdline._tag === "Unreadable") {
    return {
      class: null,
      mode: null,
      certainty: "partial",
      partialBecause: [{ input: "arguments", path: null, detail: `the launch arguments could not be read: ${facts.cmdline.reason}` }],
      caveat: receiverModeCaveat
    }
  }
  const args = optionsOf(facts.cmdline.value)
  const environ = facts.environ._tag === "Read" ? facts.environ.value : null
  const unread: Array<UnreadInput> = []
  const fileDimensions = facts.files.map((file): ReadonlyArray<KnownFile> => {
    const mayBeOff = file.source !== "policySettings" && file.source !== "flagSettings" && facts.folderSourcesEnabled === null
    const off = facts.folderSourcesEnabled !== null && file.source !== "policySettings" && file.source !== "flagSettings" &&
      !facts.folderSourcesEnabled.has(file.source)
    if (off) return [{ source: file.source, defaultMode: undefined, disableBypass: undefined, skipBypassPrompt: false }]
    if (file.settings._tag === "Unknown") {
      unread.push({ input: file.source, path: file.path, detail: file.settings.reason })
      return unknownFileOptions(file.source)
    }
    const seen: KnownFile = { source: file.source, ...file.settings }
    return mayBeOff ? [seen, { source: file.source, defaultMode: undefined, disableBypass: undefined, skipBypassPrompt: false }] : [seen]
  })
  if (facts.folderSourcesEnabled === null) {
    unread.push({ input: "arguments", path: null, detail: "whether it reads user, project and local settings is unknown" })
  }
  const scrubOptions = environ === null ? [false, true] : [isEnvTruthy(environ.get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"))]
  if (environ === null) {
    unread.push({ input: "environment", path: null, detail: "whether CLAUDE_CODE_SUBPROCESS_ENV_SCRUB forces the default mode could not be read" })
  }
  // `claude --bg` refuses to launch a bypass job before the disclaimer is accepted: a running one
  // most likely was, which is what is shown first, but it stays a guess.
  const acceptedOptions = !facts.background ? [true] : facts.bypassAccepted === null ? [true, false] : [facts.bypassAccepted]
  if (facts.background && facts.bypassAccepted === null) {
    unread.push({ input: "environment", path: null, detail: "whether this background job's bypass disclaimer was accepted could not be read" })
  }
  const restrictedOptions = hasFlag("--restricted", args) ? [true] : environ === null ? [false, true] : [isEnvTruthy(environ.get("CLAUDE_CODE_RESTRICTED"))]
  if (environ === null && restrictedOptions.length > 1) {
    unread.push({ input: "environment", path: null, detail: "whether CLAUDE_CODE_RESTRICTED makes bypass unavailable could not be read" })
  }
  // A print session (`-p`) is not interactive. Otherwise Claude Code also asks whether its stdout is
  // a terminal (and SDK flags), which is not read here: both are tried.
  const printing = hasFlag("-p", args) || hasFlag("--print", args) || hasFlag("--init-only", args) ||
    args.some((word) => word.startsWith("--sdk-url"))
  const interactiveOptions = printing ? [false] : [true, false]
  const seen = launchMode({
    args,
    scrub: scrubOptions[0]!,
    files: fileDimensions.map((options) => options[0]!),
    bypassAccepted: acceptedOptions[0]!,
    background: facts.background,
    restricted: restrictedOptions[0]!
  })
  const classes = new Set<string>()
  // Everything was read (the common case): the one combination is the one seen.
  const oneCombination = fileDimensions.every((options) => options.length === 1) && scrubOptions.length === 1 && acceptedOptions.length === 1 &&
    restrictedOptions.length === 1
  // Two classes already make the answer partial: no need to try the rest.
  combinations: for (const files of oneCombination ? [fileDimensions.map((options) => options[0]!)] : product(fileDimensions)) {
    for (const scrub of scrubOptions) {
      for (const bypassAccepted of acceptedOptions) {
        for (const restricted of restrictedOptions) {
          const outcome = launchMode({ args, scrub, files, bypassAccepted, background: facts.background, restricted })
          for (const interactive of interactiveOptions) classes.add(classOf(outcome, interactive))
          if (classes.size > 1) break combinations
        }
      }
    }
  }
  if (interactiveOptions.length > 1 && classOf(seen, true) !== classOf(seen, false)) {
    unread.push({
      input: "arguments",
      path: null,
      detail: "plan mode with bypass available counts as bypass only in an interactive session (a terminal on its stdout), which is not read here"
    })
  }
  const seenClass = classOf(seen, interactiveOptions[0]!)
  if (seenClass === "unknown") {
    return {
      class: null,
      mode: null,
      certainty: "partial",
      partialBecause: [{ input: "arguments", path: null, detail: "--agent names an agent whose own permission mode is not read here" }],
      caveat: receiverModeCaveat
    }
  }
  const mode = seen._tag === "Mode" ? seen.mode : null
  return classes.size === 1
    ? { class: seenClass, mode, certainty: "certain", partialBecause: [], caveat: receiverModeCaveat }
    : { class: seenClass, mode, certainty: "partial", partialBecause: unread, caveat: receiverModeCaveat }
}
