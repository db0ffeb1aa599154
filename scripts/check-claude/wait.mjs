/**
 * The `wait` phase: one more real session, driven through each state while `claude-peers wait`
 * waits for it, each wait started before the keys that bring the state (a prompt and Enter: busy;
 * Escape: idle; `/config`: waiting; SIGKILL: gone), plus a wait that times out and one that sees
 * the session end while it waits for another state. Every wait must exit with the contract's code
 * and print the state (or the verdict) the session's record then shows.
 */
import { spawn } from "node:child_process"
import { readdirSync, readlinkSync } from "node:fs"
import { setTimeout as delay } from "node:timers/promises"
import { CheckFailed, runProgram, waitFor } from "./tools.mjs"

/** `claude-peers wait …` started now: its exit code and parsed stdout once it ends. */
const startWait = (commandPath, home, args) => {
  const child = spawn(process.execPath, [commandPath, "--claude-home", home, "wait", ...args, "--json"], { stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk))
  const ended = new Promise((resolve) => child.on("close", (code) => resolve({ code, output: stdout.trim() === "" ? null : JSON.parse(stdout) })))
  return { child, ended }
}

/** Until the wait holds its directory watch (it opens one only once it has resolved the session), or has ended. */
const watching = (child) =>
  waitFor(`wait (pid ${child.pid}) to watch the registry`, () => {
    if (child.exitCode !== null || child.signalCode !== null) return true
    try {
      return readdirSync(`/proc/${child.pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${child.pid}/fd/${fd}`) === "anon_inode:inotify"
        } catch {
          return false
        }
      })
    } catch {
      return false
    }
  }, { timeoutMs: 30_000, intervalMs: 50 })

export const runWaitPhase = async ({ commandPath, driver, home, log, tmux, work }) => {
  const label = "wait-states"
  // A name of its own: derived names collide (two sessions in one directory: one in 256).
  driver.start(label, work, ["--name", label])
  const up = await driver.up(label)
  const { name, sessionId } = up.record
  const results = []
  const expect = (what, result, code, check) => {
    const ok = result.code === code && check(result.output)
    results.push({ what, ok, code: result.code, output: result.output })
    log(`wait: ${what}: exit ${result.code}${ok ? "" : ` (expected ${code}): ${JSON.stringify(result.output)}`}`)
  }
  const state = (s) => (output) => output?.state === s && output.session?.pid === up.pid && output.session.status === s

  // Already idle: at once.
  const now = await runProgram(process.execPath, [commandPath, "--claude-home", home, "wait", "--name", name, "--until", "idle", "--json"], {
    env: process.env
  })
  expect("idle, already", { code: now.exit, output: JSON.parse(now.stdout) }, 0, state("idle"))

  const stateBy = async (what, until, keys) => {
    const wait = startWait(commandPath, home, [sessionId, "--until", until, "--timeout", "120000"])
    await watching(wait.child)
    await keys()
    expect(what, await wait.ended, 0, state(until))
  }
  // In this order: Escape interrupts a busy turn (idle), but does not close the /config dialog
  // (seen: the session stayed in it, and a prompt typed then went nowhere). An interrupted turn's
  // prompt comes back into the input, so it is cleared (Ctrl-U) before /config is typed.
  await stateBy("busy, after a prompt and Enter", "busy", () => driver.submit(label, "HOLD-BUSY"))
  await stateBy("idle, after Escape", "idle", async () => tmux.press(label, "Escape"))
  tmux.press(label, "C-u")
  await delay(500)
  await stateBy("waiting, after /config", "waiting", () => driver.submit(label, "/config"))

  // Waiting, it does not become busy within 2 s: timed_out.
  const timedOut = startWait(commandPath, home, ["--name", name, "--until", "busy", "--timeout", "2000"])
  expect("busy within 2 s, while the /config dialog is open", await timedOut.ended, 12, (o) => o?.error?.reason === "timed_out")

  // Killed while one wait waits for idle and another for gone.
  const forIdle = startWait(commandPath, home, [sessionId, "--until", "idle", "--timeout", "120000"])
  const forGone = startWait(commandPath, home, [sessionId, "--until", "gone", "--timeout", "120000"])
  await Promise.all([watching(forIdle.child), watching(forGone.child)])
  process.kill(up.pid, "SIGKILL")
  expect("idle, while the session is killed", await forIdle.ended, 13, (o) => o?.error?.reason === "ended" && o.error.verdict === "dead")
  expect("gone, after SIGKILL", await forGone.ended, 0, (o) => o?.state === "gone" && o.verdict === "dead" && o.session?.pid === up.pid)

  const failed = results.filter((r) => !r.ok)
  process.stdout.write(`\n## wait\n\n${results.map((r) => `- ${r.ok ? "ok" : "FAILED"}: ${r.what} (exit ${r.code})`).join("\n")}\n`)
  if (failed.length > 0) throw new CheckFailed(`wait: ${failed.length} of ${results.length} waits did not end as the contract says`)
}
