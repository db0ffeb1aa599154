/**
 * The human renderings, and the shape of `inspect`'s rows. Every text that came from a record, a
 * file or the command line goes through `terminalSafe`.
 */
import * as Schema from "effect/Schema"
import type { DeliveryResult } from "../domain/Delivery.js"
import { defaultPolicyWords, describePolicy, receiverModeCaveat, type SessionPolicy, unseenWords } from "../domain/Policy.js"
import type { Session } from "../domain/Session.js"
import type { SessionEvent } from "../domain/SessionEvent.js"
import { absentPolicyWords, type SettingsView, userScopeNote } from "../domain/Settings.js"
import { type RegistryEntry, VerdictName } from "../domain/Verdict.js"
import { describeVerdict } from "../domain/VerdictWords.js"
import type { WaitOutcome } from "../services/Wait.js"
import { table, terminalSafe } from "./Text.js"

export const orDash = (value: string | number | null): string => (value === null ? "-" : String(value))

/** An unknown status shows its raw text in brackets, so that it is visible but not mistaken for a known one. */
export const statusText = (session: Session): string => session.status ?? (session.rawStatus === null ? "-" : `(${session.rawStatus})`)

/** `list`'s status: a stopped process says so, as its recorded status is not what it does now. */
const listStatus = (session: Session): string => session.stopped ? `${statusText(session)}, stopped` : statusText(session)

/** Why a session has no address, in a word or two. */
const unaddressableText = (session: Session): string | null =>
  session.unaddressable === "other_user" ? "another user's session" : session.unaddressable === "no_socket" ? "no socket" : null

const yesNo = (value: boolean): string => (value ? "yes" : "no")

/** An empty answer, and the directory that does not exist when that is why it is empty. */
export const nothing = (what: string, missing: string | undefined): string => missing === undefined ? what : `${what} (${terminalSafe(missing)} does not exist)`

/** A HOME column, last, when the rows come from several Claude homes (they carry `home`); else none. */
const withHomeColumn = <A extends { readonly home?: string | undefined }>(
  headers: ReadonlyArray<string>,
  items: ReadonlyArray<A>,
  row: (item: A) => ReadonlyArray<string>
): string =>
  items.some((item) => item.home !== undefined)
    ? table([...headers, "HOME"], items.map((item) => [...row(item), item.home ?? "-"]))
    : table([...headers], items.map((item) => [...row(item)]))

export const sessionsTable = (sessions: ReadonlyArray<Session>, missing?: string): string =>
  sessions.length === 0
    ? nothing("no live sessions", missing)
    : withHomeColumn(
      ["PID", "NAME", "STATUS", "SESSION ID", "ADDRESS", "CWD"],
      sessions,
      (s) => [String(s.pid), s.name, listStatus(s), s.sessionId, orDash(s.address), orDash(s.cwd)]
    )

/**
 * `inspect --json`'s rows: `{file, verdict, detail, pid, sessionId, name, transcriptPath,
 * transcriptUpdatedAtMs}` (the transcript's fields null but for a live session whose transcript was
 * found), and `home` over several homes. `inspectRow` builds them in this order with these types, so
 * the command prints them as they are; a test holds the two to the same JSON.
 */
export const InspectRow = Schema.Struct({
  file: Schema.String,
  verdict: VerdictName,
  /** The verdict as a sentence. */
  detail: Schema.String,
  pid: Schema.NullOr(Schema.Number),
  sessionId: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  transcriptPath: Schema.NullOr(Schema.String),
  transcriptUpdatedAtMs: Schema.NullOr(Schema.Number),
  home: Schema.optionalWith(Schema.String, { exact: true })
})
export type InspectRow = typeof InspectRow.Type

export const inspectRow = (entry: RegistryEntry): InspectRow => {
  const session = entry.verdict._tag === "live" ? entry.verdict.session : undefined
  return {
    file: entry.file,
    verdict: entry.verdict._tag,
    detail: describeVerdict(entry.verdict),
    pid: entry.pid,
    sessionId: entry.sessionId,
    name: entry.name,
    transcriptPath: session?.transcriptPath ?? null,
    transcriptUpdatedAtMs: session?.transcriptUpdatedAtMs ?? null,
    ...(entry.home === undefined ? {} : { home: entry.home })
  }
}

export const entriesTable = (entries: ReadonlyArray<RegistryEntry>, missing?: string): string =>
  entries.length === 0
    ? nothing("no registry files", missing)
    : withHomeColumn(["FILE", "VERDICT", "PID", "NAME", "DETAIL"], entries, (e) => [
      e.file.slice(e.file.lastIndexOf("/") + 1),
      e.verdict._tag,
      orDash(e.pid),
      orDash(e.name),
      describeVerdict(e.verdict)
    ])

