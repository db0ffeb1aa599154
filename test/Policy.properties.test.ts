/**
 * Properties of the policy decision over generated evidence: any mix of managed files, flag, user,
 * local and project files holding a value, an unrecognized value, nothing, a broken document, or
 * unreadable; setting sources known or not; the kill switch in any state.
 *
 * The oracle states the rules another way than the code does: the effective value is the strictest
 * of the outright value, every non-accept project value, and `hold` when an unrecognized value was
 * dropped. Certainty is checked against its meaning: every way of filling in what was not read
 * gives the same value when the answer says `certain`, and some way does not when it says `partial`.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { KillSwitch } from "../src/domain/ClaudeEnvironment.js"
import type { DecidedBy, SettingsSource, SourceReading } from "../src/domain/Policy.js"
import { decidePolicy, type PolicyEvidence } from "../src/domain/PolicyDecision.js"
import type { InboundPolicy } from "../src/domain/Settings.js"

const rank: Record<InboundPolicy, number> = { accept: 0, hold: 1, refuse: 2 }
const folderSources: ReadonlyArray<SettingsSource> = ["userSettings", "localSettings", "projectSettings"]

const value = fc.constantFrom<InboundPolicy>("accept", "hold", "refuse")

/** One file's reading, as a reader that could read it would report it. */
const readableFile = (source: SettingsSource): fc.Arbitrary<SourceReading> =>
  fc.oneof(
    fc.constant(file(source, "absent", null, null)),
    value.map((v) => file(source, "set", v, null)),
    fc.constantFrom("Accept", null, 3, "").map((raw) => file(source, "invalid", raw, "invalid_value")),
    // Skipped documents: a broken user, flag or project file says nothing. (A broken managed file
    // means Claude Code read something else, which the code treats as unknown; kept out of the oracle.)
    source === "policySettings"
      ? fc.constant(file(source, "absent", null, null))
      : fc.constantFrom(file(source, "invalid", null, "invalid_json"), file(source, "invalid", null, "not_an_object"))
  )

const file = (
  source: SettingsSource,
  state: SourceReading["state"],
  value: unknown,
  problem: SourceReading["problem"]
): SourceReading => ({ source, path: `/f/${source}`, value, state, problem, detail: null })

const anyFile = (source: SettingsSource, unreadableWeight: number): fc.Arbitrary<SourceReading> =>
  fc.oneof({ arbitrary: readableFile(source), weight: 4 }, {
    arbitrary: fc.constant(file(source, "unreadable", null, null)),
    weight: unreadableWeight
  })

/** A source: its files in merge order, or excluded as a whole. */
const sourceReadings = (source: SettingsSource, maxFiles: number, unreadableWeight: number) =>
  fc.oneof(
    { arbitrary: fc.array(anyFile(source, unreadableWeight), { minLength: 1, maxLength: maxFiles }), weight: 6 },
    {
      arbitrary: fc.constant([file(source, "not_applicable", null, null)]),
      weight: source === "policySettings" ? 0 : 1
    }
  )

const killSwitch = (unknownWeight: number): fc.Arbitrary<KillSwitch> =>
  fc.oneof(
    { arbitrary: fc.constantFrom<KillSwitch["state"]>("on", "unset", "not_off"), weight: 6 },
    { arbitrary: fc.constant<KillSwitch["state"]>("off"), weight: 1 },
    { arbitrary: fc.constant<KillSwitch["state"]>("unknown"), weight: unknownWeight }
  ).map((state) => ({ state, origin: null }))

const evidence = (unreadableWeight: number, unknownWeight: number): fc.Arbitrary<PolicyEvidence> =>
  fc.record({
    managed: sourceReadings("policySettings", 3, unreadableWeight),
    flag: sourceReadings("flagSettings", 1, unreadableWeight),
    user: sourceReadings("userSettings", 1, unreadableWeight),
    local: sourceReadings("localSettings", 2, unreadableWeight),
    project: sourceReadings("projectSettings", 1, unreadableWeight),
    settingSourcesKnown: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: unknownWeight }),
    killSwitch: killSwitch(unknownWeight)
  }).map((r) => ({
    readings: [...r.managed, ...r.flag, ...r.user, ...r.local, ...r.project],
    settingSourcesKnown: r.settingSourcesKnown,
    killSwitch: r.killSwitch
  }))

