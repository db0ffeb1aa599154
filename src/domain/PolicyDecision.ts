/**
 * How Claude Code 2.1.332 decides the inbound policy of a session, and how sure an outside reader
 * can be of that answer.
 *
 * The rules, as Claude Code applies them to the settings it has loaded:
 * 1. `CLAUDE_CODE_HARBOR_KITE` turned off: `refuse`, before anything else.
 * 2. The first of managed, `--settings`, user settings that holds a value decides outright.
 * 3. Local, then project settings may only make it stricter (accept < hold < refuse); a stricter
 *    value, or the same non-`accept` value over a flag or user value, is credited to `repoSettings`.
 *    They can never make it looser, nor turn the default into `accept`.
 * 4. An unrecognized value in a user, flag, local or project file is dropped, and while one is
 *    present the result is at least `hold`. In a managed file it counts as `refuse`.
 * 5. Nothing set: no value; Claude Code decides per message by the two sessions' permission modes.
 *
 * Certainty is decided by brute force rather than by a list of special cases, so that no case can
 * be forgotten: every input this machine could not read is given every value it could hold, and
 * the answer is `certain` only when all of them lead to the same effective value. Each source is
 * varied on its own, which can only find more combinations than are really possible: an answer
 * may come out `partial` where a finer analysis would be sure, never the reverse.
 */
import type { KillSwitch } from "./ClaudeEnvironment.js"
import type { DecidedBy, SettingsSource, SourceReading, UnreadInput } from "./Policy.js"
import type { InboundPolicy } from "./Settings.js"

/** What one source gives Claude Code once its files are merged: a value, and whether an unrecognized one was dropped. */
export interface Contribution {
  readonly value: InboundPolicy | null
  readonly invalid: boolean
}

/** One complete, concrete state of everything the decision reads. */
export interface Scenario {
  readonly sources: Readonly<Record<SettingsSource, Contribution>>
  readonly disabled: boolean
}

export interface Decision {
  readonly effective: InboundPolicy | null
  readonly decidedBy: DecidedBy
}

const strictness: Record<InboundPolicy, number> = { accept: 0, hold: 1, refuse: 2 }
const outright = ["policySettings", "flagSettings", "userSettings"] as const
const tightening = ["localSettings", "projectSettings"] as const

/** Claude Code's decision for a scenario where everything is known. */
export const decideScenario = ({ disabled, sources }: Scenario): Decision => {
  if (disabled) return { effective: "refuse", decidedBy: "disabled" }
  let effective: InboundPolicy | null = null
  let decidedBy: DecidedBy = "default"
  for (const source of outright) {
    const value = sources[source].value
    if (value !== null) {
      effective = value
      decidedBy = source
      break
    }
  }
  for (const source of tightening) {
    const value = sources[source].value
    if (value === null) continue
    if (strictness[value] > strictness[effective ?? "accept"]) {
      effective = value
      decidedBy = "repoSettings"
    } else if (value !== "accept" && value === effective && decidedBy !== "policySettings") {
      decidedBy = "repoSettings"
    }
  }
  const invalidPresent = Object.values(sources).some((contribution) => contribution.invalid)
  if (strictness[effective ?? "accept"] < strictness.hold && invalidPresent) {
    return { effective: "hold", decidedBy: "invalidSetting" }
  }
  return { effective, decidedBy }
}

/** What this machine read, for one session. */
export interface PolicyEvidence {
  /** Every file read, grouped by nothing: within a source, in the order Claude Code merges them (the later wins). */
  readonly readings: ReadonlyArray<SourceReading>
  /**
   * False when the process's arguments or launch environment could not be read: then
   * `--setting-sources` and `--restricted` are unknown, and user, project and local settings may
   * not count at all.
   */
  readonly settingSourcesKnown: boolean
  /** Why they are not known, for the answer's `partialBecause`. */
  readonly settingSourcesUnknownBecause?: string | undefined
  readonly killSwitch: KillSwitch
}

