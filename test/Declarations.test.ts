/**
 * Every type in a public signature is exported: a consumer that exports what it builds from the
 * package (`layerNode(…)`, `layerMemory(…)`, `layerPorts(…)`, a command tree holding `command`)
 * must compile under `declaration: true`, which has to name each inferred type through the
 * package's own entries (TS2742 otherwise). The consumer lives in a temporary directory and
 * imports the package by its name, resolved through `package.json`'s `exports` to the built
 * `dist/` (`npm test` builds it before the tests run).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-declarations-"))

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** A package of the project's own `node_modules`, linked into the consumer's. */
const link = (name: string, target = fs.realpathSync(path.join(root, "node_modules", name))) => {
  const at = path.join(scratch, "node_modules", name)
  fs.mkdirSync(path.dirname(at), { recursive: true })
  fs.symlinkSync(target, at, "dir")
}

const consumer = `
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ClaudeHome, ClaudeHomes, Policy, Registry, resetPolicy, Settings, Timing, Watch, WatchHomes } from "claude-peers"
import { command } from "claude-peers/cli"
import { layerFiles as layerFilesNode, layerNode, layerPorts, layerProcessProbe as layerProbeNode } from "claude-peers/node"
import {
  layerFiles as layerFilesMemory,
  layerMemory,
  layerProcessProbe as layerProbeMemory,
  makeMemoryProcesses,
  makeMemoryTree,
  makeMemoryWorld
} from "claude-peers/testing"

export const live = layerNode({ claudeHome: "/tmp/claude", timing: { lockWait: "1 second" } })
export const ports = layerPorts()
export const world = makeMemoryWorld()
export const memory = layerMemory(world, { timing: { watchInterval: 100 } })
export const host = Command.make("host").pipe(Command.withSubcommands([command]))
export const peers = command

export const inspect = Effect.flatMap(Registry.Registry, (registry) => registry.inspect)
export const sessions = Effect.flatMap(Registry.Registry, (registry) => registry.list)
export const session = Effect.flatMap(Registry.Registry, (registry) => registry.resolve({ sessionId: "s" }))
export const policies = Effect.flatMap(Policy.Policy, (policy) => policy.list)
export const resolved = Effect.flatMap(Policy.Policy, (policy) => policy.resolve({ name: "worker" }))
export const read = Effect.flatMap(Settings.Settings, (settings) => settings.read)
export const updated = Effect.flatMap(Settings.Settings, (settings) => settings.update(resetPolicy))
export const events = Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions()))
export const onNode = Effect.all([inspect, policies, read]).pipe(Effect.provide(live))
export const onMemory = Stream.provideLayer(events, memory)

export const services = [Registry.layer, Settings.layer, Watch.layer, Policy.layer, Timing.layer({})] as const
export const home = ClaudeHome.layer("/tmp/claude")
export const nodePorts = [layerFilesNode, layerProbeNode] as const
export const tree = makeMemoryTree()
export const processes = makeMemoryProcesses()
export const memoryPorts = [layerFilesMemory(tree), layerProbeMemory(processes)] as const
// Several homes, composed by hand: the homes service and the layers that need it.
export const homes = ClaudeHomes.layer({ roots: ["/tmp/a", "/tmp/b"], all: false }, { managedSettingsDirectory: "/etc/claude-code", standard: [] })
export const overHomes = [Registry.layerHomes, WatchHomes.layer] as const
`

describe("declarations", () => {
  it("a consumer exporting the layers and the mounted command compiles with declaration: true", async () => {
    fs.mkdirSync(path.join(scratch, "node_modules"), { recursive: true })
    // A copy of what the package ships, as an install has it: its own imports of the peers then
    // resolve to the consumer's, as in an application (a link to this checkout would resolve them
    // to this checkout's node_modules, which no consumer can name).
    const installed = path.join(scratch, "node_modules", "claude-peers")
    fs.mkdirSync(installed, { recursive: true })
    fs.copyFileSync(path.join(root, "package.json"), path.join(installed, "package.json"))
    fs.cpSync(path.join(root, "dist"), path.join(installed, "dist"), { recursive: true, filter: (from) => !from.includes(".v8-cache") })
    for (const name of ["effect", "@effect/cli", "@effect/platform", "@types/node"]) link(name)
    fs.writeFileSync(path.join(scratch, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    const file = path.join(scratch, "consumer.ts")
    fs.writeFileSync(file, consumer)

    fs.writeFileSync(
      path.join(scratch, "tsconfig.json"),
      JSON.stringify({
        files: ["consumer.ts"],
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          declaration: true,
          emitDeclarationOnly: true,
          types: ["node"],
          outDir: "out"
        }
      })
    )
    // tsc in a child, awaited: a compile of this size in the worker itself holds its event loop
    // long enough, on a busy machine, to miss vitest's own RPC deadline.
    const compiled = await new Promise<{ status: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--pretty", "false"], {
        cwd: scratch
      })
      let output = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      child.on("error", reject)
      child.on("close", (status) => resolve({ status, output }))
    })
    expect(compiled.output).toBe("")
    expect(compiled.status).toBe(0)
    expect(fs.readFileSync(path.join(scratch, "out", "consumer.d.ts"), "utf8")).toContain("claude-peers")
  })
})
