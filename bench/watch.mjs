#!/usr/bin/env node
/**
 * What `watch` costs and how fast it is, on the real OS, against the contract's figures: a written,
 * changed or removed record reported within 500 ms; a silent death within the interval plus 500 ms;
 * an idle watch over 50 live sessions well under 1% of a core, its memory not growing.
 *
 * Needs the `tsc` output (`npm run build`). Runs standalone (`node bench/watch.mjs`,
 * prints a table then the JSON) or from another runner through `runWatchBench()`. About 60 s.
 *
 * Latencies are measured in this process: the time from the write, change or removal returning to
 * the event reaching the stream's consumer. The idle cost is measured in a child process that runs
 * only the watch (`--watch-child`), sampling its own `process.cpuUsage()`, and `memoryUsage()` after a
 * full collection, so that the heap figures are what the watch retains, not garbage not yet
 * collected. No collection is forced within the CPU window. The same watch over an empty registry
 * runs beside it, to show the runtime's own share of that cost.
 */
import { Effect, Fiber, Stream } from "effect"
import { fork, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Watch } from "../dist/index.js"
import { layerNode } from "../dist/node.js"
import { recordText, startTimeOf } from "./records.mjs"

const watchSessions = ({ intervalMillis }) => Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions({ interval: intervalMillis })))

const thisFile = fileURLToPath(import.meta.url)

const sleep = (millis) => new Promise((resolve) => setTimeout(resolve, millis))

/** A record of `pid` with its real start time, updated now. */
const recordOf = (pid, status = "idle") => recordText(pid, { procStart: startTimeOf(pid), status, updatedAt: Date.now(), statusUpdatedAt: Date.now() })

const startSleeper = () => {
  const child = spawn("sleep", ["3600"], { stdio: "ignore" })
  if (child.pid === undefined) throw new Error("could not start sleep")
  return child
}

const killAndReap = (child) =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

const summarize = (samples) => ({
  trials: samples.length,
  medianMs: Math.round(median(samples) * 10) / 10,
  maxMs: Math.round(Math.max(...samples) * 10) / 10
})

/** The watch in this process, with a way to wait for the next event that matches. */
const watchHere = (home, intervalMillis) => {
  const waiting = []
  const fiber = Effect.runFork(
    watchSessions({ intervalMillis }).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          const at = performance.now()
          const index = waiting.findIndex((w) => w.matches(event))
          if (index >= 0) waiting.splice(index, 1)[0].resolve(at)
        })
      ),
      Effect.provide(layerNode({ claudeHome: home }))
    )
  )
  /** Resolves with the time the matching event arrived; `act` runs once the waiter is in place. */
  const timeEvent = (matches, act, limitMillis) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no event within the limit")), limitMillis)
      waiting.push({ matches, resolve: (at) => (clearTimeout(timer), resolve(at)) })
      act()
    })
  return { timeEvent, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}

const is = (type, pid, verdict) => (event) => event._tag === type && event.session.pid === pid && (verdict === undefined || event.verdict === verdict)

async function fileLatencies(home, trials) {
  const sessions = path.join(home, "sessions")
  const sleeper = startSleeper()
  const watch = watchHere(home, 2000)
  const file = path.join(sessions, `${sleeper.pid}.json`)
  const written = []
  const changed = []
  const removed = []
  try {
    await sleep(300)
    for (let trial = 0; trial < trials; trial++) {
      // A random pause, so that writes do not fall in step with the interval's checks.
      await sleep(20 + Math.random() * 60)
      let start = 0
      let at = await watch.timeEvent(is("appeared", sleeper.pid), () => {
        start = performance.now()
        fs.writeFileSync(file, recordOf(sleeper.pid))
      }, 5000)
      written.push(at - start)
      await sleep(20 + Math.random() * 60)
      at = await watch.timeEvent(is("changed", sleeper.pid), () => {
        start = performance.now()
        fs.writeFileSync(file, recordOf(sleeper.pid, "busy"))
      }, 5000)
      changed.push(at - start)
      await sleep(20 + Math.random() * 60)
      at = await watch.timeEvent(is("gone", sleeper.pid, "removed"), () => {
        start = performance.now()
        fs.rmSync(file)
      }, 5000)
      removed.push(at - start)
    }
  } finally {
    await watch.stop()
    await killAndReap(sleeper)
  }
  return { written: summarize(written), changed: summarize(changed), removed: summarize(removed) }
}

