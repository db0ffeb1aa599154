/**
 * `npm run bench`: how fast claude-peers is on this machine, as ratios measured in one run.
 *
 * Builds registries of 20, 1,000 and 10,000 canonical `<pid>.json` records in temporary homes, with
 * a realistic mix: live records on real `sleep` processes started here (and killed at the end), most
 * records on dead pids, some parked, some whose `procStart` was falsified (pid reused), some of live
 * sessions truncated mid-write (each costs the scan its one 25 ms retry), some without a messaging
 * socket. Then reports:
 * - the in-process `list` (the library on the Node layers): median time per scan and per record;
 * - the whole command, `node bin/claude-peers.js --claude-home DIR list --json`, against `node -e 0`,
 *   interleaved in the same run, as a ratio of medians;
 * - the command's peak RSS on 10,000 records;
 * - `settings get` / `settings set` wall times, once the command has them;
 * - the watch latencies, when `bench/watch.mjs` exists.
 * It prints a table and writes `bench/results.json`. This is a measurement, not a test: nothing in
 * `npm test` is timed.
 *
 * Environment: BENCH_RUNS (whole-command runs per side, default 15), BENCH_QUICK=1 (fewer repeats),
 * BENCH_WATCH=0 (skip the watch measurements, about a minute).
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, ManagedRuntime, Option } from "effect"
import { Registry } from "../dist/index.js"
import { layerNode } from "../dist/node.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")
const bin = path.join(root, "bin", "claude-peers.js")
const quick = process.env.BENCH_QUICK === "1"
const commandRuns = Number(process.env.BENCH_RUNS ?? (quick ? 7 : 15))

const targets = { listRatio20: 1.6, microsPerRecord10k: 25, peakRssMiB10k: 100 }

// ---------------------------------------------------------------------------------------------
// Statistics and timing

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const millis = (start) => Number(process.hrtime.bigint() - start) / 1e6

/** Wall time of one child process, which must exit 0. */
const timeCommand = (argv, options = {}) => {
  const start = process.hrtime.bigint()
  const result = spawnSync(argv[0], argv.slice(1), { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...options })
  const ms = millis(start)
  if (result.status !== 0) {
    throw new Error(`${argv.join(" ")} exited ${result.status}: ${result.stderr || result.stdout}`)
  }
  return { ms, stdout: result.stdout }
}

/** Runs each command `runs` times, round-robin, so that load on the machine hits them alike. */
const interleaved = (commands, runs) => {
  const times = commands.map(() => [])
  for (let i = 0; i < runs; i++) {
    commands.forEach((argv, k) => times[k].push(timeCommand(argv).ms))
  }
  return times.map(median)
}

// ---------------------------------------------------------------------------------------------
// Processes and records

const linux = process.platform === "linux" && fs.existsSync("/proc/self/stat")

const startTimeOf = (pid) => {
  if (!linux) return undefined
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/)[19]
}

const pidDomain = (() => {
  try {
    const machineId = fs.readFileSync("/etc/machine-id", "utf8").trim()
    return `linux:${machineId}:${fs.readlinkSync("/proc/self/ns/pid")}`
  } catch {
    return undefined
  }
})()

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code !== "ESRCH"
  }
}

const sleepers = []
const startSleepers = async (count) => {
  while (sleepers.length < count) {
    const child = spawn("sleep", ["3600"], { stdio: "ignore" })
    await new Promise((resolve, reject) => {
      child.once("spawn", resolve)
      child.once("error", reject)
    })
    sleepers.push({ child, pid: child.pid, startTime: startTimeOf(child.pid) })
  }
}
const killSleepers = () => {
  for (const { child } of sleepers) child.kill("SIGKILL")
}
process.once("exit", killSleepers)
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    killSleepers()
    process.exit(130)
  })
}

/** A record shaped like the ones Claude Code 2.1.332 writes (see test/fixtures/real-records). */
const recordText = (pid, fields = {}) => {
  const record = {
    pid,
    sessionId: `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`,
    cwd: `/home/user/work/project-${pid % 97}`,
    startedAt: 1796007021392,
    procStart: "1",
    version: "2.1.332",
    peerProtocol: 1,
    peerFeatures: ["notify_idle", "reply_across_default_dirs", "artifact_yield"],
    kind: "interactive",
    entrypoint: "cli",
    ...(pidDomain === undefined ? {} : { pidDomain }),
    messagingSocketPath: `/tmp/cc-socks/${pid}.sock`,
    name: `work-${pid}`,
    nameSource: "derived",
    status: ["idle", "busy", "waiting", "shell"][pid % 4],
    updatedAt: 1796007033251,
    statusUpdatedAt: 1796007033251
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete record[key]
    else record[key] = value
  }
  return JSON.stringify(record)
}

