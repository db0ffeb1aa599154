#!/usr/bin/env node
/**
 * What one `watch` event costs: the time from a record's rewrite returning to its `changed` event
 * reaching the stream's consumer, on registries of 20 and 10,000 records (a few live sessions of
 * real sleeping processes, the rest stale records of dead pids, as real registries hold), with
 * `node -e 0` measured in the same run for scale. Needs `npm run build`. Prints a table, then JSON.
 *
 * `node bench/watch-events.mjs [trials]` (default 40 per size).
 */
import { Effect, Fiber, Queue, Stream } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Watch } from "../dist/index.js"
import { layerNode } from "../dist/node.js"
import { recordText, startTimeOf } from "./records.mjs"

const trials = Number(process.argv[2] ?? 40)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const nodeBaseline = () => {
  const times = []
  for (let i = 0; i < 15; i++) {
    const start = performance.now()
    spawnSync(process.execPath, ["-e", "0"], { env: { PATH: process.env.PATH } })
    times.push(performance.now() - start)
  }
  return median(times)
}

const measure = async (records, sleepers) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `claude-peers-watch-events-${records}-`))
  const sessions = path.join(home, "sessions")
  fs.mkdirSync(sessions, { recursive: true })
  const live = sleepers.map((s) => ({ pid: s.pid, procStart: startTimeOf(s.pid) }))
  for (const { pid, procStart } of live) fs.writeFileSync(path.join(sessions, `${pid}.json`), recordText(pid, { procStart, status: "idle" }))
  // Stale records of pids no process has (above the kernel's pid_max default of 4194304).
  for (let i = 0; live.length + i < records; i++) {
    fs.writeFileSync(path.join(sessions, `${5_000_000 + i}.json`), recordText(5_000_000 + i, { procStart: undefined }))
  }
  const target = live[0]
  const file = path.join(sessions, `${target.pid}.json`)
  const program = Effect.gen(function*() {
    const events = yield* Queue.unbounded()
    const fiber = yield* Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions())).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => event._tag === "changed" && event.session.pid === target.pid && Queue.unsafeOffer(events, performance.now()))
      ),
      Effect.fork
    )
    yield* Effect.promise(() => sleep(1500))
    const samples = []
    for (let i = 0; i < trials; i++) {
      // Pauses past the watch's window, and random, so that a rewrite is read on its own.
      yield* Effect.promise(() => sleep(120 + Math.random() * 80))
      const start = performance.now()
      fs.writeFileSync(file, recordText(target.pid, { procStart: target.procStart, status: i % 2 === 0 ? "busy" : "idle" }))
      const at = yield* Queue.take(events).pipe(Effect.timeout("10 seconds"))
      samples.push(at - start)
    }
    yield* Fiber.interrupt(fiber)
    return samples
  })
  try {
    return await Effect.runPromise(program.pipe(Effect.provide(layerNode({ claudeHome: home }))))
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
  }
}

const main = async () => {
  const sleepers = Array.from({ length: 5 }, () => spawn("sleep", ["3600"], { stdio: "ignore" }))
  try {
    const nodeMs = nodeBaseline()
    const rows = []
    for (const records of [20, 10_000]) {
      const samples = await measure(records, sleepers)
      rows.push({
        records,
        trials: samples.length,
        medianMs: median(samples),
        p90Ms: [...samples].sort((a, b) => a - b)[Math.floor(samples.length * 0.9)],
        maxMs: Math.max(...samples)
      })
    }
    const nodeAfter = nodeBaseline()
    process.stdout.write(
      `node -e 0: ${nodeMs.toFixed(1)} ms before, ${nodeAfter.toFixed(1)} ms after; load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}\n`
    )
    process.stdout.write("| records | trials | event median ms | p90 ms | max ms |\n| --- | --- | --- | --- | --- |\n")
    for (const r of rows) process.stdout.write(`| ${r.records} | ${r.trials} | ${r.medianMs.toFixed(1)} | ${r.p90Ms.toFixed(1)} | ${r.maxMs.toFixed(1)} |\n`)
    process.stdout.write(`${JSON.stringify({ nodeMs, nodeAfter, rows })}\n`)
  } finally {
    for (const s of sleepers) s.kill("SIGKILL")
  }
}

await main()