export interface PolicyAnswer extends Decision {
  readonly certainty: "certain" | "partial"
  readonly partialBecause: ReadonlyArray<UnreadInput>
}

const sources: ReadonlyArray<SettingsSource> = ["policySettings", "flagSettings", "userSettings", "localSettings", "projectSettings"]
const folderOrUser: ReadonlySet<SettingsSource> = new Set(["userSettings", "projectSettings", "localSettings"])
const nothing: Contribution = { value: null, invalid: false }
const values: ReadonlyArray<InboundPolicy> = ["accept", "hold", "refuse"]

/** Every contribution a file could make; in a managed file an unrecognized value is `refuse`, already listed. */
const anyValue = (reading: SourceReading): ReadonlyArray<Contribution> => [
  nothing,
  ...values.map((value) => ({ value, invalid: false })),
  ...(reading.source === "policySettings" ? [] : [{ value: null, invalid: true }])
]

/** Everything one file may give: one thing when it was read, any value when it was not. */
const fileContributions = (reading: SourceReading): ReadonlyArray<Contribution> => {
  const managed = reading.source === "policySettings"
  switch (reading.state) {
    case "set":
      return [{ value: reading.value as InboundPolicy, invalid: false }]
    case "invalid":
      if (reading.problem === "invalid_value") return [managed ? { value: "refuse", invalid: false } : { value: null, invalid: true }]
      // Claude Code refuses to start on a broken managed file: this session read it before it broke.
      return managed ? anyValue(reading) : [nothing]
    case "unreadable":
      return anyValue(reading)
    case "absent":
    case "not_applicable":
      return [nothing]
  }
}

const merge = (earlier: Contribution, later: Contribution): Contribution => ({
  value: later.value ?? earlier.value,
  invalid: earlier.invalid || later.invalid
})

const keyOf = (contribution: Contribution): string => `${contribution.value}/${contribution.invalid}`

const distinct = (contributions: ReadonlyArray<Contribution>): ReadonlyArray<Contribution> => [...new Map(contributions.map((c) => [keyOf(c), c])).values()]

/**
 * Every contribution a source may make, the one its readable files show first (an unreadable file
 * taken as giving nothing). A source that may be switched off by unknown arguments may also give nothing.
 */
const sourceContributions = (
  source: SettingsSource,
  readings: ReadonlyArray<SourceReading>,
  settingSourcesKnown: boolean
): ReadonlyArray<Contribution> => {
  // While every file read so far gives one thing, the one possible contribution is the seen one:
  // the combinations are built only once a file may give several.
  let possible: ReadonlyArray<Contribution> | null = null
  let seen = nothing
  for (const reading of readings) {
    if (reading.source !== source) continue
    const options = fileContributions(reading)
    if (options.length > 1 || possible !== null) {
      possible = distinct((possible ?? [seen]).flatMap((earlier) => options.map((option) => merge(earlier, option))))
    }
    seen = merge(seen, options[0]!)
  }
  const mayBeOff = !settingSourcesKnown && folderOrUser.has(source)
  if (possible === null) return mayBeOff && keyOf(seen) !== keyOf(nothing) ? [seen, nothing] : [seen]
  return distinct([seen, ...possible, ...(mayBeOff ? [nothing] : [])])
}

const killSwitchOptions = (killSwitch: KillSwitch): ReadonlyArray<boolean> =>
  killSwitch.state === "off" ? [true] : killSwitch.state === "unknown" ? [false, true] : [false]

/** The dimensions along which the unread inputs vary: one per source, and the kill switch. The first option of each is what was seen. */
interface Dimensions {
  readonly sources: ReadonlyArray<ReadonlyArray<Contribution>>
  readonly disabled: ReadonlyArray<boolean>
}

const scenarioAt = (dimensions: Dimensions, indices: ReadonlyArray<number>): Scenario => {
  const at = (i: number) => dimensions.sources[i]![indices[i]!]!
  return {
    // In the order of `sources`.
    sources: { policySettings: at(0), flagSettings: at(1), userSettings: at(2), localSettings: at(3), projectSettings: at(4) },
    disabled: dimensions.disabled[indices[sources.length]!]!
  }
}

