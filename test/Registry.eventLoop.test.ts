/**
 * An embedder's event loop during a scan on `layerNode`, on the real OS: a host's timers and
 * immediates keep running while `inspect` reads a registry of 20,000 records. Nothing here compares
 * a duration with a fixed bound: the host's immediates count the turns of the event loop, which the
 * number of batches decides, and the longest wait of the host's timer is compared with the scan's
 * own length (a scan that never lets the loop turn makes one wait as long as itself).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FilesNode from "../src/layers/FilesNode.js"
import { layerNode } from "../src/layers/Node.js"
import { Files } from "../src/services/Files.js"
import { Registry } from "../src/services/Registry.js"
import { scanBatchSize } from "../src/services/RegistryScan.js"
import { recordText } from "./support/records.js"

const records = 20_000

/** Counts the turns of the event loop from now on: one immediate per turn; `stop` gives the count. */
const countImmediates = () => {
  let immediates = 0
  let running = true
  const count = () => {
    if (!running) return
    immediates++
    setImmediate(count)
  }
  setImmediate(count)
  return {
    stop: () => {
      running = false
      return immediates
    }
  }
}

describe("registry scan on layerNode: the host's event loop", () => {
  it("keeps turning during an inspect of 20,000 records: the host's immediates and its 5 ms interval run", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-loop-"))
    const sessions = path.join(home, "sessions")
    fs.mkdirSync(sessions)
    // Pids far above any this test starts: their records are `dead`, and every one is read.
    for (let i = 0; i < records; i++) fs.writeFileSync(path.join(sessions, `${3_000_000 + i}.json`), recordText(3_000_000 + i))
    const runtime = ManagedRuntime.make(layerNode({ claudeHome: home }))
    try {
      await runtime.runPromise(Effect.void)
      const ticks: Array<number> = []
      const interval = setInterval(() => ticks.push(performance.now()), 5)
      const start = performance.now()
      const turns = countImmediates()
      const entries = await runtime.runPromise(Effect.flatMap(Registry, (r) => r.inspect))
      const end = performance.now()
      const immediates = turns.stop()
      clearInterval(interval)

      expect(entries).toHaveLength(records)
      // The reads turn the loop between two batches (the liveness pass is one); each turn runs
      // the host's pending immediate once. A scan that held the loop would let it run once at most.
      const batches = Math.ceil(records / scanBatchSize)
      expect(immediates).toBeGreaterThanOrEqual(batches - 1)
      const during = ticks.filter((t) => t >= start && t <= end)
      const waits = [start, ...during, end].slice(1).map((t, i) => t - [start, ...during][i]!)
      const longest = Math.max(...waits)
      console.log(
        `scan ${(end - start).toFixed(0)} ms in ${batches} batches, ${immediates} turns, ${during.length} ticks of the 5 ms interval, longest wait ${
          longest.toFixed(1)
        } ms`
      )
      expect(during.length).toBeGreaterThanOrEqual(2)
      expect(longest).toBeLessThan((end - start) / 2)
    } finally {
      await runtime.dispose()
      fs.rmSync(home, { recursive: true, force: true })
    }
  }, 300_000)

  it("a listing of 10,000 entries lets the host's immediates run before it ends", async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-listing-"))
    try {
      for (let i = 0; i < 10_000; i++) fs.writeFileSync(path.join(directory, `${i}.json`), "")
      const turns = countImmediates()
      const listed = await Effect.runPromise(Effect.flatMap(Files, (files) => files.readDirectory(directory)).pipe(Effect.provide(FilesNode.layer)))
      const immediates = turns.stop()
      // Every name once, in name order, as a listing in one piece gives them.
      expect(listed.map((e) => e.name)).toEqual(Array.from({ length: 10_000 }, (_, i) => `${i}.json`).sort())
      // One listing in one piece would let the immediate run at most once before it returns.
      expect(immediates).toBeGreaterThanOrEqual(2)
    } finally {
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }, 120_000)
})
