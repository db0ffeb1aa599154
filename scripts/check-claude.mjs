#!/usr/bin/env node
/**
 * `npm run check:claude`: claude-peers against the real Claude Code.
 *
 * Installs Claude Code 2.1.332 (pinned) into `.cache/claude-code/`, runs real sessions of it against a
 * local stand-in for its API (mock-api.mjs) in a private tmux server with a throw-away home, drives
 * them into every kind of session it runs (idle, two in one directory, busy, waiting, a background
 * shell, parked with ← with its job and spare workers, jobs that share the name `(backgrounded)`,
 * `--restricted`, `--name`, `-p`, a second process on a live session id, SIGKILL, SIGTERM, "Move to
 * background and exit", a killed job, and records copied onto a live pid and onto a zombie), and
 * prints, for three moments, one table row per session: what `claude agents --json` says, what
 * `claude-peers list`, `inspect` and `resolve` say, and whether they agree. A difference is
 * "documented" only when it is one of `scripts/check-claude/differences.mjs`, which is also the
 * README's table; any other fails the check.
 *
 * Needs Linux, tmux, network access for the first install, and a built claude-peers (`npm run
 * build`; the npm script does it). Progress goes to stderr, the tables to stdout. Exit codes: 0 no
 * undocumented difference, 1 an undocumented difference, 2 the check itself failed, 130/143
 * interrupted. Every process it starts is killed at the end (by pid: those whose environment carries
 * this run's marker), also on failure and on SIGINT/SIGTERM, and its directories are removed
 * (`--keep` keeps the run's directory, with Claude Code's logs, for a post-mortem).
 */
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { claudeCodeVersion, claudeEnvironment, ensureClaudeCode, writeClaudeHome } from "./check-claude/claude-code.mjs"
import { compareSnapshot, isUndocumented, renderTable } from "./check-claude/compare.mjs"
import { startMockApi } from "./check-claude/mock-api.mjs"
import { isRunning, killMarked, processStat, startIdleProcess, startZombie } from "./check-claude/processes.mjs"
import { makeTmux } from "./check-claude/tmux.mjs"

const repoRoot = fileURLToPath(new URL("..", import.meta.url))
const commandPath = join(repoRoot, "bin", "claude-peers.js")
const started = Date.now()

const log = (message) => process.stderr.write(`[check:claude ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}\n`)

/** A failure of the check itself (not a finding): exit 2. */
class CheckFailed extends Error {}

// ---------------------------------------------------------------------------------------------
// Clean-up. Synchronous, so that it runs the same from a signal handler, an error, or the end.

const keepDirectory = process.argv.includes("--keep")
const run = { directory: null, marker: null, tmux: null, api: null, daemonDirectory: null, cleaned: false }

const cleanup = () => {
  if (run.cleaned) return
  run.cleaned = true
  try {
    run.tmux?.killServer()
  } catch {
    // the server is gone already
  }
  if (run.marker !== null) {
    const killed = killMarked(run.marker)
    if (killed.length > 0) log(`cleanup: killed ${killed.length} processes of this run (pids ${killed.join(", ")})`)
  }
  run.api?.close()
  for (const directory of [keepDirectory ? null : run.directory, run.daemonDirectory]) {
    if (directory !== null && existsSync(directory)) rmSync(directory, { recursive: true, force: true })
  }
  if (run.directory !== null) log(`cleanup: ${keepDirectory ? "kept" : "removed"} ${run.directory}`)
}

const exitOnSignal = (signal, code) =>
  process.on(signal, () => {
    log(`${signal}: cleaning up`)
    cleanup()
    process.exit(code)
  })
exitOnSignal("SIGINT", 130)
exitOnSignal("SIGTERM", 143)
exitOnSignal("SIGHUP", 129)
process.on("exit", cleanup)

// ---------------------------------------------------------------------------------------------
// Small tools.

