/**
 * Properties of the receiver's permission-mode class and of `effectiveFor`.
 *
 * `effectiveFor` is held against the decision table written out here: a set value is met by every
 * sender; with none, the parity of the two classes decides; an unknown receiver class gives no
 * answer. The launch mode is held against its meaning: `certain` only when every way of filling in
 * a file that was not read gives the same class, and never `certain` when the arguments were not read.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { read, unreadable } from "../src/domain/Observed.js"
import type { PermissionModeClass } from "../src/domain/PermissionMode.js"
import { effectiveFor, type ReceiverMode, type SettingsSource } from "../src/domain/Policy.js"
import { type ModeFacts, type ModeFile, type ModeSettings, receiverModeOf } from "../src/domain/PolicyPermissionMode.js"
import type { InboundPolicy } from "../src/domain/Settings.js"

const classes = fc.constantFrom<PermissionModeClass>("bypass", "prompting")
const policy = fc.constantFrom<InboundPolicy | null>("accept", "hold", "refuse", null)

const table: Record<string, InboundPolicy> = {
  "bypass/bypass": "accept",
  "prompting/prompting": "accept",
  "bypass/prompting": "hold",
  "prompting/bypass": "hold"
}

const receiver = (cls: PermissionModeClass | null): ReceiverMode => ({ class: cls, mode: null, certainty: "certain", partialBecause: [], caveat: "" })

describe("effectiveFor", () => {
  it("agrees with the decision table", () =>
    fc.assert(
      fc.property(policy, fc.option(classes, { nil: null }), classes, (effective, receiverClass, sender) => {
        const got = effectiveFor({ effective, receiverMode: receiver(receiverClass) }, sender)
        const expected = effective !== null ? effective : receiverClass === null ? null : table[`${receiverClass}/${sender}`]
        expect(got).toBe(expected)
      })
    ))
})

const sources: ReadonlyArray<SettingsSource> = ["policySettings", "flagSettings", "userSettings", "localSettings", "projectSettings"]
const modes = fc.constantFrom(undefined, "default", "plan", "acceptEdits", "auto", "bypassPermissions", "manual")
const known: fc.Arbitrary<ModeSettings> = fc.record({
  _tag: fc.constant("Known" as const),
  defaultMode: modes,
  disableBypass: fc.constantFrom(undefined, true, false),
  skipBypassPrompt: fc.boolean()
})
const settings: fc.Arbitrary<ModeSettings> = fc.oneof(known, fc.constant<ModeSettings>({ _tag: "Unknown", reason: "could not be read" }))
const file: fc.Arbitrary<ModeFile> = fc.record({ source: fc.constantFrom(...sources), path: fc.constant(null), settings })
const argumentWords = fc.array(
  fc.constantFrom(
    ["--dangerously-skip-permissions"],
    ["--permission-mode", "plan"],
    ["--permission-mode", "bypassPermissions"],
    ["--permission-mode", "default"],
    ["--inherit-permission-mode", "bypassPermissions"],
    ["--proactivity", "proactive"],
    ["--model", "opus"]
  ),
  { maxLength: 3 }
).map((groups) => ["claude", ...groups.flat()])

const facts: fc.Arbitrary<ModeFacts> = fc.record({
  cmdline: fc.oneof({ weight: 5, arbitrary: argumentWords.map((words) => read(words)) }, {
    weight: 1,
    arbitrary: fc.constant(unreadable<ReadonlyArray<string>>("no"))
  }),
  environ: fc.oneof(
    fc.constant(read(new Map<string, string>())),
    fc.constant(read(new Map([["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1"]]))),
    fc.constant(unreadable<ReadonlyMap<string, string>>("no"))
  ),
  folderSourcesEnabled: fc.constantFrom<ReadonlySet<SettingsSource> | null>(
    new Set(["userSettings", "projectSettings", "localSettings"]),
    new Set(),
    null
  ),
  files: fc.array(file, { maxLength: 4 }),
  background: fc.boolean(),
  bypassAccepted: fc.constantFrom(true, false, null)
})

/** Every way of filling in the unread: each unknown file made each concrete thing it could say. */
const fillings: ReadonlyArray<ModeSettings> = [
  { _tag: "Known", defaultMode: undefined, disableBypass: undefined, skipBypassPrompt: false },
  { _tag: "Known", defaultMode: "bypassPermissions", disableBypass: undefined, skipBypassPrompt: true },
  { _tag: "Known", defaultMode: "default", disableBypass: undefined, skipBypassPrompt: false },
  { _tag: "Known", defaultMode: undefined, disableBypass: true, skipBypassPrompt: false }
]