/** Every combination of option indices, one index per dimension. */
const combinations = (sizes: ReadonlyArray<number>): ReadonlyArray<ReadonlyArray<number>> =>
  sizes.reduce<ReadonlyArray<ReadonlyArray<number>>>(
    (partial, size) => partial.flatMap((prefix) => Array.from({ length: size }, (_, i) => [...prefix, i])),
    [[]]
  )

const noDimensions: ReadonlySet<number> = new Set()

/**
 * The dimensions whose value alone can change the answer: two combinations that differ only there
 * give different effective values.
 */
const decisiveDimensions = (dimensions: Dimensions): ReadonlySet<number> => {
  const sizes = [...dimensions.sources.map((options) => options.length), dimensions.disabled.length]
  // Everything was read (the common case): one combination, and nothing to vary.
  if (sizes.every((size) => size < 2)) return noDimensions
  const all = combinations(sizes)
  const effectives = all.map((indices) => String(decideScenario(scenarioAt(dimensions, indices)).effective))
  const decisive = new Set<number>()
  sizes.forEach((size, dimension) => {
    if (size < 2) return
    const seenWithOthersFixed = new Map<string, string>()
    all.forEach((indices, n) => {
      const others = indices.map((index, d) => (d === dimension ? "*" : index)).join(",")
      const earlier = seenWithOthersFixed.get(others)
      if (earlier === undefined) seenWithOthersFixed.set(others, effectives[n]!)
      else if (earlier !== effectives[n]) decisive.add(dimension)
    })
  })
  return decisive
}

const unreadInputs = (evidence: PolicyEvidence, decisive: ReadonlySet<number>): ReadonlyArray<UnreadInput> => {
  const inputs: Array<UnreadInput> = []
  sources.forEach((source, dimension) => {
    if (!decisive.has(dimension)) return
    for (const reading of evidence.readings) {
      if (reading.source === source && reading.state === "unreadable") {
        inputs.push({ input: source, path: reading.path, detail: reading.detail ?? "could not be read" })
      }
    }
  })
  const folderSourceDecisive = sources.some((source, dimension) => folderOrUser.has(source) && decisive.has(dimension))
  if (!evidence.settingSourcesKnown && folderSourceDecisive) {
    inputs.push({
      input: "arguments",
      path: null,
      detail: `${
        evidence.settingSourcesUnknownBecause ?? "the process's arguments or environment could not be read;"
      } so whether it reads user, project and local settings (--setting-sources, --restricted) is unknown`
    })
  }
  if (decisive.has(sources.length)) {
    inputs.push({ input: "environment", path: null, detail: "whether CLAUDE_CODE_HARBOR_KITE turns messaging off could not be read" })
  }
  return inputs
}

/**
 * The policy in effect as far as this machine shows it. `effective` and `decidedBy` are Claude
 * Code's answer for what was read, an unreadable file taken as giving nothing; `certain` means no
 * value of what could not be read would change `effective`. A `certain` answer may still name one
 * rule where another would give the same value (a `refuse` from user settings while the kill
 * switch is unknown): the value is the fact, the rule is the first one seen to produce it.
 */
export const decidePolicy = (evidence: PolicyEvidence): PolicyAnswer => {
  const dimensions: Dimensions = {
    sources: sources.map((source) => sourceContributions(source, evidence.readings, evidence.settingSourcesKnown)),
    disabled: killSwitchOptions(evidence.killSwitch)
  }
  const seen = decideScenario(scenarioAt(dimensions, [...sources.map(() => 0), 0]))
  const decisive = decisiveDimensions(dimensions)
  return decisive.size === 0
    ? { effective: seen.effective, decidedBy: seen.decidedBy, certainty: "certain", partialBecause: [] }
    : { effective: seen.effective, decidedBy: seen.decidedBy, certainty: "partial", partialBecause: unreadInputs(evidence, decisive) }
}
