/**
 * The process port's evidence: a process's arguments, environment and working directory, each read
 * or unreadable with a reason, never a failure. One suite on the memory table (staged) and on the
 * Node layer (real child processes, `/proc`); macOS's `ps` strategy runs here with procps' `ps`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { read } from "../src/domain/Observed.js"
import { layer as layerMemory, makeMemoryProcesses } from "../src/layers/ProcessProbeMemory.js"
import { makeNode, psArguments, splitNul } from "../src/layers/ProcessProbeNode.js"
import { notAskedFor, type ProcessEvidence, ProcessProbe } from "../src/services/ProcessProbe.js"
import { killAndReap } from "./support/worlds.js"

interface Launched {
  readonly pid: number
  /** The argument vector the process should show, program first. */
  readonly argv: ReadonlyArray<string>
}

interface Controller {
  readonly layer: Layer.Layer<ProcessProbe>
  readonly launch: (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string) => Promise<Launched>
  readonly kill: (pid: number) => Promise<void>
  readonly folder: string
  /** The effective uid of the processes it launches. */
  readonly user: number
}

const evidenceOf = (layer: Layer.Layer<ProcessProbe>, pid: number): Promise<ProcessEvidence> =>
  Effect.runPromise(Effect.provide(Effect.flatMap(ProcessProbe, (probe) => probe.evidence(pid)), layer))

const suite = (name: string, make: () => Controller) =>
  describe(`process evidence: ${name}`, () => {
    const controller = make()

    it("a process's arguments, environment and working directory, as it was started", async () => {
      const args = ["--settings", "{\"crossSessionInbound\": \"hold\"}", "--setting-sources", "", "two words"]
      const launched = await controller.launch(args, { CLAUDE_CODE_HARBOR_KITE: "0", EMPTY: "", WITH_EQUALS: "a=b" }, controller.folder)
      const evidence = await evidenceOf(controller.layer, launched.pid)
      expect(evidence.arguments).toEqual(read(launched.argv))
      expect(evidence.environment._tag).toBe("Read")
      const environment = evidence.environment._tag === "Read" ? evidence.environment.value : new Map()
      expect(environment.get("CLAUDE_CODE_HARBOR_KITE")).toBe("0")
      expect(environment.get("EMPTY")).toBe("")
      expect(environment.get("WITH_EQUALS")).toBe("a=b")
      expect(evidence.workingDirectory).toEqual(read(controller.folder))
      expect(evidence.user).toEqual(read(controller.user))
      await controller.kill(launched.pid)
    })

    it("asked for parts, only those are read; the others are not asked for", async () => {
      const launched = await controller.launch([], { CLAUDE_CONFIG_DIR: "/profiles/work" }, controller.folder)
      const evidence = await Effect.runPromise(
        Effect.provide(Effect.flatMap(ProcessProbe, (probe) => probe.evidence(launched.pid, ["environment"])), controller.layer)
      )
      expect(evidence.environment._tag === "Read" ? evidence.environment.value.get("CLAUDE_CONFIG_DIR") : undefined).toBe("/profiles/work")
      expect(evidence.arguments).toEqual(notAskedFor)
      expect(evidence.workingDirectory).toEqual(notAskedFor)
      expect([undefined, notAskedFor]).toContainEqual(evidence.mountNamespace)
      await controller.kill(launched.pid)
    })

    it("a process that has exited: every part unreadable, saying so", async () => {
      const launched = await controller.launch([], {}, controller.folder)
      await controller.kill(launched.pid)
      const evidence = await evidenceOf(controller.layer, launched.pid)
      for (const part of [evidence.arguments, evidence.environment, evidence.workingDirectory, evidence.user]) {
        expect(part).toEqual({ _tag: "Unreadable", reason: "the process has exited" })
      }
    })
  })

suite("memory", () => {
  const processes = makeMemoryProcesses()
  return {
    layer: layerMemory(processes),
    folder: "/home/user/work",
    user: 1000,
    launch: async (args, env, cwd) => {
      const argv = ["node", "/opt/claude", ...args]
      const { pid } = processes.spawn({ arguments: argv, environment: env, workingDirectory: cwd })
      return { pid, argv }
    },
    kill: async (pid) => processes.kill(pid)
  }
})

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-evidence-")))
const script = path.join(tmp, "claude")
fs.writeFileSync(script, "setInterval(() => {}, 1 << 30)\n")
const children = new Map<number, ChildProcess>()
afterAll(async () => {
  await Promise.all([...children.values()].map(killAndReap))
  fs.rmSync(tmp, { recursive: true, force: true })
})

