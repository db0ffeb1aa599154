/**
 * The inbound policy in effect for a live session: what Claude Code does with a message from
 * another session, as far as this machine shows it, and how sure that answer is.
 *
 * Two rules earn their place here. Every place Claude Code may read is reported with what it held,
 * so that a person can check the answer instead of trusting it. And an answer that depends on
 * something this machine could not read says so (`certainty: "partial"`): a sender that acts on a
 * guessed `accept` delivers into a session that never agreed to it.
 */
import * as Schema from "effect/Schema"
import { type KillSwitch, KillSwitchOrigins } from "./ClaudeEnvironment.js"
import { PermissionModeClass } from "./PermissionMode.js"
import { InboundPolicy } from "./Settings.js"

/** Claude Code's names for the five places its settings come from. */
export const SettingsSource = Schema.Literal(
  "policySettings",
  "flagSettings",
  "userSettings",
  "localSettings",
  "projectSettings"
)
export type SettingsSource = typeof SettingsSource.Type

/**
 * What one settings file held for `crossSessionInbound`:
 * - `absent`: the file does not exist, is empty or white space, or has no such member;
 * - `set`: one of `accept`, `hold`, `refuse`;
 * - `invalid`: Claude Code reads the file but takes no value from it, `problem` says why. An
 *   `invalid_value` holds messages (managed: refuses them); a user, project, local or flag file that
 *   is not JSON, not an object, not a regular file or too large is skipped as a whole, as if
 *   absent. A managed file like that stops Claude Code from starting, so a live session showing one
 *   has read something else, and what it holds is unknown;
 * - `unreadable`: this machine could not read it (permissions, an I/O error), or, for
 *   `flagSettings`, could not read the process's arguments. Claude Code may well hold a value
 *   there, and keeps using a copy read earlier when its own read fails;
 * - `not_applicable`: Claude Code does not read this source for this session: excluded by
 *   `--setting-sources` or `--restricted`, or, for `flagSettings`, no `--settings` was given.
 */
export const ReadingState = Schema.Literal("absent", "set", "invalid", "unreadable", "not_applicable")
export type ReadingState = typeof ReadingState.Type

/** Why an `invalid` file gives no value; the names follow `settings`' `problem` where they overlap. */
export const ReadingProblem = Schema.Literal("invalid_json", "not_an_object", "invalid_settings", "invalid_value", "not_a_file", "too_large")
export type ReadingProblem = typeof ReadingProblem.Type

/**
 * One file of one source. `path` is null for JSON text given on the command line and where no file
 * is named. `value` is the member's value for `set` and `invalid_value` (a long or nested invalid
 * value as a short JSON text), null otherwise. `detail` is a sentence for a person.
 */
export const SourceReading = Schema.Struct({
  source: SettingsSource,
  path: Schema.NullOr(Schema.String),
  value: Schema.Unknown,
  state: ReadingState,
  problem: Schema.NullOr(ReadingProblem),
  detail: Schema.NullOr(Schema.String)
})
export type SourceReading = typeof SourceReading.Type

/**
 * The rule that produced the answer: a source that decided outright, `repoSettings` when a
 * project's local or shared settings made it stricter (or matched a non-`accept` value), an
 * `invalidSetting` that forced `hold`, `disabled` by the kill switch, or Claude Code's `default`.
 */
export const DecidedBy = Schema.Literal(
  "policySettings",
  "flagSettings",
  "userSettings",
  "repoSettings",
  "invalidSetting",
  "disabled",
  "default"
)
export type DecidedBy = typeof DecidedBy.Type

export const Certainty = Schema.Literal("certain", "partial")
export type Certainty = typeof Certainty.Type

/** An input this machine could not read, and which could change the answer. */
export const UnreadInput = Schema.Struct({
  input: Schema.Literal(...SettingsSource.literals, "arguments", "environment"),
  path: Schema.NullOr(Schema.String),
  detail: Schema.String
})
export type UnreadInput = typeof UnreadInput.Type

/** What Claude Code may consult that no outside reader can see. */
export const Unseen = Schema.Literal(
  "serverManagedSettings",
  "mdmSettings",
  "policyHelper",
  "hostSettings",
  "remoteKillSwitch",
  "permissionModes",
  "senderModeFlag",
  "alwaysDeliverChoice"
)
export type Unseen = typeof Unseen.Type

