/**
 * The judgement of `npm run check:claude`: one snapshot of what `claude agents --json` and
 * claude-peers (`list`, `inspect`, `resolve`) said about the same registry, compared session by
 * session. Pure: the snapshot is taken elsewhere (check-claude.mjs), so this can be tested on
 * hand-made snapshots.
 *
 * A row agrees when both tell the same thing (listed or not; the same id, name, directory, start and
 * status). Anything else is a finding, and a finding is "documented" only when it is one of the
 * differences in differences.mjs (the README's table), recognized under its precise conditions here.
 * Everything else is undocumented, and fails the check.
 */
import { differences } from "./differences.mjs"

const documentedIds = new Set(differences.map((d) => d.id))

const documented = (id, text) => {
  if (!documentedIds.has(id)) throw new Error(`compare.mjs names ${id}, which differences.mjs does not list`)
  return { id, text }
}
const undocumented = (text) => ({ id: null, text })

const dash = "—"

const agentsCell = (entry) => {
  if (entry === undefined) return "not listed"
  const status = entry.status === undefined ? "no status" : entry.status +
    (entry.waitingFor === undefined ? "" : ` (${entry.waitingFor})`)
  if (entry.kind === "background") {
    return `${entry.pid === undefined ? "NO PID, " : ""}background ${entry.pid === undefined ? "" : status + ", "}state ${entry.state ?? "?"}`
  }
  return `${entry.kind ?? "?"} ${status}`
}

const listCell = (session) => {
  if (session === undefined) return dash
  const status = session.status ?? "null"
  const raw = session.rawStatus !== null && session.rawStatus !== session.status ? ` (raw ${session.rawStatus})` : ""
  const address = session.address === null ? ", no address" : session.address === session.name ? "" : ", address = socket"
  const entrypoint = session.entrypoint === null || session.entrypoint === "cli" ? "" : `, entrypoint ${session.entrypoint}`
  return `${session.kind ?? "?"} ${status}${raw}${address}${entrypoint}`
}

const inspectCell = (entry) => {
  if (entry === undefined) return "no file"
  if (entry.verdict === "parked") {
    const job = /background job ([0-9a-f]+)/.exec(entry.detail)?.[1]
    const gone = /process has exited/.test(entry.detail) ? ", window's process gone" : ""
    return `parked (job ${job ?? "?"}${gone})`
  }
  return entry.verdict
}

const outcome = (result, pid) => {
  if (result === undefined) return dash
  if (result.exit === 0) return result.session?.pid === pid ? "ok" : `ok: pid ${result.session?.pid}`
  const reason = result.error?.reason ?? "?"
  // `shared: "query"`: what was asked (the id, or the name of a --name query) belongs to several.
  const asked = result.query === undefined ? "id" : "name"
  const shared = reason === "identity_mismatch" ? ` (${result.error.shared === "query" ? asked : result.error.shared} shared)` : ""
  return `${result.exit} ${reason}${shared}`
}

const resolveCell = (pid, result, nameResult) => {
  if (result === undefined) return dash
  const withShared = result.allowSharedName === undefined ? "" : `; --allow-shared-name: ${outcome(result.allowSharedName, pid)}`
  const byName = nameResult === undefined ? "" : `; --name ${JSON.stringify(nameResult.query)}: ${outcome(nameResult, pid)}`
  return outcome(result, pid) + withShared + byName
}

/**
 * What claude-peers' resolve said about a session that both list. A refusal for a shared id or
 * name names its competitors, and claude agents must list every one of them.
 */
const resolveFindings = (pid, session, result, nameResult, listedByAgents) => {
  const findings = []
  if (result === undefined) return [undocumented("resolve was not run")]
  for (const refusal of [result, result.allowSharedName, nameResult]) {
    const unseen = (refusal?.error?.candidates ?? []).map((c) => c.pid).filter((p) => !listedByAgents(p))
    if (unseen.length > 0) findings.push(undocumented(`resolve names competitors that claude agents does not list: pids ${unseen.join(", ")}`))
  }
  if (result.exit === 0) {
    if (result.session?.pid !== pid) findings.push(undocumented(`resolve answered pid ${result.session?.pid}`))
  } else {
    const reason = result.error?.reason
    if (reason === "not_addressable" && session.socketPath === null) {
      findings.push(documented("no-socket", "live without a socket: resolve refuses, not_addressable"))
    } else if (reason === "identity_mismatch" && result.error.shared === "query") {
      findings.push(documented("duplicate-session-id", "another live record carries the same session id"))
    } else if (reason === "identity_mismatch" && result.error.shared === "name") {
      if (result.allowSharedName?.exit === 0 && result.allowSharedName.session?.pid === pid) {
        findings.push(documented("shared-name", "another live session has the same name: resolve needs --allow-shared-name"))
      } else {
        findings.push(undocumented(`the name is shared, and --allow-shared-name answered ${outcome(result.allowSharedName, pid)}`))
      }
    } else {
      findings.push(undocumented(`claude agents lists it, resolve refuses: ${outcome(result, pid)}`))
    }
  }
  const nameShared = result.error?.reason === "identity_mismatch" && result.error.shared === "name"
  if (nameResult !== undefined && nameResult.exit !== 0) {
    if (nameShared && nameResult.error?.reason === "identity_mismatch") {
      findings.push(documented("shared-name", "the shared name is refused by name too"))
    } else {
      findings.push(undocumented(`resolve --name ${JSON.stringify(nameResult.query)} refuses: ${outcome(nameResult, pid)}`))
    }
  }
  if (nameResult?.exit === 0 && nameResult.session?.pid !== pid) {
    findings.push(undocumented(`resolve --name ${JSON.stringify(nameResult.query)} answered pid ${nameResult.session?.pid}`))
  }
  return findings
}