const filled = (facts: ModeFacts, index: number, with_: ModeSettings): ModeFacts => ({
  ...facts,
  files: facts.files.map((f, i) => (i === index ? { ...f, settings: with_ } : f))
})

describe("the receiver's launch mode class", () => {
  it("is never certain when the arguments were not read", () =>
    fc.assert(
      fc.property(facts, (facts) => {
        const mode = receiverModeOf(facts)
        if (facts.cmdline._tag === "Unreadable") expect(mode).toMatchObject({ class: null, certainty: "partial" })
      })
    ))

  it("is certain only when every way of filling in one unread file gives the same class", () =>
    fc.assert(
      fc.property(facts, (facts) => {
        const mode = receiverModeOf(facts)
        if (mode.certainty !== "certain") return
        facts.files.forEach((f, index) => {
          if (f.settings._tag !== "Unknown") return
          for (const filling of fillings) expect(receiverModeOf(filled(facts, index, filling)).class).toBe(mode.class)
        })
        if (facts.environ._tag === "Unreadable") {
          for (const environ of [new Map(), new Map([["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1"]])]) {
            expect(receiverModeOf({ ...facts, environ: read(environ) }).class).toBe(mode.class)
          }
        }
      })
    ))

  it("with everything read, is certain, and bypass only where a bypass candidate may run", () =>
    fc.assert(
      fc.property(facts, (facts) => {
        const allRead = facts.cmdline._tag === "Read" && facts.environ._tag === "Read" && facts.folderSourcesEnabled !== null &&
          (!facts.background || facts.bypassAccepted !== null) && facts.files.every((f) => f.settings._tag === "Known")
        if (!allRead) return
        const mode = receiverModeOf(facts)
        expect(mode.certainty).toBe("certain")
        const words = facts.cmdline._tag === "Read" ? facts.cmdline.value : []
        const anyBypass = words.includes("--dangerously-skip-permissions") || words.includes("bypassPermissions") ||
          facts.files.some((f) => f.settings._tag === "Known" && f.settings.defaultMode === "bypassPermissions")
        if (!anyBypass) expect(mode.class).toBe("prompting")
        const scrubbed = facts.environ._tag === "Read" && facts.environ.value.get("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB") === "1"
        if (scrubbed) expect(mode.class).toBe("prompting")
        // A file counts only where Claude Code loads it: policy and flag always, the others as
        // `--setting-sources` names them.
        const inForce = facts.files.filter((f) =>
          f.source === "policySettings" || f.source === "flagSettings" || facts.folderSourcesEnabled?.has(f.source) === true
        )
        const disabled = inForce.some((f) => f.settings._tag === "Known" && f.settings.disableBypass === true) &&
          !inForce.some((f) => f.settings._tag === "Known" && f.settings.disableBypass === false)
        if (disabled) expect(mode.class).toBe("prompting")
      })
    ))
})