export const unseenWords: Record<Unseen, string> = {
  serverManagedSettings: "managed settings your organization serves from Anthropic's servers, which can replace the managed files",
  mdmSettings: "operating-system managed policy (macOS configuration profiles, the Windows registry)",
  policyHelper: "the answer of a policy helper program that managed settings can name",
  hostSettings: "settings and managed settings an SDK host hands the session when it starts it",
  remoteKillSwitch: "the switch Claude Code fetches from Anthropic's servers, which decides whether messaging is on while CLAUDE_CODE_HARBOR_KITE is unset",
  permissionModes:
    "the permission mode each session runs in now (the receiver's launch mode is read; Shift+Tab changes it later), which decides delivery when no setting does",
  senderModeFlag:
    "the switch Claude Code fetches from Anthropic's servers (on unless switched off) under which a message carries its sender's permission mode: with it off, a session in bypass holds every message and one in another mode accepts every message",
  alwaysDeliverChoice: "the user's \"Always deliver in this session\" choice, which can deliver what the permission modes would hold"
}

export interface UnseenContext {
  /** Whether an SDK host started the session (its record's `entrypoint` is not the plain CLI). */
  readonly sdkHosted: boolean
  readonly killSwitch: KillSwitch["state"]
  readonly effective: InboundPolicy | null
}

/**
 * The inputs no outside reader can see that could matter for this answer, in the order Claude Code
 * consults them. Server-managed and operating-system managed settings are always named: they can
 * replace the managed files on any machine (on Linux the OS store is empty, except under WSL where
 * Claude Code reads the Windows one), and nothing here could tell that they are absent.
 */
export const unseenFor = (context: UnseenContext): ReadonlyArray<Unseen> => {
  const remoteSwitch = context.killSwitch !== "on" && context.killSwitch !== "off"
  const byModes = context.effective === null
  return [
    "serverManagedSettings",
    "mdmSettings",
    "policyHelper",
    ...(context.sdkHosted ? ["hostSettings" as const] : []),
    ...(remoteSwitch ? ["remoteKillSwitch" as const] : []),
    ...(byModes ? ["permissionModes" as const, "senderModeFlag" as const, "alwaysDeliverChoice" as const] : [])
  ]
}

export const KillSwitchState = Schema.Struct({
  state: Schema.Literal("on", "off", "unset", "not_off", "unknown"),
  origin: Schema.NullOr(Schema.Literal(...KillSwitchOrigins))
})

/**
 * The receiver's permission-mode class as it was launched (`PolicyPermissionMode`), which decides
 * delivery when no setting does. `class` is the one seen, null when it could be either; a
 * `partial` one names what was not read.
 */
export const ReceiverMode = Schema.Struct({
  class: Schema.NullOr(PermissionModeClass),
  /** The mode's own name where it is known (`default`, `plan`, `bypassPermissions`, …). */
  mode: Schema.NullOr(Schema.String),
  certainty: Certainty,
  partialBecause: Schema.Array(UnreadInput),
  caveat: Schema.String
})
export type ReceiverMode = typeof ReceiverMode.Type

export const receiverModeCaveat =
  "the mode the session was launched in: its user can switch it at any time (Shift+Tab), which nothing outside the process shows"

/** What happens to a message from a sender of one class: the policy's value, or the modes' parity when nothing sets one. */
export const SenderOutcome = Schema.Struct({
  senderMode: PermissionModeClass,
  /** null: the receiver's class is unknown. */
  outcome: Schema.NullOr(InboundPolicy),
  certainty: Certainty
})
export type SenderOutcome = typeof SenderOutcome.Type