const waitFor = async (what, probe, { timeoutMs = 60_000, intervalMs = 250 } = {}) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new CheckFailed(`timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await delay(intervalMs)
  }
}

/** Runs a program to its end: `{ exit, stdout, stderr }`. */
const runProgram = (file, args, { env, timeoutMs = 60_000 }) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] })
    const out = []
    const err = []
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (exit, signal) => {
      clearTimeout(timer)
      resolvePromise({
        exit: exit ?? (signal === null ? -1 : `signal ${signal}`),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8")
      })
    })
  })

const inParallel = async (items, limit, work) => {
  const queue = [...items]
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, async () => {
    while (queue.length > 0) await work(queue.shift())
  }))
}

const parseJson = (text, what) => {
  try {
    return JSON.parse(text)
  } catch {
    throw new CheckFailed(`${what} printed no JSON: ${text.slice(0, 300)}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

const scenarioLabels = new Set()
/** pid → the scenario a session belongs to; fixed ones (copied records) are never re-derived. */
const labels = new Map()
const fixedLabels = new Map()
/** Every session seen so far, so that a row stays when its record is removed. By pid. */
const tracked = new Map()

const main = async () => {
  if (process.platform !== "linux") throw new CheckFailed("this check runs on Linux (it reads /proc)")
  if (!existsSync(join(repoRoot, "dist", "claude-peers.cjs"))) {
    throw new CheckFailed("claude-peers is not built: run `npm run build` first (`npm run check:claude` does)")
  }
  const hasTmux = await runProgram("tmux", ["-V"], { env: process.env }).catch(() => null)
  if (hasTmux?.exit !== 0) throw new CheckFailed("tmux is needed (it runs the Claude Code sessions)")

  // Socket paths must stay short (108 bytes), and Claude Code puts them under $XDG_RUNTIME_DIR.
  const base = tmpdir().length <= 40 ? tmpdir() : "/tmp"
  run.directory = realpathSync(mkdtempSync(join(base, "cpc-")))
  const runId = randomBytes(8).toString("hex")
  run.marker = `CLAUDE_PEERS_CHECK_RUN=${runId}`
  const directory = (name, mode = 0o755) => {
    const path = join(run.directory, name)
    mkdirSync(path, { recursive: true, mode })
    return path
  }
  const home = directory("home")
  const work = directory("work")
  const other = directory("other")
  const sessions = join(home, "sessions")
  // Claude Code's background service keeps its sockets in /tmp/cc-daemon-<uid>/<first 8 hex of
  // sha256(the Claude home)>: this run's own, since the home is.
  run.daemonDirectory = join("/tmp", `cc-daemon-${process.getuid()}`, createHash("sha256").update(home).digest("hex").slice(0, 8))

  run.api = await startMockApi({ backgroundShellCommand: "sleep 100000" })
  const env = claudeEnvironment({
    base: process.env,
    home,
    fakeHome: directory("fake-home"),
    runtimeDirectory: directory("run", 0o700),
    temporaryDirectory: directory("tmp"),
    apiUrl: run.api.url,
    marker: run.marker
  })
  const claude = ensureClaudeCode({ cacheDirectory: join(repoRoot, ".cache", "claude-code"), env, log })
  log(`Claude Code ${claudeCodeVersion}: ${claude}`)
  writeClaudeHome({ home, workDirectories: [work, other] })
  const tmux = makeTmux({ socketName: `claude-peers-check-${runId}`, configFile: join(run.directory, "tmux.conf"), env })
  run.tmux = tmux

  // --- reading the registry and asking both sides

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
        // vanished, or caught mid-rewrite: the next poll reads it
      }
    }
    return records
  }
  const windowOf = (label) => {
    for (const [pid, record] of readRecords()) {
      if (typeof record.tmux === "string" && record.tmux.startsWith(`${label}:`)) return { pid, record }
    }
    return undefined
  }
  const jobRecord = (jobId) => {
    if (typeof jobId !== "string") return undefined
    for (const [pid, record] of readRecords()) {
      if (record.jobId === jobId && record.spare !== true && record.parkedJobId === undefined) return { pid, record }
    }
    return undefined
  }

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

  // --- starting and driving sessions

  const paneGone = (label) => {
    const pane = tmux.panes().find((p) => p.name === label)
    return pane === undefined || pane.dead
  }
  const start = (label, cwd, args = []) => {
    scenarioLabels.add(label)
    tmux.newSession(label, cwd, [claude, ...args])
  }
  /** Up: its record is written and carries a status (the first write has none). */
  const up = async (label, { needsStatus = true } = {}) => {
    const found = await waitFor(`${label} to register`, () => {
      if (paneGone(label)) {
        throw new CheckFailed(`${label}: Claude Code exited before it registered. Its screen:\n${tmux.screen(label)}`)
      }
      const window = windowOf(label)
      return window !== undefined && (!needsStatus || typeof window.record.status === "string") ? window : undefined
    }, { timeoutMs: 180_000, intervalMs: 500 })
    log(`${label}: up, pid ${found.pid}, name ${JSON.stringify(found.record.name)}`)
    return found
  }
  const statusOf = (label, status) =>
    waitFor(`${label} to be ${status}`, () => windowOf(label)?.record.status === status, { timeoutMs: 60_000 })
  const typed = async (label, text) => {
    tmux.type(label, text)
    await waitFor(`${label} to show ${JSON.stringify(text)}`, () => tmux.screen(label).includes(text), { timeoutMs: 15_000, intervalMs: 100 })
  }
  const submit = async (label, text) => {
    await typed(label, text)
    tmux.press(label, "Enter")
  }
  /** The job's state as Claude Code's background service writes it, or undefined. */
  const jobState = (jobId) => {
    try {
      return JSON.parse(readFileSync(join(home, "jobs", jobId, "state.json"), "utf8"))
    } catch {
      return undefined
    }
  }
  /**
   * ← at an empty prompt: the window parks and its conversation starts as a background job, on a
   * spare worker when one is ready. Resolves to the job's record, or to undefined when the job
   * ended before it registered: on this loaded 2-core machine about one park in five did (the job
   * "settled (killed)" some 14 s after it claimed a spare, in the background service's log), so
   * every background record must carry a status first, and the caller may try again.
   */
  const park = async (label) => {
    await waitFor("the background workers to be ready", () =>
      [...readRecords().values()].every((record) => record.kind !== "bg" || typeof record.status === "string"),
      { timeoutMs: 60_000, intervalMs: 500 }).catch((error) => log(`${error.message}; parking ${label} anyway`))
    tmux.press(label, "Left")
    const window = await waitFor(`${label} to park`, () => {
      const found = windowOf(label)
      return typeof found?.record.parkedJobId === "string" ? found : undefined
    })
    const jobId = window.record.parkedJobId
    const ended = () => ["stopped", "failed", "done"].includes(jobState(jobId)?.state)
    const job = await waitFor(`the job ${jobId} of ${label} to register`, () => {
      const found = jobRecord(jobId)
      return typeof found?.record.status === "string" ? found : ended() ? "ended" : undefined
    }, { timeoutMs: 90_000, intervalMs: 500 }).catch((error) => {
      if (error instanceof CheckFailed) return error.message
      throw error
    })
    if (typeof job !== "string") {
      log(`${label}: parked; its job ${jobId} runs as pid ${job.pid}, named ${JSON.stringify(job.record.name)}`)
      return job
    }
    const state = jobState(jobId)
    log(`${label}: parked, but its job ${jobId} never registered (${job === "ended" ? "it ended first" : job}; ` +
      `its state: ${JSON.stringify(state?.state)}, ${JSON.stringify(state?.detail)})`)
    return undefined
  }
  /**
   * Parks `label` after `prepare`, and when its job never registers, once more with a new window
   * (`<label>-again`); the first window stays, as a parked window whose job has ended.
   */
  const parkOrRetry = async (label, cwd, prepare) => {
    await prepare(label)
    if ((await park(label)) !== undefined) return
    const again = `${label}-again`
    start(again, cwd)
    await up(again)
    await prepare(again)
    if ((await park(again)) === undefined) log(`${again}: its job never registered either; going on without it`)
  }
  /** A `!` shell command: the conversation then holds no prompt of its own, so its job is `(backgrounded)`. */
  const shellCommand = async (label, command) => {
    const before = Date.now()
    tmux.type(label, "!")
    await delay(300)
    await submit(label, command)
    await waitFor(`${label} to finish the turn after its shell command`, () => {
      const record = windowOf(label)?.record
      return record?.status === "idle" && record.statusUpdatedAt >= before
    })
  }

  log(`run directory ${run.directory}; tmux -L claude-peers-check-${runId}; API stand-in ${run.api.url}`)
  // The first session alone: it creates the home's files, which the others then find.
  start("idle-1", work)
  const first = await up("idle-1")
  const waves = [
    [
      ["idle-2", work],
      ["busy", work],
      ["waiting", work],
      ["shell", work, ["--allowedTools", "Bash(sleep:*)"]],
      ["restricted", other, ["--restricted"]],
      ["named", other, ["--name", "Review Bot"]],
      ["same-id", work, ["--session-id", first.record.sessionId]]
    ],
    [
      ["park-empty", work],
      ["park-shared-1", work],
      ["park-shared-2", work],
      ["sigkill", other],
      ["sigterm", other],
      ["print", other, ["-p", "HOLD-BUSY"]]
    ]
  ]
  for (const wave of waves) {
    for (const [label, cwd, args] of wave) start(label, cwd, args)
    await Promise.all(wave.map(([label]) => up(label, { needsStatus: label !== "print" })))
  }

  log("driving: busy, waiting, shell, three parked windows")
  // One park at a time: when two windows park at once, Claude Code 2.1.332's background service
  // has been seen to hand both the same spare worker and kill one of the jobs.
  const parks = async () => {
    await parkOrRetry("park-empty", work, async () => {})
    await parkOrRetry("park-shared-1", work, (label) => shellCommand(label, "echo one"))
    await parkOrRetry("park-shared-2", work, (label) => shellCommand(label, "echo two"))
  }
  await Promise.all([
    submit("busy", "HOLD-BUSY").then(() => statusOf("busy", "busy")),
    submit("waiting", "/config").then(() => statusOf("waiting", "waiting")),
    submit("shell", "RUN-BACKGROUND-SHELL").then(() => statusOf("shell", "shell")),
    parks()
  ])

  // Records copied from idle-2: onto a live pid of another process (its start time differs from the
  // recorded one: pid reused), and onto a zombie with the zombie's own start time.
  const copied = windowOf("idle-2")
  const copyRecord = (pid, procStart, label) => {
    const record = { ...copied.record, pid, procStart }
    delete record.tmux
    writeFileSync(join(sessions, `${pid}.json`), JSON.stringify(record))
    fixedLabels.set(pid, label)
  }
  const otherPid = startIdleProcess(env)
  await waitFor("the stand-in process to run", () => processStat(otherPid) !== null)
  copyRecord(otherPid, copied.record.procStart, "idle-2 copied onto a live pid")
  const zombie = await startZombie(env)
  copyRecord(zombie.zombiePid, zombie.startTime, "idle-2 copied onto a zombie")
  log(`copied idle-2's record onto pid ${otherPid} (a sleep) and onto pid ${zombie.zombiePid} (a zombie)`)

  // --- snapshots

  /** jobId → the label of the job's parked window. */
  const windowsByJob = new Map()
  const updateLabels = (records) => {
    for (const [pid, record] of records) {
      const label = typeof record.tmux === "string" ? record.tmux.split(":")[0] : undefined
      if (label !== undefined && scenarioLabels.has(label)) {
        labels.set(pid, label)
        if (typeof record.parkedJobId === "string") windowsByJob.set(record.parkedJobId, `job of ${label}`)
      }
    }
    for (const [pid, record] of records) {
      if (fixedLabels.has(pid)) labels.set(pid, fixedLabels.get(pid))
      else if (record.spare === true) labels.set(pid, "spare worker")
      else if (record.kind === "bg" && windowsByJob.has(record.jobId)) labels.set(pid, windowsByJob.get(record.jobId))
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

  const canonical = (value) => JSON.stringify(value)
  const listShape = (sessions) => canonical(sessions.map(({ updatedAtMs: _, ...rest }) => rest))

  const snapshot = async () => {
    for (let attempt = 1; ; attempt++) {
      updateLabels(readRecords())
      const agents = await claudeAgents()
      const [list, inspect] = await Promise.all([peers(["list"]), peers(["inspect"])])
      if (list.exit !== 0 || inspect.exit !== 0) throw new CheckFailed(`claude-peers list/inspect failed: ${canonical([list, inspect])}`)
      const sessionIds = new Set([
        ...inspect.json.map((e) => e.sessionId),
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
      // Names compare as Claude Code compares them: "REVIEW  BOT" is the session named "Review Bot".
      const nameResolves = new Map()
      const named = windowOf("named")
      if (named !== undefined) {
        const query = "  REVIEW  BOT "
        nameResolves.set(named.pid, { query, ...await resolveOutcome(["--name", query]) })
      }
      // A shared name must be refused by name too.
      const byName = new Map()
      for (const session of list.json) {
        if (resolves.get(session.sessionId)?.error?.shared !== "name") continue
        byName.set(session.name, byName.get(session.name) ?? await resolveOutcome(["--name", session.name]))
        nameResolves.set(session.pid, { query: session.name, ...byName.get(session.name) })
      }
      const listAfter = await peers(["list"])
      const agentsAfter = await claudeAgents()
      // A job that no process runs may leave claude agents in the meantime: the rows keep what it
      // said first, and only sessions with a process must not have changed.
      const withPid = (entries) => canonical(entries.filter((a) => a.pid !== undefined))
      const stable = withPid(agents) === withPid(agentsAfter) && listShape(list.json) === listShape(listAfter.json)
      if (!stable && attempt < 6) {
        log(`the registry changed while it was read (attempt ${attempt}); reading again`)
        await delay(1000)
        continue
      }
      const pids = new Set([
        ...inspect.json.map((e) => e.pid),
        ...agents.map((a) => a.pid)
      ].filter((pid) => typeof pid === "number"))
      const processStates = new Map([...pids].map((pid) => [pid, processStat(pid)?.state ?? null]))
      updateLabels(readRecords())
      return {
        stable,
        rows: compareSnapshot({
          agents,
          list: list.json,
          inspect: inspect.json,
          resolves,
          nameResolves,
          processStates,
          labels,
          jobLabels: windowsByJob,
          tracked: [...tracked.values()]
        })
      }
    }
  }

  const allRows = []
  const report = async (title) => {
    log(`snapshot: ${title}`)
    const { stable, rows } = await snapshot()
    allRows.push(...rows)
    process.stdout.write(`\n## ${title}\n\n${renderTable(rows)}\n`)
    if (!stable) process.stdout.write("(the registry kept changing while this snapshot was taken: rows may mix two moments)\n")
  }

  await report("1. every session started and driven")

  // --- ends of sessions

  log("ending sessions: Move to background and exit, SIGKILL, SIGTERM, a killed job, a killed parked window")
  const shellWindow = windowOf("shell")
  await submit("shell", "/exit")
  await waitFor("the exit menu of shell", () => tmux.screen("shell").includes("Move to background and exit"))
  tmux.press("shell", "Down")
  await delay(200)
  tmux.press("shell", "Enter")
  // The window hands its conversation to a job, removes its record and exits; its process is a
  // zombie for a moment (until tmux reaps it). Watched here only to report it.
  const exitAsked = Date.now()
  let zombieSince
  const windowEnd = waitFor("shell's window process to exit", () => {
    const stat = processStat(shellWindow.pid)
    if (stat?.state === "Z") zombieSince ??= Date.now()
    return stat === null
  }, { timeoutMs: 60_000, intervalMs: 5 }).then(
    () => {
      const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`
      return `its process was reaped ${seconds(exitAsked)} after the exit was asked` +
        (zombieSince === undefined ? "" : `, after ${seconds(zombieSince)} as a zombie`)
    },
    () => {
      const threads = (() => {
        try {
          return readdirSync(`/proc/${shellWindow.pid}/task`).map((tid) => processStat(`${shellWindow.pid}/task/${tid}`)?.state).join("")
        } catch {
          return "?"
        }
      })()
      return `its process is still there after 60 s: state ${processStat(shellWindow.pid)?.state}, its threads' states ${threads}`
    }
  )
  await waitFor("shell's window record to be removed", () => !existsSync(join(sessions, `${shellWindow.pid}.json`)), { timeoutMs: 30_000 })
  log("shell: moved to the background (its record is removed)")

  await waitFor("the job of shell to register", () => {
    for (const record of readRecords().values()) {
      if (record.kind === "bg" && record.name === "RUN-BACKGROUND-SHELL" && typeof record.status === "string") return true
    }
    return false
  }, { timeoutMs: 90_000, intervalMs: 500 })

  /** The window of `label` whose job runs (the retry's, when the first job never registered). */
  const parkedWithJob = (label) =>
    [label, `${label}-again`].map(windowOf).find((window) => jobRecord(window?.record.parkedJobId) !== undefined)
  const victims = {
    sigkill: windowOf("sigkill"),
    sigterm: windowOf("sigterm"),
    parkedWindow: parkedWithJob("park-shared-2"),
    job: jobRecord(parkedWithJob("park-empty")?.record.parkedJobId)
  }
  const signal = (what, found, name) => {
    if (found === undefined) return log(`${what}: nothing to kill (it never registered)`)
    process.kill(found.pid, name)
    log(`${what}: ${name} to pid ${found.pid}`)
  }
  signal("sigkill", victims.sigkill, "SIGKILL")
  signal("sigterm", victims.sigterm, "SIGTERM")
  signal("a parked window (park-shared-2)", victims.parkedWindow, "SIGKILL")
  signal("the job of park-empty", victims.job, "SIGKILL")
  await waitFor("the killed processes to end", () =>
    Object.values(victims).every((found) => found === undefined || !isRunning(found.pid)))
  if (victims.sigterm !== undefined) {
    await waitFor("sigterm's record to be removed", () => !existsSync(join(sessions, `${victims.sigterm.pid}.json`)), { timeoutMs: 20_000 })
  }
  if (victims.job !== undefined) {
    const jobListedWithoutPid = await waitFor("claude agents to list the killed job without a pid", async () =>
      (await claudeAgents()).some((a) => a.pid === undefined), { timeoutMs: 10_000, intervalMs: 200 }).catch(() => false)
    log(jobListedWithoutPid ? "claude agents lists the killed job without a pid" : "claude agents did not list the killed job without a pid")
  }
  await report("2. right after the ends")
  log(`shell's window: ${await windowEnd}`)

  // A killed job is dropped or restarted after some seconds: wait for that, but a job that never
  // got a process may stay listed without a pid for good.
  await waitFor("claude agents to list only sessions with a pid", async () =>
    (await claudeAgents()).every((a) => a.pid !== undefined), { timeoutMs: 60_000, intervalMs: 2000 })
    .catch((error) => log(`${error.message}; going on`))
  let last = ""
  await waitFor("the registry to settle", async () => {
    const now = canonical([...readRecords()].map(([pid, r]) => [pid, r.sessionId, r.status, r.spare ?? null]))
    const settled = now === last
    last = now
    return settled
  }, { timeoutMs: 90_000, intervalMs: 5000 }).catch((error) => log(`${error.message}; going on`))
  await report("3. settled")

  const undocumented = allRows.filter(isUndocumented)
  const documentedRows = allRows.filter((row) => row.judgement.startsWith("documented"))
  process.stdout.write(
    `\n${allRows.length} rows in 3 snapshots: ${allRows.length - undocumented.length - documentedRows.length} agree, ` +
      `${documentedRows.length} documented differences, ${undocumented.length} undocumented.\n`
  )
  return undocumented.length === 0 ? 0 : 1
}

main().then(
  (code) => {
    cleanup()
    process.exit(code)
  },
  (error) => {
    log(error instanceof CheckFailed ? `the check failed: ${error.message}` : `the check failed: ${error?.stack ?? error}`)
    cleanup()
    process.exit(2)
  }
)