async function deathLatency(home, trials, intervalMillis) {
  const sessions = path.join(home, "sessions")
  const watch = watchHere(home, intervalMillis)
  const samples = []
  try {
    for (let trial = 0; trial < trials; trial++) {
      const sleeper = startSleeper()
      await watch.timeEvent(is("appeared", sleeper.pid), () => fs.writeFileSync(path.join(sessions, `${sleeper.pid}.json`), recordOf(sleeper.pid)), 5000)
      await sleep(Math.random() * intervalMillis)
      let start = 0
      const at = await watch.timeEvent(is("gone", sleeper.pid, "dead"), () => {
        start = performance.now()
        sleeper.kill("SIGKILL")
      }, intervalMillis + 5000)
      samples.push(at - start)
      await killAndReap(sleeper)
      fs.rmSync(path.join(sessions, `${sleeper.pid}.json`), { force: true })
    }
  } finally {
    await watch.stop()
  }
  return { intervalMs: intervalMillis, ...summarize(samples) }
}

/** A child that runs only the watch over `sessionCount` live sessions, sampled for CPU time and memory. */
async function idleCost(home, sessionCount, { cpuMillis, intervalMillis, memoryMillis, warmupMillis }) {
  const sessions = path.join(home, "sessions")
  const sleepers = Array.from({ length: sessionCount }, startSleeper)
  for (const s of sleepers) fs.writeFileSync(path.join(sessions, `${s.pid}.json`), recordOf(s.pid))
  // Not the runner's own Node flags; `--expose-gc` lets a memory sample collect first.
  const child = fork(thisFile, ["--watch-child", home, String(intervalMillis)], {
    execArgv: ["--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  /** `cpu`: its CPU time so far; `memory`: its memory after a full collection, and its event counts. */
  const sample = (what) =>
    new Promise((resolve) => {
      child.once("message", (message) => resolve({ ...message, wall: performance.now() }))
      child.send(what)
    })
  try {
    const deadline = performance.now() + 15_000
    let first = await sample("memory")
    while (first.appeared < sessionCount) {
      if (performance.now() > deadline) throw new Error(`the watch saw ${first.appeared} of ${sessionCount} sessions`)
      await sleep(100)
      first = await sample("memory")
    }
    await sleep(warmupMillis)
    const start = await sample("cpu")
    await sleep(cpuMillis)
    const end = await sample("cpu")
    await sleep(Math.max(0, memoryMillis - warmupMillis - cpuMillis))
    const last = await sample("memory")
    const cpuMicros = end.cpu.user + end.cpu.system - start.cpu.user - start.cpu.system
    const MiB = 1024 * 1024
    return {
      sessions: sessionCount,
      intervalMs: intervalMillis,
      cpuPercentOfOneCore: Math.round((cpuMicros / 1000 / (end.wall - start.wall)) * 100 * 1000) / 1000,
      cpuWindowS: Math.round((end.wall - start.wall) / 100) / 10,
      rssStartMiB: Math.round((first.rss / MiB) * 10) / 10,
      rssEndMiB: Math.round((last.rss / MiB) * 10) / 10,
      heapUsedStartMiB: Math.round((first.heapUsed / MiB) * 10) / 10,
      heapUsedEndMiB: Math.round((last.heapUsed / MiB) * 10) / 10,
      memoryWindowS: Math.round((last.wall - first.wall) / 100) / 10,
      eventsWhileIdle: last.events - first.events
    }
  } finally {
    child.kill("SIGTERM")
    await Promise.all(sleepers.map(killAndReap))
  }
}

/**
 * Runs every measurement and returns the figures. `trials` is per file event kind; the idle watch
 * is sampled over `cpuMillis` for CPU and `memoryMillis` for memory.
 */
export async function runWatchBench(options = {}) {
  const {
    cpuMillis = 20_000,
    deathIntervalMillis = 2000,
    deathTrials = 4,
    memoryMillis = 30_000,
    sessionCount = 50,
    trials = 20,
    warmupMillis = 5_000
  } = options
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-bench-watch-"))
  const emptyHome = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-bench-watch-empty-"))
  fs.mkdirSync(path.join(home, "sessions"), { mode: 0o700 })
  fs.mkdirSync(path.join(emptyHome, "sessions"), { mode: 0o700 })
  try {
    const files = await fileLatencies(home, trials)
    const death = await deathLatency(home, deathTrials, deathIntervalMillis)
    // The same watch over an empty registry, side by side: what the runtime costs with nothing to probe.
    const idleOptions = { intervalMillis: deathIntervalMillis, warmupMillis, cpuMillis, memoryMillis }
    const [idle, empty] = await Promise.all([idleCost(home, sessionCount, idleOptions), idleCost(emptyHome, 0, idleOptions)])
    return {
      node: process.version,
      platform: `${process.platform} ${os.arch()}`,
      cpus: os.cpus().length,
      loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
      latency: { ...files, death },
      idle,
      idleEmptyRegistry: empty
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
    fs.rmSync(emptyHome, { recursive: true, force: true })
  }
}

export const formatWatchBench = (result) => {
  const { idle, idleEmptyRegistry: empty, latency } = result
  const row = (label, s, limit) => `${label.padEnd(30)}${String(s.medianMs).padStart(10)}${String(s.maxMs).padStart(10)}  ${limit}`
  return [
    `watch (${result.node}, ${result.platform}, ${result.cpus} CPUs, load average ${result.loadAverage.join(" ")})`,
    `${"latency to the event".padEnd(30)}${"median ms".padStart(10)}${"max ms".padStart(10)}  contract`,
    row(`record written (${latency.written.trials}x)`, latency.written, "< 500 ms"),
    row(`record changed (${latency.changed.trials}x)`, latency.changed, "< 500 ms"),
    row(`record removed (${latency.removed.trials}x)`, latency.removed, "< 500 ms"),
    row(`silent death (${latency.death.trials}x)`, latency.death, `< ${latency.death.intervalMs + 500} ms (interval ${latency.death.intervalMs})`),
    `idle watch over ${idle.sessions} live sessions, interval ${idle.intervalMs} ms:`,
    `  CPU ${idle.cpuPercentOfOneCore}% of one core over ${idle.cpuWindowS} s (contract: well under 1%)`,
    `  RSS ${idle.rssStartMiB} MiB -> ${idle.rssEndMiB} MiB, heap used ${idle.heapUsedStartMiB} -> ${idle.heapUsedEndMiB} MiB over ${idle.memoryWindowS} s; ${idle.eventsWhileIdle} events while idle`,
    `  the same watch over an empty registry: CPU ${empty.cpuPercentOfOneCore}%, heap used ${empty.heapUsedStartMiB} -> ${empty.heapUsedEndMiB} MiB`
  ].join("\n")
}

const runChild = (home, intervalMillis) => {
  const counts = { appeared: 0, events: 0 }
  Effect.runFork(
    watchSessions({ intervalMillis }).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          counts.events++
          if (event._tag === "appeared") counts.appeared++
        })
      ),
      Effect.provide(layerNode({ claudeHome: home }))
    )
  )
  process.on("message", (what) => {
    if (what === "cpu") return process.send({ cpu: process.cpuUsage() })
    globalThis.gc?.()
    const memory = process.memoryUsage()
    process.send({ rss: memory.rss, heapUsed: memory.heapUsed, ...counts })
  })
  process.on("disconnect", () => process.exit(0))
  process.on("SIGTERM", () => process.exit(0))
}

if (process.argv[1] === thisFile) {
  if (process.argv[2] === "--watch-child") {
    runChild(process.argv[3], Number(process.argv[4]))
  } else {
    const result = await runWatchBench()
    console.log(formatWatchBench(result))
    console.log(JSON.stringify(result))
  }
}