const sameStatus = (entry, session) => {
  if (entry.status === undefined) return session.rawStatus === null
  return entry.status === session.rawStatus
}

/** Both list it: the same session, told alike? */
const listedByBoth = (pid, entry, session, result, nameResult, listedByAgents) => {
  const findings = []
  const fields = [
    ["sessionId", entry.sessionId, session.sessionId],
    ["name", entry.name, session.name],
    ["cwd", entry.cwd, session.cwd ?? undefined],
    ["start", entry.startedAt, session.startedAtMs ?? undefined]
  ]
  for (const [field, theirs, ours] of fields) {
    if (theirs !== ours) findings.push(undocumented(`${field}: claude agents ${JSON.stringify(theirs)}, list ${JSON.stringify(ours)}`))
  }
  const kinds = entry.kind === "background" ? session.kind === "bg" : entry.kind === session.kind
  if (!kinds) findings.push(undocumented(`kind: claude agents ${entry.kind}, list ${session.kind}`))
  if (entry.kind === "background") {
    if (entry.id !== session.jobId) findings.push(undocumented(`job id: claude agents ${entry.id}, list ${session.jobId}`))
    findings.push(documented("job-shape", "a background job: its state comes from the background service"))
  }
  if (!sameStatus(entry, session)) {
    if (entry.status === "busy" && session.rawStatus === "shell" && session.status === "idle") {
      findings.push(documented("shell-status", "status shell: busy there, idle here"))
    } else {
      findings.push(undocumented(`status: claude agents ${entry.status ?? "none"}, list ${session.status} (raw ${session.rawStatus})`))
    }
  }
  if ((entry.waitingFor ?? null) !== session.waitingFor) {
    findings.push(undocumented(`waitingFor: claude agents ${entry.waitingFor ?? "none"}, list ${session.waitingFor}`))
  }
  return [...findings, ...resolveFindings(pid, session, result, nameResult, listedByAgents)]
}

/**
 * Listed by neither: claude-peers must not resolve its id to it (another live session that carries
 * the same id may answer), and inspect says why.
 */
const hiddenByBoth = (pid, entry, result) => {
  const findings = []
  if (result?.exit === 0 && result.session?.pid === pid) findings.push(undocumented("neither lists it, yet resolve answers it"))
  if (entry?.verdict === "spare") findings.push(documented("spare", "spare worker: inspect says spare"))
  if (entry?.verdict === "parked") findings.push(documented("parked-window", "parked window: inspect names its job"))
  if (entry?.verdict === "live") findings.push(undocumented("inspect says live, list does not show it"))
  return findings
}

