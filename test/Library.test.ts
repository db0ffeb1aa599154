/**
 * The package entries as a user imports them (through the package's own name and `exports`): what
 * each entry holds, and that the shipped memory world answers like the real machine.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Library from "claude-peers"
import { InvalidJson, NotLive, Registry, setPolicy, Settings, Watch } from "claude-peers"
import * as Cli from "claude-peers/cli"
import * as Node from "claude-peers/node"
import { layerNode } from "claude-peers/node"
import * as Testing from "claude-peers/testing"
import { layerMemory, makeMemoryWorld } from "claude-peers/testing"
import { Chunk, Effect, Exit, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

describe("the package entries", () => {
  it("each entry exports exactly its public names, and no internals", () => {
    expect(Object.keys(Library).sort()).toEqual([
      "Appeared",
      "Candidate",
      "ChangedDuringWrite",
      "Changed",
      "Ended",
      "ClaudeHome",
      "ClaudeHomes",
      "Delivery",
      "DeliveryCause",
      "DeliveryFailed",
      "DeliveryResult",
      "Files",
      "Gone",
      "GoneVerdict",
      "IdentityMismatch",
      "InboundPolicy",
      "InboundRefused",
      "InvalidJson",
      "InvalidMessage",
      "InvalidSettings",
      "Mismatch",
      "NotAddressable",
      "NotLive",
      "NotLiveReason",
      "Policy",
      "PolicyChange",
      "Prediction",
      "ProcessProbe",
      "Receipt",
      "ReceiverMode",
      "RecordDescription",
      "Registry",
      "Relay",
      "Session",
      "SenderOutcome",
      "SessionEvent",
      "SessionPolicy",
      "SessionQuery",
      "Settings",
      "SettingsProblem",
      "SettingsView",
      "Status",
      "TimedOut",
      "Timing",
      "Verdict",
      "Wait",
      "WaitState",
      "Watch",
      "WatchHomes",
      "WouldBeHeld",
      "effectiveFor",
      "maxMessageLength",
      "normalizeName",
      "resetPolicy",
      "setPolicy"
    ].sort())
    expect(Object.keys(Registry).sort()).toEqual(["Registry", "layer", "layerHomes", "make", "makeHomes"])
    expect(Object.keys(Watch).sort()).toEqual(["Watch", "layer", "make", "rereadEveryIntervals"])
    expect(Object.keys(Library.Wait).sort()).toEqual(["Wait", "layer", "make", "stateOf"])
    expect(Object.keys(Library.Policy).sort()).toEqual(["Policy", "layer", "make"])
    expect(Object.keys(Node).sort()).toEqual(["findClaudeBinary", "layerFiles", "layerNode", "layerPorts", "layerProcessProbe", "layerRelay", "makeRelay"])
    expect(Object.keys(Testing).sort()).toEqual([
      "RelayAnswer",
      "layerFiles",
      "layerMemory",
      "layerProcessProbe",
      "layerRelay",
      "makeMemoryProcesses",
      "makeMemoryRelay",
      "makeMemoryTree",
      "makeMemoryWorld"
    ])
    expect(Object.keys(Cli).sort()).toEqual(["ExitCode", "OutputFailed", "OutputLoss", "UsageError", "command", "teardown"])
  })

  it("each module of the root entry is an entry of its own, the same module", async () => {
    // Declarations name a service's types through these (`import("claude-peers/Files").Files`).
    const modules = {
      Registry: await import("claude-peers/Registry"),
      Settings: await import("claude-peers/Settings"),
      Watch: await import("claude-peers/Watch"),
      Policy: await import("claude-peers/Policy"),
      Timing: await import("claude-peers/Timing"),
      ClaudeHome: await import("claude-peers/ClaudeHome"),
      Files: await import("claude-peers/Files"),
      ProcessProbe: await import("claude-peers/ProcessProbe"),
      Verdict: await import("claude-peers/Verdict")
    }
    for (const [name, module] of Object.entries(modules)) {
      const namespace: Record<string, unknown> = Library[name as keyof typeof modules]
      expect(Object.keys(module).sort(), name).toEqual(Object.keys(namespace).sort())
      for (const [key, value] of Object.entries(module)) expect(value, `${name}.${key}`).toBe(namespace[key])
    }
  })

  it.live("a session in the memory world is live until its pid is reused; a refusal is a typed error", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      world.tree.writeFile(
        `${world.home.sessionsDirectory}/${proc.pid}.json`,
        JSON.stringify({ pid: proc.pid, sessionId: "s-1", name: "api", messagingSocketPath: "/tmp/s.sock", procStart: proc.startTime })
      )
      const list = Effect.flatMap(Registry.Registry, (r) => r.list).pipe(Effect.provide(layerMemory(world)))
      expect((yield* list).map((s) => [s.name, s.address])).toEqual([["api", "api"]])
      world.processes.reuse(proc.pid)
      expect(yield* list).toEqual([])
      const exit = yield* Effect.exit(Effect.flatMap(Registry.Registry, (r) => r.resolve({ sessionId: "s-1" })).pipe(Effect.provide(layerMemory(world))))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof NotLive).toBe(true)
    }))

  it.live("the memory layer carries the settings service too", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const view = yield* Effect.flatMap(Settings.Settings, (s) => s.update(setPolicy("refuse"))).pipe(Effect.provide(layerMemory(world)))
      expect(view).toMatchObject({ crossSessionInbound: "refuse", scope: "user", userAllowsAutomaticDelivery: false })
      expect(world.tree.readText(world.home.settingsFile)).toBe("{\n  \"crossSessionInbound\": \"refuse\"\n}\n")
    }))

  /**
   * A failure is made as synchronously as a success: a caller that runs an operation with
   * `Effect.runSyncExit` gets the typed error in its `Exit`, never an `AsyncFiberException` because
   * making the error waited for something (as loading its class with `import()` would).
   */
  describe("a failing operation run with Effect.runSyncExit", () => {
    const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown => Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit

    it("Registry.resolve of an unknown id on the memory layers fails with NotLive", () => {
      const world = makeMemoryWorld()
      const exit = Effect.runSyncExit(
        Effect.flatMap(Registry.Registry, (r) => r.resolve({ sessionId: "nobody" })).pipe(Effect.provide(layerMemory(world)))
      )
      expect(failureOf(exit)).toBeInstanceOf(NotLive)
    })

    it("a settings update on a file that is not JSON, on the memory layers, fails with InvalidJson", () => {
      const world = makeMemoryWorld()
      world.tree.writeFile(world.home.settingsFile, "{ not json")
      const exit = Effect.runSyncExit(
        Effect.flatMap(Settings.Settings, (s) => s.update(setPolicy("hold"))).pipe(Effect.provide(layerMemory(world)))
      )
      expect(failureOf(exit)).toBeInstanceOf(InvalidJson)
      expect(world.tree.readText(world.home.settingsFile)).toBe("{ not json")
    })

    it("a settings read on a file that is not JSON, on layerNode, fails with InvalidJson", () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-lib-"))
      try {
        fs.writeFileSync(path.join(home, "settings.json"), "{ not json")
        const exit = Effect.runSyncExit(Effect.flatMap(Settings.Settings, (s) => s.read).pipe(Effect.provide(layerNode({ claudeHome: home }))))
        expect(failureOf(exit)).toBeInstanceOf(InvalidJson)
      } finally {
        fs.rmSync(home, { recursive: true, force: true })
      }
    })
  })

  it.live("layerNode on a temporary home: list, settings and the first watch events", () =>
    Effect.gen(function*() {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-lib-"))
      try {
        const layer = layerNode({ claudeHome: home, timing: { watchWindow: "10 millis" } })
        expect(yield* Effect.flatMap(Registry.Registry, (r) => r.list).pipe(Effect.provide(layer))).toEqual([])
        const view = yield* Effect.flatMap(Settings.Settings, (s) => s.read).pipe(Effect.provide(layer))
        expect(view.crossSessionInbound).toBe(null)
        fs.mkdirSync(path.join(home, "sessions"))
        fs.writeFileSync(
          path.join(home, "sessions", `${process.pid}.json`),
          JSON.stringify({ pid: process.pid, sessionId: "me", name: "me", messagingSocketPath: "/tmp/me.sock" })
        )
        const first = yield* Stream.unwrap(Effect.map(Watch.Watch, (w) => w.sessions({ interval: "200 millis" }))).pipe(
          Stream.take(1),
          Stream.runCollect,
          Effect.provide(layer)
        )
        expect(Chunk.toReadonlyArray(first).map((e) => [e._tag, e.session.pid])).toEqual([["appeared", process.pid]])
      } finally {
        fs.rmSync(home, { recursive: true, force: true })
      }
    }))
})
