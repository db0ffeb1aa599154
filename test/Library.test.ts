/**
 * The package entries as a user imports them (through the package's own name and `exports`), and
 * the README's testing example: the in-memory layers must answer like the real ones.
 */
import { describe, expect, it } from "@effect/vitest"
import { Registry, Settings, setPolicy, Watch } from "claude-peers"
import { layerNode } from "claude-peers/node"
import { layerMemory, makeMemoryWorld } from "claude-peers/testing"
import { Chunk, Effect, Option, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

describe("the package entries", () => {
  it.live("README: a session in the memory world is live until its pid is reused", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const proc = world.processes.spawn()
      world.files.writeFile(
        `${world.home.sessionsDirectory}/${proc.pid}.json`,
        JSON.stringify({ pid: proc.pid, sessionId: "s-1", name: "api", messagingSocketPath: "/tmp/s.sock", procStart: proc.startTime })
      )
      const list = Effect.flatMap(Registry.Registry, (r) => r.list).pipe(Effect.provide(layerMemory(world)))
      expect((yield* list).map((s) => s.name)).toEqual(["api"])
      world.processes.reuse(proc.pid)
      expect(yield* list).toEqual([])
    }))

  it.live("the memory layer carries the settings service too", () =>
    Effect.gen(function*() {
      const world = makeMemoryWorld()
      const view = yield* Effect.flatMap(Settings.Settings, (s) => s.update(setPolicy("refuse"))).pipe(
        Effect.provide(layerMemory(world))
      )
      expect(view).toMatchObject({ crossSessionInbound: "refuse", scope: "user", userAllowsAutomaticDelivery: false })
      expect(world.files.readText(world.home.settingsFile)).toBe("{\n  \"crossSessionInbound\": \"refuse\"\n}\n")
    }))

  it.live("layerNode on a temporary home: list, settings and the first watch events", () =>
    Effect.gen(function*() {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-lib-"))
      try {
        const layer = layerNode(Option.some(home))
        expect(yield* Effect.flatMap(Registry.Registry, (r) => r.list).pipe(Effect.provide(layer))).toEqual([])
        const view = yield* Effect.flatMap(Settings.Settings, (s) => s.read).pipe(Effect.provide(layer))
        expect(view.crossSessionInbound).toBe(null)
        fs.mkdirSync(path.join(home, "sessions"))
        fs.writeFileSync(
          path.join(home, "sessions", `${process.pid}.json`),
          JSON.stringify({ pid: process.pid, sessionId: "me", name: "me", messagingSocketPath: "/tmp/me.sock" })
        )
        const first = yield* Watch.watchSessions({ intervalMillis: 200 }).pipe(Stream.take(1), Stream.runCollect, Effect.provide(layer))
        expect(Chunk.toReadonlyArray(first).map((e) => [e.type, e.session.pid])).toEqual([["appeared", process.pid]])
      } finally {
        fs.rmSync(home, { recursive: true, force: true })
      }
    }))
})
