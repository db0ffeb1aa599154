/**
 * From what this machine shows about one session to its `policy` answer: the pure half of the
 * `policy` command. The service reads the process's arguments and environment and the files named
 * by `ManagedSettings`, `ProjectSettings` and the command line, and hands the results here.
 *
 * A fact that could not be read stays unread all the way to the answer: it is never replaced by
 * a default that would make the answer look surer than it is.
 */
import { type ClaudeArguments, claudeArgumentsOf, optionsOf } from "./ClaudeArguments.js"
import {
  enabledFolderSources,
  folderSourcesAtMost,
  type KillSwitch,
  killSwitchInSettings,
  type KillSwitchLayer,
  killSwitchOf,
  type KillSwitchOrigin,
  killSwitchVariable
} from "./ClaudeEnvironment.js"
import {
  decodeSettingsText,
  type FileOutcome,
  fileOutcome,
  type FileRead,
  notApplicableReading,
  parseSettingsText,
  unreadableReading
} from "./ClaudeSettingsFile.js"
import { type Observed, read, unreadable, valueOf } from "./Observed.js"
import type { ReceiverMode, SessionPolicy, SettingsSource, SourceReading } from "./Policy.js"
import { senderModes, senderOutcome, unseenFor } from "./Policy.js"
import { decidePolicy, type PolicyEvidence } from "./PolicyDecision.js"
import { type ModeFile, noModeSettings, receiverModeOf } from "./PolicyPermissionMode.js"

/** One file and what reading it gave. `path` is null for JSON text given with `--settings`, and where the file is unknown. */
export interface FileFact {
  readonly path: string | null
  readonly read: FileRead
}

/** What `/proc` shows of how the process was started. */
export interface Launch {
  /** The argument vector (`/proc/P/cmdline` split on NUL), program first. */
  readonly cmdline: Observed<ReadonlyArray<string>>
  /** The environment it was started with (`/proc/P/environ`); another user's process is not readable. */
  readonly environ: Observed<ReadonlyMap<string, string>>
}

/** What a background job's state (`<home>/jobs/<jobId>/state.json`) holds of its launch flags. */
export interface JobLaunch {
  readonly path: string
  /** `respawnFlags`, the job's own flags without the program. */
  readonly flags: Observed<ReadonlyArray<string>>
}

/**
 * Whether an argument vector is a pre-started background worker's (`claude bg-spare --bg-spare
 * <claim socket>`): Claude Code's daemon starts such a process before any job exists, and hands it
 * a job's flags over its claim socket later. Its arguments then say nothing of the job's settings.
 */
export const isPreStartedWorker = (cmdline: ReadonlyArray<string>): boolean => cmdline[0] === "claude bg-spare" || optionsOf(cmdline)[0] === "--bg-spare"

/**
 * A background worker that started before its job (a pre-started worker's arguments, or
 * `CLAUDE_BG_SOURCE=spare` in its launch environment) is handed its real arguments and environment
 * by Claude Code's daemon when a job claims it: `/proc` still shows the worker's, which say nothing
 * about the settings it now runs with. The job's own flags are in its job state, which Claude Code
 * keeps for restarting it; its environment is seen nowhere.
 */
export const trustedLaunch = (launch: Launch, job: JobLaunch | null = null): Launch & { readonly claimedSpare: boolean } => {
  const environ = valueOf(launch.environ)
  const cmdline = valueOf(launch.cmdline)
  const worker = (cmdline !== null && isPreStartedWorker(cmdline)) || environ?.get("CLAUDE_BG_SOURCE")?.trim() === "spare"
  if (!worker) return { cmdline: launch.cmdline, environ: launch.environ, claimedSpare: false }
  const stale = "this background worker was started before its job and received the job's arguments and environment later: /proc still shows the worker's"
  const flags: Observed<ReadonlyArray<string>> = job === null
    ? unreadable(`${stale}, and the record names no job whose state holds them`)
    : job.flags._tag === "Read"
    ? read(["claude", ...job.flags.value])
    : unreadable(`${stale}; the job's flags in ${job.path} could not be read: ${job.flags.reason}`)
  return { cmdline: flags, environ: unreadable(stale), claimedSpare: true }
}

