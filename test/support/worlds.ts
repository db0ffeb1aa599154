/**
 * A "world" is a Claude home plus a process table, on one backend: the in-memory layers, or the
 * real OS (a temporary directory and real child processes that the test starts and kills). The
 * registry's conformance suite is written once against this interface and run on both.
 */
import { Effect, Layer } from "effect"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { MemoryFiles } from "../../src/layers/FilesMemory.js"
import * as Memory from "../../src/layers/Memory.js"
import { layerNode as filesLayerNode } from "../../src/layers/FilesNode.js"
import type { MemoryProcesses } from "../../src/layers/ProcessProbeMemory.js"
import { layerNode as probeLayerNode } from "../../src/layers/ProcessProbeNode.js"
import * as ClaudeHome from "../../src/services/ClaudeHome.js"
import type { Files } from "../../src/services/Files.js"
import type { ProcessProbe } from "../../src/services/ProcessProbe.js"
import * as Registry from "../../src/services/Registry.js"

export interface Process {
  readonly pid: number
  readonly startTime: string
}

export interface World {
  readonly kind: "memory" | "node"
  readonly home: string
  readonly sessions: string
  /** This world's pid domain, as a record of a session started here would carry it. */
  readonly pidDomain: string
  readonly write: (name: string, content: string | Uint8Array) => void
  readonly remove: (name: string) => void
  readonly mkdir: (name: string) => void
  readonly mkfifo: (name: string) => void
  /** A link in the registry directory to a character device (`/dev/zero` on the real OS). */
  readonly linkToDevice: (name: string) => void
  readonly symlink: (target: string, name: string) => void
  readonly spawn: () => Process
  readonly kill: (pid: number) => Promise<void>
  /** A pid that no process has. */
  readonly deadPid: () => Promise<number>
  readonly layer: Layer.Layer<Registry.Registry | Files | ProcessProbe>
  readonly close: () => Promise<void>
}

export const makeMemoryWorld = (): World & {
  readonly files: MemoryFiles
  readonly processes: MemoryProcesses
} => {
  const memory = Memory.makeMemoryWorld()
  const { files, processes } = memory
  const home = memory.home.root
  const sessions = memory.home.sessionsDirectory
  const pidDomain = "linux:memory:pid:[1]"
  processes.setPidDomain(pidDomain)
  files.makeDirectory(sessions, 0o700)
  let nextDead = 900_000
  return {
    kind: "memory",
    home,
    sessions,
    pidDomain,
    files,
    processes,
    write: (name, content) => files.writeFile(`${sessions}/${name}`, content, 0o644),
    remove: (name) => files.remove(`${sessions}/${name}`),
    mkdir: (name) => files.makeDirectory(`${sessions}/${name}`),
    mkfifo: (name) => files.makeSpecial(`${sessions}/${name}`, "FIFO"),
    linkToDevice: (name) => {
      files.makeSpecial("/dev/zero", "CharacterDevice")
      files.symlink("/dev/zero", `${sessions}/${name}`)
    },
    symlink: (target, name) => files.symlink(target, `${sessions}/${name}`),
    spawn: () => processes.spawn(),
    kill: async (pid) => processes.kill(pid),
    deadPid: async () => nextDead++,
    layer: Memory.layerMemory(memory),
    close: async () => {}
  }
}

export const startTimeOf = (pid: number): string => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}

export const linuxPidDomain = (): string =>
  `linux:${fs.readFileSync("/etc/machine-id", "utf8").trim()}:${fs.readlinkSync("/proc/self/ns/pid")}`

/** Starts a real process that does nothing until it is killed. */
export const startSleeper = (): ChildProcess & { readonly pid: number } => {
  const child = spawn("sleep", ["3600"], { stdio: "ignore" })
  if (child.pid === undefined) throw new Error("could not start sleep")
  return child as ChildProcess & { readonly pid: number }
}

export const killAndReap = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

/** Real processes that a test starts and kills, all killed and reaped by `close`. */
export const makeRealProcesses = () => {
  const children = new Map<number, ChildProcess>()
  return {
    spawn: (): Process => {
      const child = startSleeper()
      children.set(child.pid, child)
      return { pid: child.pid, startTime: startTimeOf(child.pid) }
    },
    kill: async (pid: number): Promise<void> => {
      const child = children.get(pid)
      if (child !== undefined) await killAndReap(child)
    },
    deadPid: async (): Promise<number> => {
      const child = startSleeper()
      await killAndReap(child)
      return child.pid
    },
    close: async (): Promise<void> => {
      await Promise.all([...children.values()].map(killAndReap))
    }
  }
}

export const makeNodeWorld = (): World => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-registry-"))
  const sessions = path.join(home, "sessions")
  fs.mkdirSync(sessions, { mode: 0o700 })
  const processes = makeRealProcesses()
  return {
    kind: "node",
    home,
    sessions,
    pidDomain: linuxPidDomain(),
    write: (name, content) => fs.writeFileSync(path.join(sessions, name), content, { mode: 0o644 }),
    remove: (name) => fs.rmSync(path.join(sessions, name), { recursive: true, force: true }),
    mkdir: (name) => fs.mkdirSync(path.join(sessions, name)),
    mkfifo: (name) => execFileSync("mkfifo", [path.join(sessions, name)]),
    linkToDevice: (name) => fs.symlinkSync("/dev/zero", path.join(sessions, name)),
    symlink: (target, name) => fs.symlinkSync(target, path.join(sessions, name)),
    spawn: processes.spawn,
    kill: processes.kill,
    deadPid: processes.deadPid,
    layer: Registry.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(filesLayerNode, probeLayerNode, ClaudeHome.layer(home)))
    ),
    close: async () => {
      await processes.close()
      fs.rmSync(home, { recursive: true, force: true })
    }
  }
}

/** Runs an effect that needs the registry in a world. */
export const inWorld = <A, E>(world: World, effect: Effect.Effect<A, E, Registry.Registry>) =>
  Effect.provide(effect, world.layer)