/**
 * The mix of each registry. Dead records carry a `procStart` too (as Claude Code writes it), so a
 * pid that some other process takes meanwhile reads as reused, never as live.
 */
const mixes = {
  20: { live: 15, reused: 1, parked: 1, noSocket: 1, truncated: 0 },
  1000: { live: 100, reused: 10, parked: 20, noSocket: 15, truncated: 5 },
  10000: { live: 480, reused: 20, parked: 100, noSocket: 50, truncated: 20 }
}

const pidMax = (() => {
  try {
    return Number(fs.readFileSync("/proc/sys/kernel/pid_max", "utf8"))
  } catch {
    return 99999
  }
})()

/** Pids no process has now, spread over the pid space, none of the sleepers'. */
const deadPids = (count, taken) => {
  const pids = []
  const step = Math.max(1, Math.floor((pidMax - 1000) / (count * 2)))
  for (let pid = 1000; pids.length < count; pid += step) {
    if (pid >= pidMax) throw new Error(`not enough free pids below pid_max ${pidMax} for ${count} dead records`)
    if (!taken.has(pid) && !isAlive(pid)) pids.push(pid)
  }
  return pids
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-bench-"))
process.once("exit", () => fs.rmSync(tmp, { recursive: true, force: true }))

/** Writes a registry of `size` records; returns its home and the pids that must come out live. */
const makeRegistry = (size, mix, name = `home-${size}`) => {
  const home = path.join(tmp, name)
  const sessions = path.join(home, "sessions")
  fs.mkdirSync(sessions, { recursive: true })
  const live = linux ? mix.live : mix.live + mix.reused
  const reused = linux ? mix.reused : 0
  // A record caught mid-rewrite is a live session's: Claude Code rewrites only its own record.
  const onProcesses = sleepers.slice(0, live + reused + mix.truncated)
  const taken = new Set(sleepers.map((s) => s.pid))
  const dead = deadPids(size - onProcesses.length, taken)
  const write = (pid, text) => fs.writeFileSync(path.join(sessions, `${pid}.json`), text)
  onProcesses.slice(0, live).forEach((s) => write(s.pid, recordText(s.pid, { procStart: s.startTime })))
  onProcesses.slice(live, live + reused).forEach((s) => write(s.pid, recordText(s.pid, { procStart: `${s.startTime}9` })))
  onProcesses.slice(live + reused).forEach((s) => write(s.pid, recordText(s.pid, { procStart: s.startTime }).slice(0, 120)))
  let i = 0
  for (const pid of dead) {
    if (i < mix.parked) write(pid, recordText(pid, { parkedJobId: `job-${pid}` }))
    else if (i < mix.parked + mix.noSocket) write(pid, recordText(pid, { messagingSocketPath: undefined }))
    else write(pid, recordText(pid))
    i++
  }
  // Claude Code's token files sit beside the records and are not `*.json`.
  for (const s of onProcesses.slice(0, 3)) fs.writeFileSync(path.join(sessions, `${s.pid}.abc123.key`), "k")
  return { home, size, mix, expectedLive: onProcesses.slice(0, live).map((s) => s.pid).sort((a, b) => a - b) }
}

const checkLive = (registry, pids, how) => {
  const expected = registry.expectedLive.join(",")
  const got = pids.join(",")
  if (got !== expected) {
    throw new Error(`${how} on ${registry.size} records: expected live pids ${expected}, got ${got}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Measurements

/** The library's `list` on the Node layers, the layers built once: median of repeated scans. */
const inProcessList = async (registry, runs) => {
  const runtime = ManagedRuntime.make(layerNode(Option.some(registry.home)))
  const list = Effect.flatMap(Registry.Registry, (r) => r.list)
  try {
    const first = await runtime.runPromise(list)
    checkLive(registry, first.map((s) => s.pid), "in-process list")
    const times = []
    for (let i = 0; i < runs; i++) {
      const start = process.hrtime.bigint()
      await runtime.runPromise(list)
      times.push(millis(start))
    }
    const ms = median(times)
    return { scanMs: ms, microsPerRecord: (ms * 1000) / registry.size }
  } finally {
    await runtime.dispose()
  }
}

const listArgv = (home) => [process.execPath, bin, "--claude-home", home, "list", "--json"]
const bareNode = [process.execPath, "-e", "0"]

/** The whole command against `node -e 0`, interleaved; the first runs also write the code cache. */
const wholeCommand = (registry, runs) => {
  const first = timeCommand(listArgv(registry.home))
  checkLive(registry, JSON.parse(first.stdout).map((s) => s.pid), "list --json")
  timeCommand(listArgv(registry.home))
  timeCommand(bareNode)
  const [listMs, nodeMs] = interleaved([listArgv(registry.home), bareNode], runs)
  return { listMs, nodeMs, ratio: listMs / nodeMs }
}

/** Peak RSS of the command: `/usr/bin/time -v` when present, else the child's own `maxRSS`. */
const peakRss = (registry) => {
  const time = ["/usr/bin/time", "/bin/time"].find((p) => fs.existsSync(p))
  if (time !== undefined) {
    const result = spawnSync(time, ["-v", ...listArgv(registry.home)], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
    const match = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)
    if (result.status === 0 && match !== null) return { peakRssMiB: Number(match[1]) / 1024, how: "/usr/bin/time -v" }
  }
  const report = path.join(tmp, "maxrss.txt")
  const preload = path.join(tmp, "maxrss.cjs")
  fs.writeFileSync(
    preload,
    `process.once("exit", () => require("fs").writeFileSync(${JSON.stringify(report)}, String(process.resourceUsage().maxRSS)))\n`
  )
  timeCommand([process.execPath, "--require", preload, ...listArgv(registry.home).slice(1)])
  return { peakRssMiB: Number(fs.readFileSync(report, "utf8")) / 1024, how: "process.resourceUsage().maxRSS" }
}

/** `settings get` and `settings set`, once the command has them; null until then. */
const settingsTimes = (runs) => {
  const home = path.join(tmp, "settings-home")
  fs.mkdirSync(home, { recursive: true })
  const settings = (...args) => [process.execPath, bin, "--claude-home", home, "settings", ...args, "--json"]
  const probe = spawnSync(settings("get")[0], settings("get").slice(1), { encoding: "utf8" })
  let available = false
  try {
    available = probe.status === 0 && typeof JSON.parse(probe.stdout).revision === "string"
  } catch {
    available = false
  }
  if (!available) return null
  fs.writeFileSync(path.join(home, "settings.json"), JSON.stringify({ model: "opus", permissions: { allow: [] } }, null, 2) + "\n")
  timeCommand(settings("set", "accept"))
  const get = interleaved([settings("get")], runs)[0]
  // Alternate the value, so that every run writes (setting the value already there writes nothing).
  const setTimes = []
  for (let i = 0; i < runs; i++) setTimes.push(timeCommand(settings("set", i % 2 === 0 ? "hold" : "accept")).ms)
  return { getMs: get, setMs: median(setTimes) }
}

/** `bench/watch.mjs`'s `runWatchBench` (and its own table), when that file exists. */
const watchLatencies = async () => {
  const file = path.join(here, "watch.mjs")
  if (!fs.existsSync(file)) return null
  const watch = await import("./watch.mjs")
  if (typeof watch.runWatchBench !== "function") return null
  const result = await watch.runWatchBench(
    quick ? { trials: 5, deathTrials: 2, warmupMillis: 1000, cpuMillis: 5000, memoryMillis: 8000 } : {}
  )
  const table = typeof watch.formatWatchBench === "function" ? watch.formatWatchBench(result) : null
  return { result, table }
}

// ---------------------------------------------------------------------------------------------

const fmt = (value, digits = 1) => (value === null || value === undefined ? "n/a" : Number(value).toFixed(digits))

const main = async () => {
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ")
  const startedAt = new Date().toISOString()
  const loadBefore = load()
  const sleeperCount = Math.max(...Object.values(mixes).map((m) => m.live + m.reused + m.truncated))
  process.stderr.write(`starting ${sleeperCount} sleep processes…\n`)
  await startSleepers(sleeperCount)

  const registries = Object.entries(mixes).map(([size, mix]) => makeRegistry(Number(size), mix))
  const torn20 = makeRegistry(20, { ...mixes[20], live: mixes[20].live - 1, truncated: 1 }, "home-20-truncated")

  const rows = []
  const results = { startedAt, node: process.version, platform: `${process.platform} ${os.arch()}`, cpus: os.cpus().length, loadBefore }

  results.inProcess = {}
  for (const registry of registries) {
    process.stderr.write(`in-process list, ${registry.size} records…\n`)
    const runs = quick ? 5 : registry.size <= 20 ? 200 : registry.size <= 1000 ? 40 : 15
    const r = await inProcessList(registry, runs)
    results.inProcess[registry.size] = { ...r, runs, mix: registry.mix }
    rows.push([`in-process list, ${registry.size} records`, `${fmt(r.scanMs, 2)} ms/scan`, `${fmt(r.microsPerRecord, 2)} µs/record`])
  }

  results.command = {}
  for (const registry of [...registries, torn20]) {
    const label = registry === torn20 ? "20 incl. 1 truncated" : String(registry.size)
    process.stderr.write(`list --json vs node -e 0, ${label} records…\n`)
    const runs = registry.size <= 20 ? commandRuns : Math.max(5, Math.round(commandRuns / 2))
    const r = wholeCommand(registry, runs)
    results.command[label] = { ...r, runs }
    rows.push([`list --json, ${label} records`, `${fmt(r.listMs)} ms (node -e 0: ${fmt(r.nodeMs)} ms)`, `${fmt(r.ratio, 2)}×`])
  }

  process.stderr.write("peak RSS, 10,000 records…\n")
  const rss = peakRss(registries.find((r) => r.size === 10000))
  results.peakRss10k = rss
  rows.push(["peak RSS, list --json, 10,000 records", `${fmt(rss.peakRssMiB)} MiB`, rss.how])

  process.stderr.write("settings…\n")
  const settings = settingsTimes(quick ? 5 : 10)
  results.settings = settings ?? "n/a"
  rows.push(["settings get", settings === null ? "n/a" : `${fmt(settings.getMs)} ms`, ""])
  rows.push(["settings set", settings === null ? "n/a" : `${fmt(settings.setMs)} ms`, ""])

  process.stderr.write("watch…\n")
  const watch = process.env.BENCH_WATCH === "0" ? null : await watchLatencies()
  results.watch = watch?.result ?? "n/a"
  if (watch === null) {
    rows.push(["watch latencies", "n/a", process.env.BENCH_WATCH === "0" ? "skipped (BENCH_WATCH=0)" : "bench/watch.mjs absent"])
  }
  else if (watch.table === null) {
    for (const [key, value] of Object.entries(watch.result.latency ?? {})) {
      rows.push([`watch: ${key}`, `${fmt(value.medianMs)} ms median`, `${fmt(value.maxMs)} ms max`])
    }
  }

  const ratio20 = results.command["20"].ratio
  const perRecord10k = results.inProcess[10000].microsPerRecord
  results.targets = {
    listRatio20: { target: `≤ ${targets.listRatio20}×`, measured: ratio20, met: ratio20 <= targets.listRatio20 },
    microsPerRecord10k: { target: `≤ ${targets.microsPerRecord10k} µs`, measured: perRecord10k, met: perRecord10k <= targets.microsPerRecord10k },
    peakRssMiB10k: { target: `< ${targets.peakRssMiB10k} MiB`, measured: rss.peakRssMiB, met: rss.peakRssMiB < targets.peakRssMiB10k }
  }
  results.loadAfter = load()

  const width = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)))
  const line = (r) => r.map((cell, i) => cell.padEnd(width[i])).join("  ").trimEnd()
  console.log(`claude-peers bench: node ${process.version}, ${results.platform}, ${results.cpus} CPUs, load ${loadBefore} → ${results.loadAfter}`)
  console.log(rows.map(line).join("\n"))
  if (watch?.table) console.log(watch.table)
  console.log("targets:")
  for (const [name, t] of Object.entries(results.targets)) {
    console.log(`  ${name.padEnd(20)} ${t.target.padEnd(10)} measured ${fmt(t.measured, 2).padStart(7)}  ${t.met ? "met" : "NOT MET"}`)
  }
  fs.writeFileSync(path.join(here, "results.json"), JSON.stringify(results, null, 2) + "\n")
  console.log("written: bench/results.json")
}

try {
  await main()
} finally {
  killSleepers()
}