export interface SessionFacts extends Launch {
  readonly pid: number
  readonly sessionId: string
  readonly name: string
  /**
   * Whether the registry record names a messaging socket: the session started its inbox, which
   * Claude Code does only with messaging on and outside `--restricted`.
   */
  readonly hasSocket: boolean
  /** The managed files in merge order; a drop-in folder that could not be listed is a `Failed` entry after the base file. */
  readonly managed: ReadonlyArray<FileFact>
  /** What `--settings` names, read; null when the command line names none or could not be read. */
  readonly flag: FileFact | null
  readonly user: FileFact
  readonly project: FileFact
  /** In merge order, as `projectSettingsFiles` lists them. */
  readonly local: ReadonlyArray<FileFact>
  /**
   * The files that may be Claude Code's global config, whose `env` is applied before any settings
   * file's: `.claude.json` in the session's `CLAUDE_CONFIG_DIR`, or in its home folder (not
   * `~/.claude/`), or a legacy `.config.json` in the Claude home. When more than one may be it (the
   * environment could not be read, or a legacy file exists), the kill switch is known from them
   * only when they agree.
   */
  readonly globalConfig: ReadonlyArray<FileFact>
  readonly sdkHosted: boolean
  /** A background job's state, for a `kind: "bg"` record with a job id; null otherwise. */
  readonly job?: JobLaunch | null | undefined
  /** The record's `kind` is `bg`. */
  readonly background?: boolean | undefined
}

type FolderSource = "userSettings" | "projectSettings" | "localSettings"

interface Outcomes {
  readonly managed: ReadonlyArray<FileOutcome>
  readonly flag: ReadonlyArray<FileOutcome>
  readonly user: ReadonlyArray<FileOutcome>
  readonly project: ReadonlyArray<FileOutcome>
  readonly local: ReadonlyArray<FileOutcome>
}

/** Claude Code does not start with `--settings` JSON text it cannot parse, so a live session seen with one read something else. */
const flagOutcome = (fact: FileFact): FileOutcome => {
  const outcome = fileOutcome("flagSettings", fact.path, fact.read)
  return fact.path === null && outcome.reading.problem === "invalid_json"
    ? {
      reading: unreadableReading("flagSettings", null, "Claude Code does not start with --settings JSON text it cannot parse"),
      killSwitch: null
    }
    : outcome
}

const flagOutcomes = (cmdline: Observed<ReadonlyArray<string>>, args: ClaudeArguments | null, fact: FileFact | null): ReadonlyArray<FileOutcome> => {
  if (cmdline._tag === "Unreadable" || args === null) {
    const reason = cmdline._tag === "Unreadable" ? cmdline.reason : "unknown"
    return [{ reading: unreadableReading("flagSettings", null, `the process's arguments could not be read: ${reason}`), killSwitch: null }]
  }
  if (args.settings === null) {
    return [{ reading: notApplicableReading("flagSettings", null, "no --settings argument"), killSwitch: undefined }]
  }
  return fact === null
    ? [{ reading: unreadableReading("flagSettings", null, "the --settings file was not read"), killSwitch: null }]
    : [flagOutcome(fact)]
}

/** A parent's `--managed-settings` combines with the files by its own rules: its say is not known here. */
const parentManaged: FileOutcome = {
  reading: unreadableReading(
    "policySettings",
    null,
    "--managed-settings hands this session a parent's managed settings, combined with these files by rules not visible here"
  ),
  killSwitch: null
}

/**
 * A folder source's files: not applicable when the session does not read that source, or may not,
 * by `atMost` (the sources it reads at most, when which it reads is unknown).
 */
const folderOutcomes = (
  source: FolderSource,
  facts: ReadonlyArray<FileFact>,
  atMost: ReadonlyArray<SettingsSource> | null
): ReadonlyArray<FileOutcome> =>
  atMost !== null && !atMost.includes(source)
    ? facts.map((fact) => ({
      reading: notApplicableReading(source, fact.path, "excluded by --setting-sources or --restricted"),
      killSwitch: undefined
    }))
    : facts.map((fact) => fileOutcome(source, fact.path, fact.read))

/** One kill switch layer from files merged in order: the last that sets the variable, unknown when an unknown file follows it. */
const layerOf = (origin: KillSwitchOrigin, outcomes: ReadonlyArray<FileOutcome>): KillSwitchLayer => {
  let layer: KillSwitchLayer = { origin, _tag: "NotSet" }
  for (const { killSwitch } of outcomes) {
    if (killSwitch === null) layer = { origin, _tag: "Unreadable" }
    else if (killSwitch !== undefined) layer = { origin, _tag: "Set", value: killSwitch }
  }
  return layer
}

