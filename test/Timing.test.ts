/**
 * A test that forgets `TestClock.adjust` gets a clue on stderr within vitest's default timeout
 * (5 s), whatever the wait's length; a wait on the real clock never prints it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { afterEach, vi } from "vitest"
import { setPolicy } from "../src/domain/Settings.js"
import { Settings } from "../src/services/Settings.js"
import * as Timing from "../src/services/Timing.js"
import { makeMemoryHome } from "./support/settingsHomes.js"

/** What the library wrote to stderr through the default `Console`, kept off the terminal. */
const recordStderr = () => {
  const lines: Array<string> = []
  vi.spyOn(console, "error").mockImplementation((...args: Array<unknown>) => void lines.push(args.map(String).join(" ")))
  return lines
}
afterEach(() => {
  vi.restoreAllMocks()
})

/** Polls on the real timer until a clue is written; only the test's timeout bounds it. */
const clueIn = (lines: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    while (!lines.some((line) => line.startsWith("claude-peers: still waiting"))) await new Promise((resolve) => setTimeout(resolve, 20))
    return lines.find((line) => line.startsWith("claude-peers: still waiting"))!
  })

// Vitest's default timeout, which the suite's config raises: the clue must come within it.
const vitestDefault = { timeout: 5_000 }

describe("the clue for a TestClock that nobody moves", () => {
  it.effect("an update waiting on a live lock holder, with the contract's 2 s wait", () =>
    Effect.gen(function*() {
      const lines = recordStderr()
      const home = makeMemoryHome()
      const holder = home.spawn()
      home.write(".settings.json.claude-peers.lock", `${holder.pid} ${holder.startTime}\n`)
      const fiber = yield* Effect.fork(Effect.provide(Effect.flatMap(Settings, (settings) => settings.update(setPolicy("hold"))), home.layer))
      const clue = yield* clueIn(lines)
      expect(clue).toContain(`the settings lock ${home.lockFile}, held by`)
      expect(clue).toContain("TestClock.adjust")
      expect(clue).toContain("`timing`")
      yield* Fiber.interrupt(fiber)
      expect(lines).toHaveLength(1)
    }), vitestDefault)

  it.effect("a wait of an hour: the clue does not wait for the wait's length", () =>
    Effect.gen(function*() {
      const lines = recordStderr()
      const fiber = yield* Effect.fork(Timing.sleep(Duration.hours(1), "an hour"))
      expect(yield* clueIn(lines)).toMatch(/^claude-peers: still waiting for an hour \(1h on Effect's Clock\)/)
      yield* Fiber.interrupt(fiber)
    }), vitestDefault)

  it.live("a wait on the real clock, longer than the clock may stand still, ends without a clue", () =>
    Effect.gen(function*() {
      const lines = recordStderr()
      yield* Timing.sleep(Duration.millis(2_500), "the real clock")
      expect(lines).toEqual([])
    }))
})
