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
 * README's table; any other fails the check. Then phases of their own: liveness, wait, several
 * homes, send (scripts/check-claude/send.mjs: messages sent with `claude-peers send` to real
 * receivers, each receipt held against the receiver's transcript and against `policy`'s
 * prediction) and policy.
 *
 * Needs Linux, tmux, network access for the first install, and a built claude-peers (`npm run
 * build`; the npm script does it). Progress goes to stderr, the tables to stdout. Exit codes: 0 no
 * undocumented difference and every send and policy answer right, 1 an undocumented difference or
 * a wrong send or policy answer, 2 the check itself failed, 130/143
 * interrupted. Every process it starts is killed at the end (by pid: those whose environment carries
 * this run's marker), also on failure and on SIGINT/SIGTERM, and its directories are removed
 * (`--keep` keeps the run's directory, with Claude Code's logs, for a post-mortem).
 */
import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { claudeCodeVersion } from "./check-claude/claude-code.mjs"
import { isUndocumented, renderTable } from "./check-claude/compare.mjs"
import { makeDriver } from "./check-claude/driver.mjs"
import { checkHomes } from "./check-claude/homes.mjs"
import { checkLiveness } from "./check-claude/liveness.mjs"
import { makeObserver } from "./check-claude/observe.mjs"
import { checkPolicy } from "./check-claude/policy.mjs"
import { isRunning, killMarked, processStat, startIdleProcess, startZombie } from "./check-claude/processes.mjs"
import { makeRegistry } from "./check-claude/registry.mjs"
import { checkSendPhases } from "./check-claude/send.mjs"
import { CheckFailed, makeLog, runProgram, waitFor } from "./check-claude/tools.mjs"
import { runWaitPhase } from "./check-claude/wait.mjs"
import { makeCheckWorld } from "./check-claude/world.mjs"

const repoRoot = fileURLToPath(new URL("..", import.meta.url))
const log = makeLog()

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
// The run.

/** The run's directories, environment, API stand-in, Claude Code and tmux server. */
const setUp = async () => {
  if (process.platform !== "linux") throw new CheckFailed("this check runs on Linux (it reads /proc)")
  if (!existsSync(join(repoRoot, "dist", "claude-peers.cjs"))) {
    throw new CheckFailed("claude-peers is not built: run `npm run build` first (`npm run check:claude` does)")
  }
  const hasTmux = await runProgram("tmux", ["-V"], { env: process.env }).catch(() => null)
  if (hasTmux?.exit !== 0) throw new CheckFailed("tmux is needed (it runs the Claude Code sessions)")

  const { claude, env, home, works: [work, other] } = await makeCheckWorld(run, {
    log,
    prefix: "cpc-",
    repoRoot,
    workDirectories: ["work", "other"]
  })
  log(`Claude Code ${claudeCodeVersion}: ${claude}`)
  log(`run directory ${run.directory}; tmux -S ${join(run.directory, "tmux.sock")}; API stand-in ${run.api.url}`)
  return { home, work, other, env, claude, tmux: run.tmux }
}

/** Fourteen sessions, in three steps: the first alone (it creates the home's files), then two waves. */
const startSessions = async ({ driver, other, work }) => {
  driver.start("idle-1", work)
  const first = await driver.up("idle-1")
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
    for (const [label, cwd, args] of wave) driver.start(label, cwd, args)
    await Promise.all(wave.map(([label]) => driver.up(label, { needsStatus: label !== "print" })))
  }
}

const driveSessions = async ({ driver, work }) => {
  log("driving: busy, waiting, shell, three parked windows")
  // One park at a time: when two windows park at once, Claude Code 2.1.332's background service
  // has been seen to hand both the same spare worker and kill one of the jobs.
  const parks = async () => {
    await driver.parkOrRetry("park-empty", work, async () => {})
    await driver.parkOrRetry("park-shared-1", work, (label) => driver.shellCommand(label, "echo one"))
    await driver.parkOrRetry("park-shared-2", work, (label) => driver.shellCommand(label, "echo two"))
  }
  await Promise.all([
    driver.submit("busy", "HOLD-BUSY").then(() => driver.statusOf("busy", "busy")),
    driver.submit("waiting", "/config").then(() => driver.statusOf("waiting", "waiting")),
    driver.submit("shell", "RUN-BACKGROUND-SHELL").then(() => driver.statusOf("shell", "shell")),
    parks()
  ])
}

/**
 * idle-2's record copied onto the pid of another live process (its start time differs from the
 * recorded one: pid reused), and onto a zombie with the zombie's own start time.
 */
const copyRecords = async ({ env, observer, registry }) => {
  const copied = registry.windowOf("idle-2")
  const copyRecord = (pid, procStart, label) => {
    registry.stageRecord(pid, { ...copied.record, procStart })
    observer.fixLabel(pid, label)
  }
  const otherPid = startIdleProcess(env)
  await waitFor("the stand-in process to run", () => processStat(otherPid) !== null)
  copyRecord(otherPid, copied.record.procStart, "idle-2 copied onto a live pid")
  const zombie = await startZombie(env)
  copyRecord(zombie.zombiePid, zombie.startTime, "idle-2 copied onto a zombie")
  log(`copied idle-2's record onto pid ${otherPid} (a sleep) and onto pid ${zombie.zombiePid} (a zombie)`)
}

