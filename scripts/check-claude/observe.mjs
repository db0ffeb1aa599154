/**
 * One snapshot of both sides: `claude agents --json`, and claude-peers' `list`, `inspect` and
 * `resolve` (by every session id seen, by a shared name, by a name spelled otherwise), taken while
 * the registry holds still, and handed to compare.mjs. Also the labels of the rows: which scenario
 * each pid belongs to.
 */
import { setTimeout as delay } from "node:timers/promises"
import { compareSnapshot } from "./compare.mjs"
import { processStat } from "./processes.mjs"
import { CheckFailed, inParallel, parseJson, runProgram } from "./tools.mjs"

const canonical = (value) => JSON.stringify(value)
/** `updatedAt` is rewritten without any change that matters here. */
const listShape = (sessions) => canonical(sessions.map(({ updatedAtMs: _, ...rest }) => rest))

export const makeObserver = ({ claude, commandPath, env, home, log, registry, scenarioLabels }) => {
  const claudeAgents = async () => {
    const result = await runProgram(claude, ["agents", "--json"], { env })
    if (result.exit !== 0) throw new CheckFailed(`claude agents --json exited ${result.exit}: ${result.stderr.slice(0, 300)}`)
    return parseJson(result.stdout, "claude agents --json")
  }
  const peers = async (args) => {
    const result = await runProgram(process.execPath, [commandPath, "--claude-home", home, ...args, "--json"], { env: process.env })
    const json = parseJson(result.stdout, `claude-peers ${args.join(" ")}`)
    return result.exit === 0 ? { exit: 0, json } : { exit: result.exit, error: json.error }
  }
  const resolveOutcome = async (args) => {
    const result = await peers(["resolve", ...args])
    return result.exit === 0 ? { exit: 0, session: result.json } : { exit: result.exit, error: result.error }
  }

  // --- labels

  /** pid → the scenario a session belongs to. */
  const labels = new Map()
  /** Labels given by the check itself (copied records), never derived again. */
  const fixedLabels = new Map()
  /** jobId → "job of <the label of its parked window>". */
  const jobLabels = new Map()
  /** Every session seen so far, so that a row stays when its record is removed. By pid. */
  const tracked = new Map()

  const updateLabels = (records) => {
    for (const [pid, record] of records) {
      const label = typeof record.tmux === "string" ? record.tmux.split(":")[0] : undefined
      if (label !== undefined && scenarioLabels.has(label)) {
        labels.set(pid, label)
        if (typeof record.parkedJobId === "string") jobLabels.set(record.parkedJobId, `job of ${label}`)
      }
    }
    for (const [pid, record] of records) {
      if (fixedLabels.has(pid)) labels.set(pid, fixedLabels.get(pid))
      else if (record.spare === true) labels.set(pid, "spare worker")
      else if (record.kind === "bg" && jobLabels.has(record.jobId)) labels.set(pid, jobLabels.get(record.jobId))
      else if (record.kind === "bg" && record.name === "RUN-BACKGROUND-SHELL") labels.set(pid, "job of shell (moved, exited)")
      else if (!labels.has(pid)) labels.set(pid, record.kind === "bg" ? "background job" : "?")
    }
    for (const [pid, record] of records) {
      const label = labels.get(pid)
      if (label !== "spare worker" && typeof record.sessionId === "string") {
        tracked.set(pid, { pid, sessionId: record.sessionId, name: record.name, label })
      }
    }
  }

  // --- one snapshot

  const resolveAll = async (inspect, agents) => {
    const sessionIds = new Set([
      ...inspect.map((e) => e.sessionId),
      ...agents.map((a) => a.sessionId),
      ...[...tracked.values()].map((t) => t.sessionId)
    ].filter((id) => typeof id === "string" && id !== ""))
    const resolves = new Map()
    await inParallel([...sessionIds], 4, async (sessionId) => {
      const result = await resolveOutcome([sessionId])
      if (result.error?.reason === "identity_mismatch" && result.error.shared === "name") {
        result.allowSharedName = await resolveOutcome([sessionId, "--allow-shared-name"])
      }
      resolves.set(sessionId, result)
    })
    return resolves
  }

  const resolveNames = async (list, resolves) => {
    const nameResolves = new Map()
    // Names compare as Claude Code compares them: "  REVIEW  BOT " is the session named "Review Bot".
    const named = registry.windowOf("named")
    if (named !== undefined) {
      const query = "  REVIEW  BOT "
      nameResolves.set(named.pid, { query, ...await resolveOutcome(["--name", query]) })
    }
    // A shared name must be refused by name too.
    const byName = new Map()
    for (const session of list) {
      if (resolves.get(session.sessionId)?.error?.shared !== "name") continue
      byName.set(session.name, byName.get(session.name) ?? await resolveOutcome(["--name", session.name]))
      nameResolves.set(session.pid, { query: session.name, ...byName.get(session.name) })
    }
    return nameResolves
  }

  /**
   * Both sides, read again until `claude agents` and `list` said the same before and after (at most
   * six times). A job that no process runs may leave `claude agents` in the meantime: the rows keep
   * what it said first, and only sessions with a process must not have changed.
   */
  const snapshot = async () => {
    for (let attempt = 1;; attempt++) {
      updateLabels(registry.readRecords())
      const agents = await claudeAgents()
      const [list, inspect] = await Promise.all([peers(["list"]), peers(["inspect"])])
      if (list.exit !== 0 || inspect.exit !== 0) throw new CheckFailed(`claude-peers list/inspect failed: ${canonical([list, inspect])}`)
      const resolves = await resolveAll(inspect.json, agents)
      const nameResolves = await resolveNames(list.json, resolves)
      const listAfter = await peers(["list"])
      const agentsAfter = await claudeAgents()
      const withPid = (entries) => canonical(entries.filter((a) => a.pid !== undefined))
      const stable = withPid(agents) === withPid(agentsAfter) && listShape(list.json) === listShape(listAfter.json)
      if (!stable && attempt < 6) {
        log(`the registry changed while it was read (attempt ${attempt}); reading again`)
        await delay(1000)
        continue
      }
      const pids = new Set([...inspect.json.map((e) => e.pid), ...agents.map((a) => a.pid)].filter((pid) => typeof pid === "number"))
      const processStates = new Map([...pids].map((pid) => [pid, processStat(pid)?.state ?? null]))
      updateLabels(registry.readRecords())
      const rows = compareSnapshot({
        agents,
        list: list.json,
        inspect: inspect.json,
        resolves,
        nameResolves,
        processStates,
        labels,
        jobLabels,
        tracked: [...tracked.values()]
      })
      return { stable, rows }
    }
  }

  return { claudeAgents, snapshot, fixLabel: (pid, label) => fixedLabels.set(pid, label) }
}
