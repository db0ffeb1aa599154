/**
 * From what this machine shows about one session to its `policy` answer: the pure half of the
 * `policy` command. The service reads the process's arguments and environment and the files named
 * by `ManagedSettings`, `ProjectSettings` and the command line, and hands the results here.
 *
 * A fact that could not be read stays unread all the way to the answer: it is never replaced by
 * a default that would make the answer look surer than it is.
 */
import { type ClaudeArguments, claudeArgumentsOf } from "./ClaudeArguments.js"
import {
  enabledFolderSources,
  type KillSwitch,
  type KillSwitchLayer,
  type KillSwitchOrigin,
  killSwitchInSettings,
  killSwitchOf,
  killSwitchVariable
} from "./ClaudeEnvironment.js"
import {
  decodeSettingsText,
  type FileOutcome,
  type FileRead,
  fileOutcome,
  notApplicableReading,
  parseSettingsText,
  unreadableReading
} from "./ClaudeSettingsFile.js"
import type { SessionPolicy, SettingsSource, SourceReading } from "./Policy.js"
import { unseenFor } from "./Policy.js"
import { decidePolicy, type PolicyEvidence } from "./PolicyDecision.js"

/** One file and what reading it gave. `path` is null for JSON text given with `--settings`. */
export interface FileFact {
  readonly path: string | null
  readonly read: FileRead
}

export interface SessionFacts {
  readonly pid: number
  readonly sessionId: string
  readonly name: string
  /**
   * Whether the registry record names a messaging socket: the session started its inbox, which
   * Claude Code does only with messaging on. False for a claimed spare (below), whose environment
   * changed after its inbox started.
   */
  readonly hasSocket: boolean
  /**
   * The argument vector (`/proc/P/cmdline` split on NUL), or null when it could not be read. Also
   * null when it may not be what the process runs with: a background worker taken from Claude
   * Code's pool of spares receives its real arguments and environment from the daemon after it
   * started, and `/proc` still shows the spare's.
   */
  readonly cmdline: ReadonlyArray<string> | null
  /** The launch environment, or null when it could not be read (another user's process, or a claimed spare as above). */
  readonly environ: ReadonlyMap<string, string> | null
  /** The managed files in merge order; a drop-in folder that could not be listed is a `Failed` entry after the base file. */
  readonly managed: ReadonlyArray<FileFact>
  /** What `--settings` names, read; null when the command line names none or could not be read. */
  readonly flag: FileFact | null
  readonly user: FileFact
  readonly project: FileFact
  /** In merge order, as `projectSettingsFiles` lists them. */
  readonly local: ReadonlyArray<FileFact>
  /**
   * Claude Code's global config, `.claude.json` in the session's `CLAUDE_CONFIG_DIR`, or in the
   * user's home folder (not `~/.claude/`) without it. Its `env` is applied before any settings file's.
   */
  readonly globalConfig: FileFact
  readonly platform: string
  readonly wsl: boolean
  readonly sdkHosted: boolean
}

const folderSources = ["userSettings", "projectSettings", "localSettings"] as const

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

const flagOutcomes = (args: ClaudeArguments | null, fact: FileFact | null): ReadonlyArray<FileOutcome> => {
  if (args === null) {
    return [{ reading: unreadableReading("flagSettings", null, "the process's arguments could not be read"), killSwitch: null }]
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

const folderOutcomes = (
  source: typeof folderSources[number],
  facts: ReadonlyArray<FileFact>,
  enabled: ReadonlyArray<SettingsSource> | null
): ReadonlyArray<FileOutcome> =>
  enabled !== null && !enabled.includes(source)
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

/** `.claude.json` is not a settings file, but its `env` reaches the environment all the same. */
const globalConfigLayer = (read: FileRead): KillSwitchLayer => {
  if (read._tag === "Failed") return { origin: "globalConfig", _tag: "Unreadable" }
  const parsed = read._tag === "Bytes" ? parseSettingsText(decodeSettingsText(read.bytes)) : null
  const value = parsed?._tag === "Document" ? killSwitchInSettings(parsed.document) : undefined
  return value === undefined ? { origin: "globalConfig", _tag: "NotSet" } : { origin: "globalConfig", _tag: "Set", value }
}

const environmentLayer = (facts: SessionFacts): KillSwitchLayer => {
  if (facts.environ === null) return { origin: "environment", _tag: facts.hasSocket ? "NotOff" : "Unreadable" }
  const value = facts.environ.get(killSwitchVariable)
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
  outcomes: Outcomes,
  enabled: ReadonlyArray<SettingsSource> | null
): KillSwitch =>
  killSwitchOf([
    environmentLayer(facts),
    globalConfigLayer(facts.globalConfig.read),
    userLayer(outcomes.user, enabled),
    layerOf("flagSettings", outcomes.flag),
    layerOf("policySettings", outcomes.managed)
  ])

/** The readings, the kill switch and what is known of the setting sources, for `decidePolicy`. */
export const policyEvidenceOf = (facts: SessionFacts): PolicyEvidence => {
  const args = facts.cmdline === null ? null : claudeArgumentsOf(facts.cmdline)
  const enabled = args === null ? null : enabledFolderSources(args, facts.environ)
  const managedFiles = facts.managed.map((fact) => fileOutcome("policySettings", fact.path, fact.read))
  const outcomes: Outcomes = {
    managed: args?.parentManagedSettings === true ? [...managedFiles, parentManaged] : managedFiles,
    flag: flagOutcomes(args, facts.flag),
    user: folderOutcomes("userSettings", [facts.user], enabled),
    local: folderOutcomes("localSettings", facts.local, enabled),
    project: folderOutcomes("projectSettings", [facts.project], enabled)
  }
  const readings: ReadonlyArray<SourceReading> = [
    ...outcomes.managed,
    ...outcomes.flag,
    ...outcomes.user,
    ...outcomes.local,
    ...outcomes.project
  ].map((outcome) => outcome.reading)
  return { readings, settingSourcesKnown: enabled !== null, killSwitch: killSwitchFrom(facts, outcomes, enabled) }
}

/** `policy --json`'s object for one session. */
export const sessionPolicyOf = (facts: SessionFacts): SessionPolicy => {
  const evidence = policyEvidenceOf(facts)
  const answer = decidePolicy(evidence)
  return {
    pid: facts.pid,
    sessionId: facts.sessionId,
    name: facts.name,
    effective: answer.effective,
    decidedBy: answer.decidedBy,
    certainty: answer.certainty,
    sources: evidence.readings,
    unseen: unseenFor({
      platform: facts.platform,
      wsl: facts.wsl,
      sdkHosted: facts.sdkHosted,
      killSwitch: evidence.killSwitch.state,
      effective: answer.effective
    }),
    killSwitch: evidence.killSwitch,
    partialBecause: answer.partialBecause
  }
}