const launchNode = async (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string): Promise<Launched> => {
  const child = spawn(process.execPath, [script, ...args], { cwd, env, stdio: "ignore" })
  children.set(child.pid!, child)
  for (let i = 0; i < 500; i++) {
    const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8")
    if (cmdline.includes(script)) break
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return { pid: child.pid!, argv: [process.execPath, script, ...args] }
}

const killNode = async (pid: number) => {
  const child = children.get(pid)
  if (child !== undefined) await killAndReap(child)
}

/** The Node probe with the given platform's strategy (macOS's `ps` runs here with procps' `ps`). */
const nodeLayer = (platform: NodeJS.Platform): Layer.Layer<ProcessProbe> => Layer.succeed(ProcessProbe, makeNode(platform))

suite("node", () => ({ layer: nodeLayer("linux"), folder: tmp, user: process.geteuid!(), launch: launchNode, kill: killNode }))

describe("a real process's evidence, staged in the memory world", () => {
  it("keeps every variable of its environment (as the Node probe gives it, not a plain Map)", async () => {
    const launched = await launchNode([], { HOME: "/home/elsewhere", CLAUDE_CONFIG_DIR: "/profiles/work", EMPTY: "" }, tmp)
    try {
      const real = await evidenceOf(nodeLayer("linux"), launched.pid)
      expect(real.environment._tag).toBe("Read")
      const processes = makeMemoryProcesses()
      const { pid } = processes.spawn({ arguments: real.arguments, environment: real.environment, workingDirectory: real.workingDirectory })
      const replayed = await evidenceOf(layerMemory(processes), pid)
      const variables = (evidence: ProcessEvidence) => (evidence.environment._tag === "Read" ? [...evidence.environment.value] : [])
      expect(variables(replayed)).toEqual(variables(real))
      expect(variables(replayed)).toEqual(expect.arrayContaining([["HOME", "/home/elsewhere"], ["CLAUDE_CONFIG_DIR", "/profiles/work"], ["EMPTY", ""]]))
    } finally {
      await killNode(launched.pid)
    }
  })
})

describe("process evidence on macOS (ps) and elsewhere", () => {
  it("macOS: the arguments from ps, split back when no settings option is among them", async () => {
    const plain = await launchNode(["--model", "opus", "--name", "api"], {}, tmp)
    const evidence = await evidenceOf(nodeLayer("darwin"), plain.pid)
    expect(evidence.arguments).toEqual(read(plain.argv))
    expect(evidence.environment._tag).toBe("Unreadable")
    expect(evidence.workingDirectory._tag).toBe("Unreadable")
    const settings = await launchNode(["--settings", "{\"crossSessionInbound\": \"hold\"}"], {}, tmp)
    const ambiguous = await evidenceOf(nodeLayer("darwin"), settings.pid)
    expect(ambiguous.arguments).toMatchObject({ _tag: "Unreadable" })
    await killNode(plain.pid)
    await killNode(settings.pid)
  })

  it("a platform with neither /proc nor ps: nothing read, never a failure", async () => {
    const evidence = await evidenceOf(nodeLayer("win32"), process.pid)
    expect([evidence.arguments._tag, evidence.environment._tag, evidence.workingDirectory._tag]).toEqual(["Unreadable", "Unreadable", "Unreadable"])
  })

  it("what is not a process id has no evidence", async () => {
    const evidence = await evidenceOf(nodeLayer("linux"), -1)
    expect(evidence.arguments).toEqual({ _tag: "Unreadable", reason: "-1 is not a process id" })
  })
})

describe("splitNul and psArguments", () => {
  it("splitNul: the NUL after the last word terminates it; a rewritten title may lack it; empty is no words", () => {
    expect(splitNul("claude\0--settings\0\0")).toEqual(["claude", "--settings", ""])
    expect(splitNul("claude: title")).toEqual(["claude: title"])
    expect(splitNul("")).toEqual([])
  })

  it("psArguments: unreadable as soon as any settings option appears, even inside another value", () => {
    expect(psArguments("claude --model opus\n")).toEqual(read(["claude", "--model", "opus"]))
    expect(psArguments("")._tag).toBe("Unreadable")
    for (const option of ["--settings", "--setting-sources=user", "--restricted", "--managed-settings", "--project-config-root"]) {
      expect(psArguments(`claude ${option} x`)._tag, option).toBe("Unreadable")
    }
    expect(psArguments("claude --append-system-prompt use--settings")._tag).toBe("Unreadable")
  })
})
