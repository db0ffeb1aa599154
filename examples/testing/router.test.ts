/**
 * Testing your own code against claude-peers' in-memory world: a file tree and a process table
 * your test controls, behind the same services as the real machine (`layerMemory`).
 */
import { describe, expect, it } from "@effect/vitest"
import { layerMemory, makeMemoryWorld, type MemoryWorld } from "claude-peers/testing"
import { Effect, FastCheck as fc, Fiber, TestClock } from "effect"
import { route, waitForSession } from "./router.js"

/** A record as Claude Code writes it, for a process of the memory table. */
const register = (world: MemoryWorld, name: string, proc = world.processes.spawn()) => {
  world.tree.writeFile(
    `${world.home.sessionsDirectory}/${proc.pid}.json`,
    JSON.stringify({
      pid: proc.pid,
      sessionId: `session-${proc.pid}`,
      name,
      messagingSocketPath: `/tmp/cc-socks/${proc.pid}.sock`,
      procStart: proc.startTime
    })
  )
  return proc
}

describe("route", () => {
  it.effect("delivers to a live session by its name, and holds once its pid is gone", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = register(world, "api")
      expect(yield* route("api").pipe(Effect.provide(layerMemory(world)))).toEqual({ _tag: "Deliver", address: "api", pid: proc.pid })
      world.processes.kill(proc.pid)
      expect((yield* route("api").pipe(Effect.provide(layerMemory(world))))._tag).toBe("Hold")
    }))

  it.effect.prop(
    "never delivers to a dead session, nor to a name two live sessions share",
    { names: fc.array(fc.constantFrom("api", "docs", "Docs", "web"), { maxLength: 6 }), killed: fc.array(fc.boolean(), { maxLength: 6 }) },
    ({ killed, names }) =>
      Effect.gen(function*() {
        const world = makeMemoryWorld()
        const procs = names.map((name) => ({ name, proc: register(world, name) }))
        procs.forEach(({ proc }, i) => killed[i] === true && world.processes.kill(proc.pid))
        for (const wanted of ["api", "docs", "web"]) {
          const result = yield* route(wanted).pipe(Effect.provide(layerMemory(world)))
          // Names compare as Claude Code compares them: `Docs` and `docs` are one address.
          const live = procs.filter(({ name, proc }) => name.toLowerCase() === wanted && world.processes.isAlive(proc.pid))
          expect(result._tag).toBe(live.length === 1 ? "Deliver" : "Hold")
          if (result._tag === "Deliver") expect(result.pid).toBe(live[0]!.proc.pid)
        }
      }),
    { timeout: 30_000, fastCheck: { numRuns: 50 } }
  )
})

describe("waitForSession", () => {
  it.effect("waits on the TestClock: the session appears one gathering window after its record is written", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      world.tree.makeDirectory(world.home.sessionsDirectory)
      const waiting = yield* Effect.fork(waitForSession("late").pipe(Effect.provide(layerMemory(world))))
      yield* TestClock.adjust("1 second")
      const proc = register(world, "late")
      // The watch gathers change notifications for `timing.watchWindow` (75 ms by default) before it reads.
      yield* TestClock.adjust("100 millis")
      expect(yield* Fiber.join(waiting)).toBe(proc.pid)
    }))

  it.effect("the layer's `timing` option shortens the waits: a record caught mid-rewrite is read again at once", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = register(world, "torn")
      // The first read sees half a record, as when Claude Code rewrites it in place.
      world.tree.tearNextReads(`${world.home.sessionsDirectory}/${proc.pid}.json`, 10)
      const layer = layerMemory(world, { timing: { tornReadRetry: 0 } })
      expect(yield* route("torn").pipe(Effect.provide(layer))).toMatchObject({ _tag: "Deliver", pid: proc.pid })
    }))
})