const detailFields: ReadonlyArray<readonly [string, (s: Session) => string | number | null]> = [
  ["pid", (s) => s.pid],
  ["sessionId", (s) => s.sessionId],
  ["name", (s) => s.name],
  ["address", (s) => s.address],
  ["status", statusText],
  ["cwd", (s) => s.cwd],
  ["socketPath", (s) => s.socketPath],
  ["kind", (s) => s.kind],
  ["entrypoint", (s) => s.entrypoint],
  ["nameSource", (s) => s.nameSource],
  ["version", (s) => s.version],
  ["tmux", (s) => s.tmux],
  ["waitingFor", (s) => s.waitingFor],
  ["jobId", (s) => s.jobId],
  ["file", (s) => s.file],
  ["stopped", (s) => yesNo(s.stopped)],
  ["unaddressable", unaddressableText]
]

/** The fields only some answers have: shown when the session carries them. */
const optionalDetailFields: ReadonlyArray<readonly [string, (s: Session) => string | number | null | undefined]> = [
  ["transcriptPath", (s) => s.transcriptPath],
  ["transcriptUpdatedAt", (s) => (typeof s.transcriptUpdatedAtMs === "number" ? new Date(s.transcriptUpdatedAtMs).toISOString() : s.transcriptUpdatedAtMs)],
  ["home", (s) => s.home]
]

export const sessionDetails = (session: Session): string => {
  const fields = [
    ...detailFields,
    ...optionalDetailFields.flatMap(([label, get]) => {
      const value = get(session)
      return value === undefined ? [] : [[label, () => value] as const]
    })
  ]
  const width = Math.max(...fields.map(([label]) => label.length))
  return fields.map(([label, get]) => `${label.padEnd(width)}  ${terminalSafe(orDash(get(session)))}`).join("\n")
}

/** A few labelled lines; the path is the only text that did not come from this program. */
export const settingsText = (view: SettingsView, missing?: string): string =>
  [
    nothing(`settings file        ${terminalSafe(view.path)}`, missing),
    `revision             ${view.revision}`,
    `crossSessionInbound  ${view.crossSessionInbound ?? absentPolicyWords}`,
    userScopeNote
  ].join("\n")

/** The fields a person tells sessions apart by; the timestamps are only named when they change. */
const shownFields: ReadonlyArray<readonly [string, (s: Session) => string | number | null]> = [
  ["name", (s) => s.name],
  ["address", (s) => s.address],
  ["status", statusText],
  ["waitingFor", (s) => s.waitingFor],
  ["sessionId", (s) => s.sessionId],
  ["cwd", (s) => s.cwd],
  ["kind", (s) => s.kind],
  ["entrypoint", (s) => s.entrypoint],
  ["nameSource", (s) => s.nameSource],
  ["jobId", (s) => s.jobId],
  ["version", (s) => s.version],
  ["tmux", (s) => s.tmux],
  ["socketPath", (s) => s.socketPath],
  ["stopped", (s) => yesNo(s.stopped)],
  ["unaddressable", unaddressableText]
]
const timeFields = ["statusUpdatedAtMs", "updatedAtMs", "startedAtMs"] as const

const differences = (session: Session, previous: Session): string => {
  const shown = shownFields.flatMap(([label, get]) => get(session) === get(previous) ? [] : [`${label} ${orDash(get(previous))} -> ${orDash(get(session))}`])
  const times = timeFields.filter((field) => session[field] !== previous[field])
  return [...shown, ...times].join(", ")
}

/** `+ appeared  PID  NAME  STATUS  CWD`, `~ changed …`, `- gone      PID  NAME  (VERDICT)`. */
export const eventLine = (event: SessionEvent): string => {
  const { name, pid } = event.session
  // Over several homes, the line ends with the session's home.
  const home = event.session.home === undefined ? "" : `  [${event.session.home}]`
  switch (event._tag) {
    case "appeared":
      return terminalSafe(`+ appeared  ${pid}  ${name}  ${statusText(event.session)}  ${orDash(event.session.cwd)}${home}`)
    case "changed":
      return terminalSafe(`~ changed   ${pid}  ${name}  ${statusText(event.session)}  (${differences(event.session, event.previous)})${home}`)
    case "gone":
      return terminalSafe(`- gone      ${pid}  ${name}  (${event.verdict})${home}`)
  }
}

/** `null` is Claude Code's default, which decides per message by the two sessions' permission modes. */
const effectiveText = (policy: SessionPolicy): string => policy.effective ?? "default"

/** The receiver's launch class, `?` marking a partial one. */
const modeText = (policy: SessionPolicy): string =>
  policy.receiverMode.class === null ? "unknown" : `${policy.receiverMode.class}${policy.receiverMode.certainty === "partial" ? "?" : ""}`

/** The launch mode's name; a known class without one is Claude Code's own default. */
const modeName = ({ receiverMode }: SessionPolicy): string =>
  receiverMode.mode !== null
    ? ` (${receiverMode.mode})`
    : receiverMode.class === null
    ? ""
    : " (Claude Code's own default: auto where the account may use it, else default)"

/** What a sender of each class meets, `?` marking a partial answer. */
const forSenderText = (policy: SessionPolicy): string =>
  policy.forSender.map((o) => `${o.senderMode}:${o.outcome ?? "unknown"}${o.certainty === "partial" ? "?" : ""}`).join(" ")