/**
 * `.claude.json` is not a settings file, but its `env` reaches the environment all the same. It is
 * often large, and one read is shared by the sessions of a pass: parsed once per read.
 */
const globalConfigFileLayer = (read: FileRead): KillSwitchLayer => {
  if (read._tag === "Failed") return { origin: "globalConfig", _tag: "Unreadable" }
  if (read._tag !== "Bytes") return { origin: "globalConfig", _tag: "NotSet" }
  const known = globalConfigLayers.get(read)
  if (known !== undefined) return known
  const parsed = parseSettingsText(decodeSettingsText(read.bytes))
  const value = parsed._tag === "Document" ? killSwitchInSettings(parsed.document) : undefined
  const layer: KillSwitchLayer = value === undefined ? { origin: "globalConfig", _tag: "NotSet" } : { origin: "globalConfig", _tag: "Set", value }
  globalConfigLayers.set(read, layer)
  return layer
}

const globalConfigLayers = new WeakMap<FileRead, KillSwitchLayer>()

const sameLayer = (a: KillSwitchLayer, b: KillSwitchLayer): boolean => a._tag === b._tag && (a._tag !== "Set" || (b._tag === "Set" && a.value === b.value))

/** The global config's say: the one its candidate files agree on, or unknown. */
const globalConfigLayer = (candidates: ReadonlyArray<FileFact>, hasSocket: boolean): KillSwitchLayer => {
  const layers = candidates.map((fact) => globalConfigFileLayer(fact.read))
  const first = layers[0]
  if (first === undefined) return { origin: "globalConfig", _tag: "NotSet" }
  if (layers.every((layer) => sameLayer(layer, first)) && first._tag !== "Unreadable") return first
  return { origin: "globalConfig", _tag: hasSocket ? "NotOff" : "Unreadable" }
}

/**
 * A session that started its inbox had messaging on (or left to Anthropic's switch) when it
 * started: whatever its unreadable launch environment and `.claude.json` hold, together they do not
 * turn messaging off, unless a settings file read later overrides them, which is read here.
 */
const environmentLayer = (environ: Observed<ReadonlyMap<string, string>>, hasSocket: boolean): KillSwitchLayer => {
  if (environ._tag === "Unreadable") return { origin: "environment", _tag: hasSocket ? "NotOff" : "Unreadable" }
  const value = environ.value.get(killSwitchVariable)
  return value === undefined ? { origin: "environment", _tag: "NotSet" } : { origin: "environment", _tag: "Set", value }
}

/**
 * The user file's `env` counts only when user settings are read; when that is unknown, a user file
 * that sets the variable may or may not count.
 */
const userLayer = (outcomes: ReadonlyArray<FileOutcome>, enabled: ReadonlyArray<SettingsSource> | null): KillSwitchLayer => {
  const layer = layerOf("userSettings", outcomes)
  return enabled === null && layer._tag === "Set" ? { origin: "userSettings", _tag: "Unreadable" } : layer
}

const killSwitchFrom = (
  facts: SessionFacts,
  hasSocket: boolean,
  outcomes: Outcomes,
  enabled: ReadonlyArray<SettingsSource> | null
): KillSwitch =>
  killSwitchOf([
    environmentLayer(facts.environ, hasSocket),
    globalConfigLayer(facts.globalConfig, hasSocket),
    userLayer(outcomes.user, enabled),
    layerOf("flagSettings", outcomes.flag),
    layerOf("policySettings", outcomes.managed)
  ])