const fullyKnown = evidence(0, 0)
const anything = evidence(2, 1)

// ---- The oracle: the rules, for evidence with nothing unread ----

const of = (e: PolicyEvidence, source: SettingsSource) => e.readings.filter((r) => r.source === source)

/** A source's value after its files are merged: the last one holding a value; in managed files an unrecognized value is refuse. */
const mergedValue = (readings: ReadonlyArray<SourceReading>): InboundPolicy | null => {
  let result: InboundPolicy | null = null
  for (const r of readings) {
    if (r.state === "set") result = r.value as InboundPolicy
    else if (r.problem === "invalid_value" && r.source === "policySettings") result = "refuse"
  }
  return result
}

const droppedInvalid = (e: PolicyEvidence) => e.readings.some((r) => r.source !== "policySettings" && r.problem === "invalid_value")

const strictest = (values: ReadonlyArray<InboundPolicy>): InboundPolicy | null =>
  values.reduce<InboundPolicy | null>((a, b) => (a === null || rank[b] > rank[a] ? b : a), null)

const expected = (e: PolicyEvidence): { effective: InboundPolicy | null; decidedBy: DecidedBy } => {
  if (e.killSwitch.state === "off") return { effective: "refuse", decidedBy: "disabled" }
  const outrightSource = (["policySettings", "flagSettings", "userSettings"] as const).find((s) => mergedValue(of(e, s)) !== null)
  const outright = outrightSource === undefined ? null : mergedValue(of(e, outrightSource))
  const repo = [mergedValue(of(e, "localSettings")), mergedValue(of(e, "projectSettings"))].filter(
    (v): v is InboundPolicy => v !== null && v !== "accept"
  )
  const effective = strictest([...(outright === null ? [] : [outright]), ...repo, ...(droppedInvalid(e) ? ["hold" as const] : [])])
  if (effective === null) return { effective, decidedBy: "default" }
  const floor = rank[outright ?? "accept"]
  if (droppedInvalid(e) && Math.max(floor, ...repo.map((v) => rank[v])) < rank.hold) return { effective, decidedBy: "invalidSetting" }
  const repoCredited = repo.some((v) => rank[v] > floor || (v === outright && outrightSource !== "policySettings"))
  return { effective, decidedBy: repoCredited ? "repoSettings" : outrightSource! }
}

// ---- Completions: every way of filling in what was not read ----

const concreteFiles = (source: SettingsSource): ReadonlyArray<SourceReading> => [
  file(source, "absent", null, null),
  ...(["accept", "hold", "refuse"] as const).map((v) => file(source, "set", v, null)),
  file(source, "invalid", "x", "invalid_value")
]

/** Every fully known evidence the unread parts could turn out to be. */
const completions = (e: PolicyEvidence): ReadonlyArray<PolicyEvidence> => {
  let partial: ReadonlyArray<ReadonlyArray<SourceReading>> = [[]]
  for (const r of e.readings) {
    const options = r.state === "unreadable" ? concreteFiles(r.source) : [r]
    partial = partial.flatMap((prefix) => options.map((o) => [...prefix, o]))
  }
  const exclusions: ReadonlyArray<ReadonlyArray<SettingsSource>> = e.settingSourcesKnown
    ? [[]]
    : [
      [],
      ["userSettings"],
      ["localSettings"],
      ["projectSettings"],
      ["userSettings", "localSettings"],
      [
        "userSettings",
        "projectSettings"
      ],
      ["localSettings", "projectSettings"],
      folderSources
    ]
  const sourceChoices = exclusions.map((excluded) => new Set<SettingsSource>(excluded))
  const kills: ReadonlyArray<KillSwitch["state"]> = e.killSwitch.state === "unknown" ? ["on", "off"] : [e.killSwitch.state]
  return partial.flatMap((readings) =>
    sourceChoices.flatMap((excluded) =>
      kills.map((state) => ({
        readings: readings.map((r) => (excluded.has(r.source) ? file(r.source, "not_applicable", null, null) : r)),
        settingSourcesKnown: true,
        killSwitch: { state, origin: null }
      }))
    )
  )
}