export const policiesTable = (policies: ReadonlyArray<SessionPolicy>): string =>
  withHomeColumn(
    ["PID", "NAME", "SESSION ID", "EFFECTIVE", "DECIDED BY", "CERTAINTY", "MODE", "FOR SENDER"],
    policies,
    (p) => [String(p.pid), p.name, p.sessionId, effectiveText(p), p.decidedBy, p.certainty, modeText(p), forSenderText(p)]
  )

/** A source's value as a person reads it: a string as it is (made safe by the table), anything else as JSON. */
const valueText = (value: unknown): string => value === null || value === undefined ? "-" : typeof value === "string" ? value : JSON.stringify(value)

const sourcesTable = (policy: SessionPolicy): string =>
  table(
    ["SOURCE", "STATE", "VALUE", "PATH", "DETAIL"],
    policy.sources.map((s) => [
      s.source,
      s.problem === null ? s.state : `${s.state} (${s.problem})`,
      valueText(s.value),
      s.path ?? "-",
      s.detail ?? ""
    ])
  )

/** The lines under a table: what `default` and `partial` mean, what was not read, what cannot be seen. */
const policyNotes = (policies: ReadonlyArray<SessionPolicy>): ReadonlyArray<string> => {
  const notes: Array<string> = []
  if (policies.some((p) => p.effective === null)) notes.push(`default: ${defaultPolicyWords}.`)
  for (const p of policies) {
    for (const unread of p.partialBecause) {
      notes.push(terminalSafe(`partial (pid ${p.pid}): ${unread.detail}${unread.path === null ? "" : ` (${unread.path})`}`))
    }
    for (const unread of p.receiverMode.partialBecause) {
      notes.push(terminalSafe(`mode partial (pid ${p.pid}): ${unread.detail}${unread.path === null ? "" : ` (${unread.path})`}`))
    }
  }
  if (policies.length > 0) notes.push(`mode: ${receiverModeCaveat}.`)
  const unseen = [...new Set(policies.flatMap((p) => p.unseen))]
  if (unseen.length > 0) {
    notes.push("Not visible from outside a session, so not taken into account:")
    for (const u of unseen) notes.push(`  - ${unseenWords[u]}`)
  }
  return notes
}

export const policiesText = (policies: ReadonlyArray<SessionPolicy>, missing?: string): string =>
  policies.length === 0 ? nothing("no live sessions", missing) : [policiesTable(policies), "", ...policyNotes(policies)].join("\n")

const killSwitchText = (policy: SessionPolicy): string => {
  const { origin, state } = policy.killSwitch
  const where = origin === null ? "" : ` (from ${origin})`
  switch (state) {
    case "off":
      return `off${where}: messaging is turned off`
    case "on":
      return `on${where}`
    case "unset":
      return "unset: Anthropic's own switch decides (on unless Anthropic turns it off)"
    case "not_off":
      return "not off: the session started its inbox, which it does only with messaging on"
    case "unknown":
      return "unknown: a place that could turn messaging off could not be read"
  }
}

/** One session: its row, how it was decided, every source read, and the notes. */
export const policyText = (policy: SessionPolicy): string =>
  [
    policiesTable([policy]),
    "",
    `decided by   ${describePolicy(policy.effective, policy.decidedBy)}`,
    `kill switch  CLAUDE_CODE_HARBOR_KITE ${killSwitchText(policy)}`,
    terminalSafe(`mode         ${modeText(policy)}${modeName(policy)}: ${policy.receiverMode.caveat}`),
    "",
    sourcesTable(policy),
    "",
    ...policyNotes([policy])
  ].join("\n")

/** What `wait` reached: a first line saying so, then the session as `resolve` shows it. */
export const waitText = (outcome: WaitOutcome): string =>
  outcome._tag === "Reached"
    ? `reached ${outcome.state}\n${sessionDetails(outcome.session)}`
    : outcome.session === null
    ? `gone (${outcome.verdict}): not live when the wait began`
    : `gone (${outcome.verdict})\n${sessionDetails(outcome.session)}`

const outcomeWords: Record<DeliveryResult["outcome"], string> = {
  delivered: "delivered to",
  held: "held for its user's approval by",
  refused: "refused by"
}

/**
 * `send`: one line saying what became of the message and for whom, the receipt on one line (a
 * receipt's line breaks are escaped, so it cannot pose as a line of this program), and what the
 * prediction said where it was partial or contradicted. The message itself is never shown.
 */
export const deliveryText = (result: DeliveryResult): string => {
  const { mismatch, predicted, receipt, session } = result
  return [
    terminalSafe(`${outcomeWords[result.outcome]} pid ${session.pid} (${session.name})`),
    `receipt: ${terminalSafe(receipt.text)}`,
    ...(predicted.certainty === "partial"
      ? [
        `the prediction (${
          predicted.effective ?? "default"
        }, decided by ${predicted.decidedBy}) was partial: something that could change it could not be read (see \`claude-peers policy\`)`
      ]
      : []),
    ...(mismatch === null ? [] : [`the policy predicted ${mismatch.predicted}, but Claude Code reported ${mismatch.reported}`])
  ].join("\n")
}