/**
 * "Move to background and exit", SIGKILL, SIGTERM, a killed job, a killed parked window. Resolves
 * once claude agents had its chance to show the killed job without a pid, to a promise of how the
 * moved window's process ended.
 */
const endSessions = async ({ driver, observer, registry }) => {
  log("ending sessions: Move to background and exit, SIGKILL, SIGTERM, a killed job, a killed parked window")
  const shellWindow = await driver.moveToBackgroundAndExit("shell")
  await waitFor(
    "the job of shell to register",
    () =>
      [...registry.readRecords().values()].some((record) =>
        record.kind === "bg" && record.name === "RUN-BACKGROUND-SHELL" && typeof record.status === "string"
      ),
    { timeoutMs: 90_000, intervalMs: 500 }
  )

  const victims = {
    sigkill: registry.windowOf("sigkill"),
    sigterm: registry.windowOf("sigterm"),
    parkedWindow: driver.parkedWithJob("park-shared-2"),
    job: registry.jobRecord(driver.parkedWithJob("park-empty")?.record.parkedJobId)
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
  await waitFor("the killed processes to end", () => Object.values(victims).every((found) => found === undefined || !isRunning(found.pid)))
  if (victims.sigterm !== undefined) {
    await waitFor("sigterm's record to be removed", () => !existsSync(registry.recordFile(victims.sigterm.pid)), { timeoutMs: 20_000 })
  }
  if (victims.job !== undefined) {
    const listedWithoutPid = await waitFor(
      "claude agents to list the killed job without a pid",
      async () => (await observer.claudeAgents()).some((a) => a.pid === undefined),
      { timeoutMs: 10_000, intervalMs: 200 }
    ).catch(() => false)
    log(`claude agents ${listedWithoutPid ? "lists" : "did not list"} the killed job without a pid`)
  }
  return shellWindow
}

/** A killed job is dropped or restarted after some seconds; a job that never got a process may stay listed for good. */
const waitUntilSettled = async ({ observer, registry }) => {
  await waitFor("claude agents to list only sessions with a pid", async () => (await observer.claudeAgents()).every((a) => a.pid !== undefined), {
    timeoutMs: 60_000,
    intervalMs: 2000
  })
    .catch((error) => log(`${error.message}; going on`))
  let last = ""
  await waitFor("the registry to settle", () => {
    const now = JSON.stringify([...registry.readRecords()].map(([pid, r]) => [pid, r.sessionId, r.status, r.spare ?? null]))
    const settled = now === last
    last = now
    return settled
  }, { timeoutMs: 90_000, intervalMs: 5000 }).catch((error) => log(`${error.message}; going on`))
}

const main = async () => {
  const { claude, env, home, other, tmux, work } = await setUp()
  const registry = makeRegistry(home)
  const driver = makeDriver({ tmux, registry, claude, log })
  const observer = makeObserver({
    claude,
    env,
    home,
    commandPath: join(repoRoot, "bin", "claude-peers.js"),
    registry,
    scenarioLabels: driver.labels,
    log
  })
  const context = { work, other, env, registry, driver, observer }

  const allRows = []
  const report = async (title) => {
    log(`snapshot: ${title}`)
    const { rows, stable } = await observer.snapshot()
    for (const row of rows) allRows.push(row)
    process.stdout.write(`\n## ${title}\n\n${renderTable(rows)}\n`)
    if (!stable) process.stdout.write("(the registry kept changing while this snapshot was taken: rows may mix two moments)\n")
  }

  await startSessions(context)
  await driveSessions(context)
  await copyRecords(context)
  await report("1. every session started and driven")
  const shellWindow = await endSessions(context)
  await report("2. right after the ends")
  log(`shell's window: ${await shellWindow.end}`)
  await waitUntilSettled(context)
  await report("3. settled")
  for (
    const row of await checkLiveness({
      ...context,
      claude,
      home,
      log,
      tmux: run.tmux,
      runDirectory: run.directory,
      commandPath: join(repoRoot, "bin", "claude-peers.js")
    })
  ) allRows.push(row)
  await runWaitPhase({ commandPath: join(repoRoot, "bin", "claude-peers.js"), driver, home, log, tmux, work })
  await checkHomes({ claude, commandPath: join(repoRoot, "bin", "claude-peers.js"), directory: run.directory, env, log })
  const send = await checkSendPhases({ ...context, claude, home, log, runDirectory: run.directory, tmux })

  const policyMismatches =
    (await checkPolicy({ claude, env, home, work, log, commandPath: join(repoRoot, "bin", "claude-peers.js"), runDirectory: run.directory })).length
  const undocumented = allRows.filter(isUndocumented).length
  const documented = allRows.filter((row) => row.judgement.startsWith("documented")).length
  process.stdout.write(
    `\n${allRows.length} rows in 3 snapshots: ${allRows.length - undocumented - documented} agree, ` +
      `${documented} documented differences, ${undocumented} undocumented.\n`
  )
  const sends = send.phases.flatMap((phase) => phase.rows)
  const sentRight = sends.filter((row) => row.problems.length === 0).length
  process.stdout.write(`${sends.length} sends in ${send.phases.length} phases: ${sentRight} as expected and as \`policy\` predicted.\n`)
  return undocumented === 0 && policyMismatches === 0 && send.ok ? 0 : 1
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