describe("the receiver's launch mode, as Claude Code 2.1.332 picks it", () => {
  const known = (defaultMode: string | undefined): ModeSettings => ({ _tag: "Known", defaultMode, disableBypass: undefined, skipBypassPrompt: false })
  const launched = (args: ReadonlyArray<string>, files: ReadonlyArray<ModeFile> = []): ReceiverMode =>
    receiverModeOf({
      cmdline: read(["claude", ...args]),
      environ: read(new Map()),
      folderSourcesEnabled: new Set(["userSettings", "projectSettings", "localSettings"]),
      files,
      background: false,
      bypassAccepted: true
    })
  const fileOf = (source: SettingsSource, defaultMode: string): ModeFile => ({ source, path: null, settings: known(defaultMode) })

  it("with no mode given, is Claude Code's own default: prompting, its name (auto or default) unknown", () => {
    expect(launched([])).toMatchObject({ class: "prompting", mode: null, certainty: "certain" })
    expect(launched(["--permission-mode", "plan"])).toMatchObject({ class: "prompting", mode: "plan", certainty: "certain" })
  })

  it("takes auto from the user's, managed or --settings files, and ignores a project's auto as Claude Code does", () => {
    expect(launched([], [fileOf("userSettings", "auto")])).toMatchObject({ class: "prompting", mode: "auto" })
    expect(launched([], [fileOf("projectSettings", "auto")])).toMatchObject({ class: "prompting", mode: null })
    // Ignored, the project's auto leaves the inherited bypass to decide.
    expect(launched(["--inherit-permission-mode", "bypassPermissions"], [fileOf("localSettings", "auto")])).toMatchObject({
      class: "bypass",
      mode: "bypassPermissions",
      certainty: "certain"
    })
  })

  it("plan mode is bypass in an interactive session where bypass is available (--allow-dangerously-skip-permissions), as Claude Code counts it", () => {
    const allow = "--allow-dangerously-skip-permissions"
    // Whether the session is interactive (a terminal on its stdout) is not read: bypass as seen from a terminal, partial.
    expect(launched([allow, "--permission-mode", "plan"])).toMatchObject({ class: "bypass", mode: "plan", certainty: "partial" })
    expect(launched([allow], [fileOf("userSettings", "plan")])).toMatchObject({ class: "bypass", mode: "plan", certainty: "partial" })
    expect(launched([allow, "--permission-mode", "plan", "--sdk-url", "ws://x"])).toMatchObject({ class: "prompting", certainty: "certain" })
    // Launched in bypass, the session may go into plan and stays of the bypass class; here it is launched in bypass.
    expect(launched(["--dangerously-skip-permissions"])).toMatchObject({ class: "bypass", mode: "bypassPermissions" })
    // Not available: no allowance, a print session, --restricted, or bypass disabled by settings.
    expect(launched(["--permission-mode", "plan"])).toMatchObject({ class: "prompting", mode: "plan", certainty: "certain" })
    expect(launched([allow, "--permission-mode", "plan", "-p", "hi"])).toMatchObject({ class: "prompting", certainty: "certain" })
    expect(launched([allow, "--permission-mode", "plan", "--restricted"])).toMatchObject({ class: "prompting", certainty: "certain" })
    const disabled: ModeFile = {
      source: "userSettings",
      path: null,
      settings: { _tag: "Known", defaultMode: undefined, disableBypass: true, skipBypassPrompt: false }
    }
    expect(launched([allow, "--permission-mode", "plan"], [disabled])).toMatchObject({ class: "prompting", certainty: "certain" })
    // Allowed, in a mode other than plan: the allowance alone changes nothing.
    expect(launched([allow, "--permission-mode", "acceptEdits"])).toMatchObject({ class: "prompting", certainty: "certain" })
    // CLAUDE_CODE_RESTRICTED makes bypass unavailable too; an environment not read leaves it open.
    const withEnviron = (environ: ModeFacts["environ"]) =>
      receiverModeOf({
        cmdline: read(["claude", allow, "--permission-mode", "plan"]),
        environ,
        folderSourcesEnabled: new Set(["userSettings", "projectSettings", "localSettings"]),
        files: [],
        background: false,
        bypassAccepted: true
      })
    expect(withEnviron(read(new Map([["CLAUDE_CODE_RESTRICTED", "1"]])))).toMatchObject({ class: "prompting", certainty: "certain" })
    expect(withEnviron(unreadable("EACCES"))).toMatchObject({ class: "bypass", certainty: "partial" })
    expect(withEnviron(read(new Map())).partialBecause.map((input) => input.detail)).toEqual([
      "plan mode with bypass available counts as bypass only in an interactive session (a terminal on its stdout), which is not read here"
    ])
  })

  it("with a proactivity level and no mode on the command line, lets the level pick: never bypass, its name unknown", () => {
    expect(launched(["--proactivity", "proactive"], [fileOf("userSettings", "plan")])).toMatchObject({ class: "prompting", mode: null })
    expect(launched(["--proactivity", "proactive", "--permission-mode", "plan"])).toMatchObject({ class: "prompting", mode: "plan" })
  })
})
