/**
 * The check's own reading of the Claude home it runs Claude Code in: only to find its sessions and
 * to wait for them (the judgement reads claude-peers' and Claude Code's answers, never this).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const makeRegistry = (home) => {
  const sessions = join(home, "sessions")

  /** pid → record, for every `<pid>.json` that parses now (one caught mid-rewrite is read next time). */
  const readRecords = () => {
    const records = new Map()
    let names = []
    try {
      names = readdirSync(sessions)
    } catch {
      return records
    }
    for (const name of names) {
      const match = /^([1-9][0-9]*)\.json$/.exec(name)
      if (match === null) continue
      try {
        records.set(Number(match[1]), JSON.parse(readFileSync(join(sessions, name), "utf8")))
      } catch {
        // vanished, or caught mid-rewrite
      }
    }
    return records
  }

  /** The record of the session started in the tmux session `label` (its `tmux` field names it). */
  const windowOf = (label) => {
    for (const [pid, record] of readRecords()) {
      if (typeof record.tmux === "string" && record.tmux.startsWith(`${label}:`)) return { pid, record }
    }
    return undefined
  }

  /** The record of the background job `jobId` (not a spare, not the parked window pointing at it). */
  const jobRecord = (jobId) => {
    if (typeof jobId !== "string") return undefined
    for (const [pid, record] of readRecords()) {
      if (record.jobId === jobId && record.spare !== true && record.parkedJobId === undefined) return { pid, record }
    }
    return undefined
  }

  /** The job's state as Claude Code's background service writes it (`working`, `stopped` …), or undefined. */
  const jobState = (jobId) => {
    try {
      return JSON.parse(readFileSync(join(home, "jobs", jobId, "state.json"), "utf8"))
    } catch {
      return undefined
    }
  }

  const recordFile = (pid) => join(sessions, `${pid}.json`)

  /** The home's user settings (`settings.json`) as Claude Code wrote them, or undefined. */
  const userSettings = () => {
    try {
      return JSON.parse(readFileSync(join(home, "settings.json"), "utf8"))
    } catch {
      return undefined
    }
  }

  /**
   * Stages `record` as the record of `pid` (one line of compact JSON, as Claude Code writes it),
   * without the `tmux` field that would make it another label's window. Only for records this check
   * makes up in its own home: a pid reused, a copy on a zombie. Returns the file.
   */
  const stageRecord = (pid, record) => {
    const { tmux: _, ...staged } = { ...record, pid }
    writeFileSync(recordFile(pid), JSON.stringify(staged))
    return recordFile(pid)
  }

  return { sessions, readRecords, windowOf, jobRecord, jobState, recordFile, stageRecord, userSettings }
}