const unreadCount = (e: PolicyEvidence) =>
  e.readings.filter((r) => r.state === "unreadable").length + (e.settingSourcesKnown ? 0 : 1) + (e.killSwitch.state === "unknown" ? 1 : 0)

describe("the policy decision, over generated evidence", () => {
  it("follows the rules whenever everything could be read, and is then certain", () => {
    fc.assert(
      fc.property(fullyKnown, (e) => {
        const answer = decidePolicy(e)
        expect({ effective: answer.effective, decidedBy: answer.decidedBy }).toEqual(expected(e))
        expect(answer.certainty).toBe("certain")
        expect(answer.partialBecause).toEqual([])
      }),
      { numRuns: 3000 }
    )
  })

  it("is never looser than a readable project or local value, and at least holds while an unrecognized value is dropped", () => {
    fc.assert(
      fc.property(anything, (e) => {
        const { effective } = decidePolicy(e)
        if (e.killSwitch.state === "off") return
        const applicable = (r: SourceReading) => r.state !== "unreadable" && r.state !== "not_applicable"
        const floors = [
          mergedValue(of(e, "localSettings").filter(applicable)),
          mergedValue(of(e, "projectSettings").filter(applicable)),
          ...(e.readings.some((r) => applicable(r) && r.source !== "policySettings" && r.problem === "invalid_value")
            ? ["hold" as const]
            : [])
        ].filter((v): v is InboundPolicy => v !== null && v !== "accept")
        for (const floor of floors) {
          expect(effective).not.toBeNull()
          expect(rank[effective!]).toBeGreaterThanOrEqual(rank[floor])
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("refuses, certainly, whatever else holds, when the kill switch is off", () => {
    fc.assert(
      fc.property(anything, (e) => {
        const answer = decidePolicy({ ...e, killSwitch: { state: "off", origin: "environment" } })
        expect(answer).toEqual({ effective: "refuse", decidedBy: "disabled", certainty: "certain", partialBecause: [] })
      })
    )
  })

  it("is certain exactly when every way of filling in what was not read gives the same value", () => {
    const fewUnknowns = anything.filter((e) => unreadCount(e) <= 3)
    fc.assert(
      fc.property(fewUnknowns, (e) => {
        const answer = decidePolicy(e)
        const outcomes = new Set(completions(e).map((c) => String(expected(c).effective)))
        expect(answer.certainty).toBe(outcomes.size === 1 ? "certain" : "partial")
        expect(outcomes.has(String(answer.effective))).toBe(true)
      }),
      { numRuns: 1500 }
    )
  })

  it("names as the reason for a partial answer only inputs that were really not read", () => {
    fc.assert(
      fc.property(anything, (e) => {
        const answer = decidePolicy(e)
        expect(answer.partialBecause.length > 0).toBe(answer.certainty === "partial")
        for (const unread of answer.partialBecause) {
          if (unread.input === "arguments") expect(e.settingSourcesKnown).toBe(false)
          else if (unread.input === "environment") expect(e.killSwitch.state).toBe("unknown")
          else expect(of(e, unread.input).some((r) => r.state === "unreadable")).toBe(true)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("never credits a source it could not read", () => {
    fc.assert(
      fc.property(anything, (e) => {
        const { decidedBy, effective } = decidePolicy(e)
        const read = (source: SettingsSource) => of(e, source).filter((r) => r.state !== "unreadable" && r.state !== "not_applicable")
        switch (decidedBy) {
          case "policySettings":
          case "flagSettings":
          case "userSettings":
            expect(mergedValue(read(decidedBy))).toBe(effective)
            break
          case "repoSettings":
            expect([mergedValue(read("localSettings")), mergedValue(read("projectSettings"))]).toContain(effective)
            break
          case "invalidSetting":
            expect(effective).toBe("hold")
            expect(e.readings.some((r) => r.state === "invalid" && r.problem === "invalid_value")).toBe(true)
            break
          case "disabled":
            expect(e.killSwitch.state).toBe("off")
            break
          case "default":
            expect(effective).toBeNull()
        }
      }),
      { numRuns: 3000 }
    )
  })
})
