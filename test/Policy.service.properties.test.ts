/**
 * `policy` never reports a value looser than a source the rules say can tighten it, over generated
 * sessions run through the shipped memory layer: files as Claude Code's /config or a person would
 * write them (a value, an unrecognized value, other keys only, broken JSON, nothing), `--settings`
 * as JSON text, `--setting-sources`, `--restricted` and the kill switch in the launch environment.
 *
 * The oracle reads the generated intent, never the code under test: the lower bound of a session's
 * policy is the strictest of every enabled local and project value, `hold` while an enabled user,
 * flag, local or project file holds an unrecognized value, `refuse` for an unrecognized managed
 * value or a kill switch that is off, and the value of the first of managed, flag, user that sets one.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { InboundPolicy } from "../src/domain/Settings.js"
import { makeMemoryPolicyWorld, onlyPolicy } from "./support/policyWorlds.js"

const rank: Record<InboundPolicy, number> = { accept: 0, hold: 1, refuse: 2 }

/** What a generated file holds for `crossSessionInbound`. */
type FileIntent =
  | { readonly _tag: "missing" }
  | { readonly _tag: "unset" }
  | { readonly _tag: "value"; readonly value: InboundPolicy }
  | { readonly _tag: "unrecognized"; readonly raw: unknown }
  | { readonly _tag: "broken" }

const fileIntent: fc.Arbitrary<FileIntent> = fc.oneof(
  fc.constant<FileIntent>({ _tag: "missing" }),
  fc.constant<FileIntent>({ _tag: "unset" }),
  fc.constantFrom<InboundPolicy>("accept", "hold", "refuse").map((value): FileIntent => ({ _tag: "value", value })),
  fc.constantFrom<unknown>("Accept", "maybe", null, 1, "", ["hold"]).map((raw): FileIntent => ({ _tag: "unrecognized", raw })),
  fc.constant<FileIntent>({ _tag: "broken" })
)

/** Managed files Claude Code would refuse to start on are left out: a live session never read one. */
const managedIntent = fileIntent.filter((intent) => intent._tag !== "broken")

const textOf = (intent: FileIntent): string | undefined => {
  switch (intent._tag) {
    case "missing":
      return undefined
    case "unset":
      return JSON.stringify({ permissions: { allow: [] } })
    case "value":
      return JSON.stringify({ crossSessionInbound: intent.value })
    case "unrecognized":
      return JSON.stringify({ crossSessionInbound: intent.raw })
    case "broken":
      return "{\"crossSessionInbound\": \"refuse\",,}"
  }
}

const session = fc.record({
  managed: managedIntent,
  dropIn: managedIntent,
  flag: fc.oneof(fc.constant<FileIntent>({ _tag: "missing" }), fileIntent.filter((i) => i._tag !== "broken")),
  user: fileIntent,
  local: fileIntent,
  project: fileIntent,
  sources: fc.constantFrom<ReadonlyArray<string> | null>(null, [], ["user"], ["project", "local"], ["user", "local"]),
  restricted: fc.boolean(),
  kite: fc.constantFrom<string | undefined>(undefined, "1", "0", "false", "banana", "")
})

type SessionIntent = typeof session extends fc.Arbitrary<infer A> ? A : never

/** The least strict value the rules allow for the intent; null when nothing can hold or refuse it. */
const lowerBound = (s: SessionIntent): number => {
  const kiteOff = s.kite !== undefined && s.kite.trim() !== "" && !["1", "true", "yes", "on"].includes(s.kite.trim().toLowerCase())
  if (kiteOff) return rank.refuse
  const enabled = (name: "user" | "project" | "local") => !s.restricted && (s.sources === null || s.sources.includes(name))
  const bounds: Array<number> = [rank.accept]
  const managed = [s.managed, s.dropIn]
  // The later managed file wins; an unrecognized managed value counts as refuse in its file.
  const managedValue = [...managed].reverse().find((i) => i._tag === "value" || i._tag === "unrecognized")
  const outright = [
    managedValue === undefined ? undefined : managedValue._tag === "value" ? managedValue.value : ("refuse" as const),
    s.flag._tag === "value" ? s.flag.value : undefined,
    enabled("user") && s.user._tag === "value" ? s.user.value : undefined
  ].find((v) => v !== undefined)
  if (outright !== undefined) bounds.push(rank[outright])
  for (const [name, intent] of [["local", s.local], ["project", s.project]] as const) {
    if (enabled(name) && intent._tag === "value") bounds.push(rank[intent.value])
  }
  const unrecognized = [s.flag, ...(enabled("user") ? [s.user] : []), ...(enabled("local") ? [s.local] : []), ...(enabled("project") ? [s.project] : [])]
  if (unrecognized.some((i) => i._tag === "unrecognized")) bounds.push(rank.hold)
  return Math.max(...bounds)
}

describe("policy, over generated sessions in the memory world", () => {
  it("is never looser than a source the rules say can tighten it, and certain when everything was read", async () => {
    await fc.assert(
      fc.asyncProperty(session, async (s) => {
        const world = makeMemoryPolicyWorld()
        const write = (file: string, intent: FileIntent) => {
          const text = textOf(intent)
          if (text !== undefined) world.write(file, text)
        }
        write(`${world.managed}/managed-settings.json`, s.managed)
        write(`${world.managed}/managed-settings.d/10-drop-in.json`, s.dropIn)
        write(`${world.home}/settings.json`, s.user)
        write(`${world.base}/work/.claude/settings.local.json`, s.local)
        write(`${world.base}/work/.claude/settings.json`, s.project)
        const flagText = textOf(s.flag)
        const args = [
          ...(flagText === undefined ? [] : ["--settings", flagText]),
          ...(s.sources === null ? [] : ["--setting-sources", s.sources.join(",")]),
          ...(s.restricted ? ["--restricted"] : [])
        ]
        const kiteOn = s.kite === undefined || s.kite.trim() === "" || ["1"].includes(s.kite)
        await world.startSession({ args, env: s.kite === undefined ? {} : { CLAUDE_CODE_HARBOR_KITE: s.kite }, socket: kiteOn && !s.restricted })
        const policy = await onlyPolicy(world)
        const reported = policy.effective === null ? rank.accept : rank[policy.effective]
        expect(reported).toBeGreaterThanOrEqual(lowerBound(s))
        // Every file here was readable, and so were the arguments and the environment.
        expect(policy.certainty).toBe("certain")
        if (lowerBound(s) > rank.accept) expect(policy.effective).not.toBeNull()
      }),
      { numRuns: 100 }
    )
  }, 120_000)
})
