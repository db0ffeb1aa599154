/**
 * Starting real Claude Code sessions in the private tmux server and driving them with keys, waiting
 * for what their records say rather than for fixed times.
 */
import { existsSync } from "node:fs"
import { setTimeout as delay } from "node:timers/promises"
import { processStat } from "./processes.mjs"
import { CheckFailed, waitFor } from "./tools.mjs"

export const makeDriver = ({ claude, log, registry, tmux }) => {
  /** The tmux session names of the sessions started here. */
  const labels = new Set()

  const paneGone = (label) => {
    const pane = tmux.panes().find((p) => p.name === label)
    return pane === undefined || pane.dead
  }

  const start = (label, cwd, args = [], environment = {}) => {
    labels.add(label)
    tmux.newSession(label, cwd, [claude, ...args], environment)
  }

  /**
   * A session started in bypassPermissions mode asks to confirm it before it registers ("WARNING:
   * Claude Code running in Bypass Permissions mode", "No, exit" selected): this takes "Yes, I accept".
   * As root, Claude Code starts that mode only with IS_SANDBOX=1 in its environment.
   */
  const acceptBypassWarning = async (label) => {
    await waitFor(`${label}'s bypass permissions warning`, () => {
      if (paneGone(label)) throw new CheckFailed(`${label}: Claude Code exited at its start. Its screen:\n${tmux.screen(label)}`)
      return tmux.screen(label).includes("Yes, I accept")
    }, { timeoutMs: 60_000, intervalMs: 200 })
    tmux.press(label, "Down")
    await delay(300)
    tmux.press(label, "Enter")
  }

  /** Up: its record is written and carries a status (the first write has none). */
  const up = async (label, { needsStatus = true } = {}) => {
    const found = await waitFor(`${label} to register`, () => {
      if (paneGone(label)) {
        throw new CheckFailed(`${label}: Claude Code exited before it registered. Its screen:\n${tmux.screen(label)}`)
      }
      const window = registry.windowOf(label)
      return window !== undefined && (!needsStatus || typeof window.record.status === "string") ? window : undefined
    }, { timeoutMs: 180_000, intervalMs: 500 })
    log(`${label}: up, pid ${found.pid}, name ${JSON.stringify(found.record.name)}`)
    return found
  }

  const statusOf = (label, status) => waitFor(`${label} to be ${status}`, () => registry.windowOf(label)?.record.status === status, { timeoutMs: 60_000 })

  /** Types `text` and Enter, once the screen shows the text (a key sent too early is lost). */
  const submit = async (label, text) => {
    tmux.type(label, text)
    await waitFor(`${label} to show ${JSON.stringify(text)}`, () => tmux.screen(label).includes(text), { timeoutMs: 15_000, intervalMs: 100 })
    tmux.press(label, "Enter")
  }

  /** A `!` shell command: the conversation then holds no prompt of its own, so its job is `(backgrounded)`. */
  const shellCommand = async (label, command) => {
    const before = Date.now()
    tmux.type(label, "!")
    await delay(300)
    await submit(label, command)
    await waitFor(`${label} to finish the turn after its shell command`, () => {
      const record = registry.windowOf(label)?.record
      return record?.status === "idle" && record.statusUpdatedAt >= before
    })
  }

  /**
   * ← at an empty prompt: the window parks and its conversation starts as a background job, on a
   * spare worker when one is ready. Resolves to the job's record, or to undefined when the job
   * ended before it registered: on this loaded 2-core machine about one park in five did (the job
   * "settled (killed)" some 14 s after it claimed a spare, in the background service's log), so
   * every background record must carry a status first, and the caller may try again.
   */
  const park = async (label) => {
    await waitFor(
      "the background workers to be ready",
      () => [...registry.readRecords().values()].every((record) => record.kind !== "bg" || typeof record.status === "string"),
      { timeoutMs: 60_000, intervalMs: 500 }
    ).catch((error) => log(`${error.message}; parking ${label} anyway`))
    tmux.press(label, "Left")
    const window = await waitFor(`${label} to park`, () => {
      const found = registry.windowOf(label)
      return typeof found?.record.parkedJobId === "string" ? found : undefined
    })
    const jobId = window.record.parkedJobId
    const ended = () => ["stopped", "failed", "done"].includes(registry.jobState(jobId)?.state)
    const job = await waitFor(`the job ${jobId} of ${label} to register`, () => {
      const found = registry.jobRecord(jobId)
      return typeof found?.record.status === "string" ? found : ended() ? "it ended first" : undefined
    }, { timeoutMs: 90_000, intervalMs: 500 }).catch((error) => {
      if (error instanceof CheckFailed) return error.message
      throw error
    })
    if (typeof job !== "string") {
      log(`${label}: parked; its job ${jobId} runs as pid ${job.pid}, named ${JSON.stringify(job.record.name)}`)
      return job
    }
    const state = registry.jobState(jobId)
    log(`${label}: parked, but its job ${jobId} never registered (${job}; its state: ${JSON.stringify(state?.state)}, ${JSON.stringify(state?.detail)})`)
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

  /** The window of `label` whose job runs (the retry's, when the first job never registered). */
  const parkedWithJob = (label) =>
    [label, `${label}-again`].map(registry.windowOf).find((window) => registry.jobRecord(window?.record.parkedJobId) !== undefined)

  /**
   * /exit on a session running a background shell offers "Move to background and exit": the window
   * hands its conversation to a job, removes its record and exits. Resolves once the record is gone,
   * to a promise of a sentence on how its process ended (it is a zombie for a moment, until tmux
   * reaps it; watched only to report it).
   */
  const moveToBackgroundAndExit = async (label) => {
    const window = registry.windowOf(label)
    await submit(label, "/exit")
    await waitFor(`the exit menu of ${label}`, () => tmux.screen(label).includes("Move to background and exit"))
    tmux.press(label, "Down")
    await delay(200)
    tmux.press(label, "Enter")
    const asked = Date.now()
    let zombieSince
    const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`
    const end = waitFor(`${label}'s window process to exit`, () => {
      const stat = processStat(window.pid)
      if (stat?.state === "Z") zombieSince ??= Date.now()
      return stat === null
    }, { timeoutMs: 60_000, intervalMs: 5 }).then(
      () =>
        `its process was reaped ${seconds(asked)} after the exit was asked` +
        (zombieSince === undefined ? "" : `, after ${seconds(zombieSince)} as a zombie`),
      () => `its process is still there after 60 s, in state ${processStat(window.pid)?.state}`
    )
    await waitFor(`${label}'s window record to be removed`, () => !existsSync(registry.recordFile(window.pid)), { timeoutMs: 30_000 })
    log(`${label}: moved to the background (its record is removed)`)
    return { end }
  }

  return { labels, start, acceptBypassWarning, up, statusOf, submit, shellCommand, park, parkOrRetry, parkedWithJob, moveToBackgroundAndExit }
}