const judge = (findings) => {
  const open = findings.filter((f) => f.id === null)
  if (open.length > 0) return `UNDOCUMENTED: ${open.map((f) => f.text).join("; ")}`
  const ids = [...new Set(findings.map((f) => f.id))]
  return ids.length === 0 ? "agree" : `documented difference (README: ${ids.map((id) => `\`${id}\``).join(", ")})`
}

const pidOfFile = (file) => {
  const match = /(?:^|\/)([1-9][0-9]*)\.json$/.exec(file)
  return match === null ? undefined : Number(match[1])
}

/**
 * snapshot: {agents, list, inspect, resolves: Map<sessionId, result>, nameResolves: Map<pid, result>,
 * processStates: Map<pid, string | null>, labels: Map<pid, string>, jobLabels: Map<jobId, string>,
 * tracked: [{pid, sessionId, name, label}]}.
 * A result is {exit, session?, error?, allowSharedName?: result}; a name result also has `query`.
 * Returns one row per registry file, per session claude agents lists without a pid, and per tracked
 * session that has neither any more.
 */
export const compareSnapshot = (snapshot) => {
  const agentsByPid = new Map(snapshot.agents.filter((a) => a.pid !== undefined).map((a) => [a.pid, a]))
  const listByPid = new Map(snapshot.list.map((s) => [s.pid, s]))
  const inspectByPid = new Map(
    snapshot.inspect.flatMap((e) => (pidOfFile(e.file) === undefined ? [] : [[pidOfFile(e.file), e]]))
  )
  const rows = []
  const pids = [...new Set([...inspectByPid.keys(), ...agentsByPid.keys(), ...listByPid.keys()])].sort((a, b) => a - b)
  for (const pid of pids) {
    const entry = agentsByPid.get(pid)
    const session = listByPid.get(pid)
    const file = inspectByPid.get(pid)
    const sessionId = session?.sessionId ?? file?.sessionId ?? entry?.sessionId
    const result = sessionId === null || sessionId === undefined ? undefined : snapshot.resolves.get(sessionId)
    const nameResult = snapshot.nameResolves.get(pid)
    let findings
    if (entry !== undefined && session !== undefined) {
      findings = listedByBoth(pid, entry, session, result, nameResult, (p) => agentsByPid.has(p))
    } else if (entry !== undefined) {
      findings = file?.verdict === "dead" && snapshot.processStates.get(pid) === "Z"
        ? [documented("zombie", "a zombie: listed there, dead here")]
        : [undocumented(`claude agents lists it, list does not (inspect: ${inspectCell(file)})`)]
      if (result?.exit === 0 && result.session?.pid === pid) findings.push(undocumented("list does not show it, yet resolve answers it"))
    } else if (session !== undefined) {
      findings = [undocumented("list shows it, claude agents does not")]
    } else {
      findings = hiddenByBoth(pid, file, result)
    }
    if (session !== undefined && file?.verdict !== "live") {
      findings.push(undocumented(`list shows it, inspect says ${inspectCell(file)}`))
    }
    rows.push({
      label: snapshot.labels.get(pid) ?? "?",
      pid: String(pid),
      name: session?.name ?? file?.name ?? entry?.name ?? dash,
      agents: agentsCell(entry),
      list: listCell(session),
      inspect: inspectCell(file),
      resolve: resolveCell(pid, result, nameResult),
      findings,
      judgement: judge(findings)
    })
  }
  for (const entry of snapshot.agents.filter((a) => a.pid === undefined)) {
    const result = snapshot.resolves.get(entry.sessionId)
    // No process runs it. When a restarted job already runs under the same id, resolve answers
    // with that process, which claude agents lists too, with its pid.
    const findings = entry.kind === "background"
      ? [documented("killed-job", "a job that no process runs: listed there without a pid, not a session here")]
      : [undocumented(`claude agents lists ${entry.sessionId} without a pid`)]
    const tracked = snapshot.tracked.find((t) => t.sessionId === entry.sessionId)
    rows.push({
      label: tracked?.label ?? snapshot.jobLabels.get(entry.id) ?? "?",
      pid: tracked === undefined ? dash : `(${tracked.pid})`,
      name: entry.name ?? dash,
      agents: agentsCell(entry),
      list: dash,
      inspect: tracked !== undefined && inspectByPid.has(tracked.pid) ? "(see its file's row)" : "no file",
      resolve: resolveCell(tracked?.pid, result, undefined),
      findings,
      judgement: judge(findings)
    })
  }
  const shown = new Set([...pids, ...snapshot.agents.map((a) => a.sessionId)])
  for (const tracked of snapshot.tracked) {
    if (shown.has(tracked.pid) || shown.has(tracked.sessionId)) continue
    const result = snapshot.resolves.get(tracked.sessionId)
    const findings = result?.exit === 0 && result.session?.pid === tracked.pid ? [undocumented("no record, yet resolve answers it")] : []
    rows.push({
      label: tracked.label,
      pid: `(${tracked.pid})`,
      name: tracked.name ?? dash,
      agents: "not listed",
      list: dash,
      inspect: "no file",
      resolve: resolveCell(tracked.pid, result, undefined),
      findings,
      judgement: judge(findings)
    })
  }
  return rows
}

export const isUndocumented = (row) => row.findings.some((f) => f.id === null)

const columns = [
  ["session", "label"],
  ["pid", "pid"],
  ["name", "name"],
  ["claude agents --json", "agents"],
  ["list", "list"],
  ["inspect", "inspect"],
  ["resolve SESSION_ID", "resolve"],
  ["judgement", "judgement"]
]

/** A Markdown table, padded so that it also reads as plain text. */
export const renderTable = (rows) => {
  const text = (value) => String(value).replaceAll("|", "\\|").replace(/[\u0000-\u001f\u007f]/g, "?")
  const widths = columns.map(([title, key]) => Math.max(title.length, ...rows.map((row) => text(row[key]).length)))
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`
  return [
    line(columns.map(([title]) => title)),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.map((row) => line(columns.map(([, key]) => text(row[key]))))
  ].join("\n")
}