/** `policy --json`'s object for one session. */
export const SessionPolicy = Schema.Struct({
  pid: Schema.Number,
  sessionId: Schema.String,
  name: Schema.String,
  /** null: Claude Code's default, which decides per message by the two sessions' permission modes. */
  effective: Schema.NullOr(InboundPolicy),
  decidedBy: DecidedBy,
  certainty: Certainty,
  /** Every file read, in the order Claude Code consults them; managed files first, base then drop-ins. */
  sources: Schema.Array(SourceReading),
  unseen: Schema.Array(Unseen),
  /** The kill switch `CLAUDE_CODE_HARBOR_KITE` and where its value comes from. */
  killSwitch: KillSwitchState,
  /** Empty when certain; otherwise what could not be read. */
  partialBecause: Schema.Array(UnreadInput),
  receiverMode: ReceiverMode,
  /** For a sender of each class (or the one asked for): what becomes of its message. */
  forSender: Schema.Array(SenderOutcome),
  /** The Claude home the session registered in: present when several homes are read. */
  home: Schema.optionalWith(Schema.String, { exact: true })
})
export type SessionPolicy = typeof SessionPolicy.Type

const sourceReadingJson = (r: SourceReading): SourceReading => ({
  source: r.source,
  path: r.path,
  value: r.value,
  state: r.state,
  problem: r.problem,
  detail: r.detail
})

const unreadInputJson = (u: UnreadInput): UnreadInput => ({ input: u.input, path: u.path, detail: u.detail })

/**
 * A policy as `SessionPolicy`'s encoding spells it (every key, in the schema's order, nothing
 * else), without building the schema's encoder: `policy --json` prints one per live session, and
 * the encoder cost more per session than reading its files. Every field's encoding is the identity,
 * so this is a projection; a property test holds it to the schema.
 */
export const sessionPolicyJson = (p: SessionPolicy): SessionPolicy => ({
  pid: p.pid,
  sessionId: p.sessionId,
  name: p.name,
  effective: p.effective,
  decidedBy: p.decidedBy,
  certainty: p.certainty,
  sources: p.sources.map(sourceReadingJson),
  unseen: [...p.unseen],
  killSwitch: { state: p.killSwitch.state, origin: p.killSwitch.origin },
  partialBecause: p.partialBecause.map(unreadInputJson),
  receiverMode: {
    class: p.receiverMode.class,
    mode: p.receiverMode.mode,
    certainty: p.receiverMode.certainty,
    partialBecause: p.receiverMode.partialBecause.map(unreadInputJson),
    caveat: p.receiverMode.caveat
  },
  forSender: p.forSender.map((o) => ({ senderMode: o.senderMode, outcome: o.outcome, certainty: o.certainty })),
  ...(p.home === undefined ? {} : { home: p.home })
})

/**
 * The inbound policy a sender of class `sender` meets: the effective value when one is set; else
 * Claude Code's parity rule, `accept` when the classes match and `hold` otherwise; null when the
 * receiver's class is unknown.
 */
export const effectiveFor = (policy: Pick<SessionPolicy, "effective" | "receiverMode">, sender: PermissionModeClass): InboundPolicy | null => {
  if (policy.effective !== null) return policy.effective
  const receiver = policy.receiverMode.class
  if (receiver === null) return null
  return receiver === sender ? "accept" : "hold"
}

/** The outcome for one sender class, sure only when every input to it is. */
export const senderOutcome = (
  policy: Pick<SessionPolicy, "effective" | "certainty" | "receiverMode">,
  sender: PermissionModeClass
): SenderOutcome => ({
  senderMode: sender,
  outcome: effectiveFor(policy, sender),
  certainty: policy.certainty === "certain" && (policy.effective !== null || policy.receiverMode.certainty === "certain") ? "certain" : "partial"
})

export const senderModes: ReadonlyArray<PermissionModeClass> = ["bypass", "prompting"]

/** What Claude Code does when nothing sets the policy. */
export const defaultPolicyWords = "Claude Code delivers automatically only when the sender's permission-mode class matches the receiver's, and holds otherwise"

const decidedByWords: Record<DecidedBy, string> = {
  policySettings: "set by managed settings",
  flagSettings: "set by the --settings argument",
  userSettings: "set by the user's settings",
  repoSettings: "made stricter by the project's settings",
  invalidSetting: "held because a settings file has an unrecognized value",
  disabled: "messaging is turned off by CLAUDE_CODE_HARBOR_KITE",
  default: "nothing sets it"
}

/** The answer in words, for people. */
export const describePolicy = (effective: InboundPolicy | null, decidedBy: DecidedBy): string =>
  effective === null ? `${defaultPolicyWords} (${decidedByWords[decidedBy]})` : `${effective} (${decidedByWords[decidedBy]})`
