/** The human renderings of sessions and registry entries. Every cell goes through `terminalSafe`. */
import type { Session } from "../domain/Session.js"
import { describeVerdict, type RegistryEntry } from "../domain/Verdict.js"
import { table, terminalSafe } from "./Text.js"

export const orDash = (value: string | number | null): string => (value === null ? "-" : String(value))

/** An unknown status shows its raw text in brackets, so that it is visible but not mistaken for a known one. */
export const statusText = (session: Session): string =>
  session.status ?? (session.rawStatus === null ? "-" : `(${session.rawStatus})`)

export const sessionsTable = (sessions: ReadonlyArray<Session>): string =>
  sessions.length === 0
    ? "no live sessions"
    : table(
      ["PID", "NAME", "STATUS", "SESSION ID", "CWD"],
      sessions.map((s) => [String(s.pid), s.name, statusText(s), s.sessionId, orDash(s.cwd)])
    )

export const entriesTable = (entries: ReadonlyArray<RegistryEntry>): string =>
  entries.length === 0
    ? "no registry files"
    : table(
      ["FILE", "VERDICT", "PID", "NAME", "DETAIL"],
      entries.map((e) => [
        e.file.slice(e.file.lastIndexOf("/") + 1),
        e.verdict._tag,
        orDash(e.pid),
        orDash(e.name),
        describeVerdict(e.verdict)
      ])
    )

const fields: ReadonlyArray<readonly [string, (s: Session) => string | number | null]> = [
  ["pid", (s) => s.pid],
  ["sessionId", (s) => s.sessionId],
  ["name", (s) => s.name],
  ["status", statusText],
  ["cwd", (s) => s.cwd],
  ["socketPath", (s) => s.socketPath],
  ["kind", (s) => s.kind],
  ["version", (s) => s.version],
  ["tmux", (s) => s.tmux],
  ["waitingFor", (s) => s.waitingFor],
  ["jobId", (s) => s.jobId],
  ["file", (s) => s.file]
]

export const sessionDetails = (session: Session): string => {
  const width = Math.max(...fields.map(([label]) => label.length))
  return fields.map(([label, get]) => `${label.padEnd(width)}  ${terminalSafe(orDash(get(session)))}`).join("\n")
}

/** Inspect's JSON rows: `{file, verdict, detail, pid, sessionId, name}`. */
export const entryJson = (entry: RegistryEntry) => ({
  file: entry.file,
  verdict: entry.verdict._tag,
  detail: describeVerdict(entry.verdict),
  pid: entry.pid,
  sessionId: entry.sessionId,
  name: entry.name
})
