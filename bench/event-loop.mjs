#!/usr/bin/env node
/**
 * An embedder's event loop during a registry scan on `layerNode` (issue 21: a host's 5 ms interval
 * never waits more than 50 ms during an `inspect` of 20,000 records). The host here is this process:
 * a 5 ms interval records when it runs while `Registry.inspect` reads a registry of stale records
 * (pids no process has) and a few live ones; the longest wait between two of its ticks, and where in
 * the scan it fell, are what an embedder's timers and I/O would feel. Needs `npm run build`.
 *
 * `node bench/event-loop.mjs [records] [rounds]` (default 20000, 5).
 */
import { Effect, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Registry } from "../dist/index.js"
import { layerNode } from "../dist/node.js"
import { recordText, startTimeOf } from "./records.mjs"

const records = Number(process.argv[2] ?? 20_000)
const rounds = Number(process.argv[3] ?? 5)

const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-event-loop-"))
const sessions = path.join(home, "sessions")
fs.mkdirSync(sessions)
const sleepers = Array.from({ length: 5 }, () => spawn("sleep", ["3600"], { stdio: "ignore" }))
for (const { pid } of sleepers) fs.writeFileSync(path.join(sessions, `${pid}.json`), recordText(pid, { procStart: startTimeOf(pid) }))
// Pids above the kernel's pid_max default (4194304): dead by construction.
for (let i = sleepers.length; i < records; i++) fs.writeFileSync(path.join(sessions, `${5_000_000 + i}.json`), recordText(5_000_000 + i))

const runtime = ManagedRuntime.make(layerNode({ claudeHome: home }))
try {
  await runtime.runPromise(Effect.void)
  const results = []
  for (let round = 0; round < rounds; round++) {
    const ticks = []
    const interval = setInterval(() => ticks.push(performance.now()), 5)
    const start = performance.now()
    const entries = await runtime.runPromise(Effect.flatMap(Registry.Registry, (registry) => registry.inspect))
    const end = performance.now()
    clearInterval(interval)
    if (entries.length !== records) throw new Error(`inspect gave ${entries.length} entries, not ${records}`)
    const times = [start, ...ticks.filter((t) => t >= start && t <= end), end]
    const waits = times.slice(1).map((t, i) => ({ wait: t - times[i], at: times[i] - start }))
    const longest = waits.reduce((a, b) => (b.wait > a.wait ? b : a))
    results.push({ scanMs: end - start, longestWaitMs: longest.wait, atMs: longest.at, ticks: times.length - 2 })
  }
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]
  console.log(`inspect of ${records} records on layerNode, ${rounds} rounds, load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
  for (const r of results) {
    console.log(
      `  scan ${r.scanMs.toFixed(0)} ms, ${r.ticks} ticks of the 5 ms interval, longest wait ${r.longestWaitMs.toFixed(1)} ms at ${r.atMs.toFixed(0)} ms`
    )
  }
  console.log(`  median longest wait ${median(results.map((r) => r.longestWaitMs)).toFixed(1)} ms (issue 21: at most 50 ms)`)
  console.log(JSON.stringify({ records, rounds, results }))
} finally {
  await runtime.dispose()
  for (const sleeper of sleepers) sleeper.kill("SIGKILL")
  fs.rmSync(home, { recursive: true, force: true })
}