/** The readings, the kill switch and what is known of the setting sources, for `decidePolicy`. */
export const policyEvidenceOf = (untrusted: SessionFacts): PolicyEvidence & { readonly receiverMode: ReceiverMode } => {
  const trusted = trustedLaunch(untrusted, untrusted.job ?? null)
  const claimedSpare = trusted.claimedSpare
  const facts: SessionFacts = { ...untrusted, cmdline: trusted.cmdline, environ: trusted.environ }
  const cmdline = valueOf(facts.cmdline)
  const args = cmdline === null ? null : claudeArgumentsOf(cmdline)
  const enabled = args === null ? null : enabledFolderSources(args, valueOf(facts.environ))
  // A source the arguments leave out is out whatever the (unread) environment holds.
  const mayRead = enabled ?? (args === null ? null : folderSourcesAtMost(args))
  const managedFiles = facts.managed.map((fact) => fileOutcome("policySettings", fact.path, fact.read))
  const outcomes: Outcomes = {
    managed: args?.parentManagedSettings === true ? [...managedFiles, parentManaged] : managedFiles,
    flag: flagOutcomes(facts.cmdline, args, facts.flag),
    user: folderOutcomes("userSettings", [facts.user], mayRead),
    local: folderOutcomes("localSettings", facts.local, mayRead),
    project: folderOutcomes("projectSettings", [facts.project], mayRead)
  }
  const readings: ReadonlyArray<SourceReading> = [
    ...outcomes.managed,
    ...outcomes.flag,
    ...outcomes.user,
    ...outcomes.local,
    ...outcomes.project
  ].map((outcome) => outcome.reading)
  return {
    readings,
    settingSourcesKnown: enabled !== null,
    settingSourcesUnknownBecause: unknownSourcesBecause(facts),
    // A claimed spare bound its socket as a spare, before it received its environment.
    killSwitch: killSwitchFrom(facts, facts.hasSocket && !claimedSpare, outcomes, enabled),
    receiverMode: receiverModeOf({
      cmdline: facts.cmdline,
      environ: facts.environ,
      folderSourcesEnabled: enabled === null ? null : new Set(enabled),
      files: [...outcomes.managed, ...outcomes.flag, ...outcomes.user, ...outcomes.local, ...outcomes.project].map(modeFileOf),
      background: facts.background === true,
      bypassAccepted: bypassAcceptedOf(facts.globalConfig)
    })
  }
}

/** A file's say on the modes: none when Claude Code skips it, unknown when its say on the policy is. */
const modeFileOf = (outcome: FileOutcome): ModeFile => ({
  source: outcome.reading.source,
  path: outcome.reading.path,
  settings: outcome.permissions ??
    (outcome.killSwitch === null
      ? { _tag: "Unknown", reason: outcome.reading.detail ?? "could not be read" }
      : noModeSettings)
})

/**
 * Whether a global config accepts the bypass disclaimer. The file reader shares one read among all
 * sessions, and a global config can be large: it is parsed once per read, not once per session.
 */
const acceptedByBytes = new WeakMap<Uint8Array, boolean>()
const acceptedIn = (bytes: Uint8Array): boolean => {
  const known = acceptedByBytes.get(bytes)
  if (known !== undefined) return known
  const parsed = parseSettingsText(decodeSettingsText(bytes))
  const accepted = parsed._tag === "Document" && parsed.document["bypassPermissionsModeAccepted"] === true
  acceptedByBytes.set(bytes, accepted)
  return accepted
}

/** `bypassPermissionsModeAccepted` where the global config's candidate files agree on it; null when they do not or one is unreadable. */
const bypassAcceptedOf = (candidates: ReadonlyArray<FileFact>): boolean | null => {
  const answers = candidates.map((fact): boolean | null => {
    if (fact.read._tag === "Failed") return null
    if (fact.read._tag !== "Bytes") return false
    return acceptedIn(fact.read.bytes)
  })
  const first = answers[0] ?? false
  return answers.every((answer) => answer === first) ? first : null
}

const unknownSourcesBecause = (facts: Launch): string | undefined => {
  if (facts.cmdline._tag === "Unreadable") return `the process's arguments could not be read: ${facts.cmdline.reason};`
  if (facts.environ._tag === "Unreadable") return `the process's environment could not be read: ${facts.environ.reason};`
  return undefined
}

/** `policy --json`'s object for one session. */
export const sessionPolicyOf = (facts: SessionFacts): SessionPolicy => {
  const evidence = policyEvidenceOf(facts)
  const answer = decidePolicy(evidence)
  const decided = { effective: answer.effective, certainty: answer.certainty, receiverMode: evidence.receiverMode }
  return {
    pid: facts.pid,
    sessionId: facts.sessionId,
    name: facts.name,
    effective: answer.effective,
    decidedBy: answer.decidedBy,
    certainty: answer.certainty,
    sources: evidence.readings,
    unseen: unseenFor({
      sdkHosted: facts.sdkHosted,
      killSwitch: evidence.killSwitch.state,
      effective: answer.effective
    }),
    killSwitch: evidence.killSwitch,
    partialBecause: answer.partialBecause,
    receiverMode: evidence.receiverMode,
    forSender: senderModes.map((sender) => senderOutcome(decided, sender))
  }
}
