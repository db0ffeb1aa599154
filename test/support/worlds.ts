/**
 * A "world" is a Claude home plus a process table, on one backend: the shipped memory world behind
 * `layerMemory`, or the real OS (a temporary directory and real child processes that the test starts
 * and kills) behind `layerNode`. Every conformance suite is written once against this interface and
 * run on both, through the shipped composite layers, so no test-only wiring can hide a difference.
 */
import type { Layer } from "effect"
import { Effect } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FilesMemory from "../../src/layers/FilesMemory.js"
import { layerMemory, makeMemoryWorld as makeShippedWorld, type MemoryOptions, type MemoryWorld } from "../../src/layers/Memory.js"
import type { MemoryUser } from "../../src/layers/MemoryTree.js"
import { layerNode, type NodeOptions } from "../../src/layers/Node.js"
import type { Services } from "../../src/layers/Services.js"
import type { TimingOptions } from "../../src/services/Timing.js"

export interface Process {
  readonly pid: number
  readonly startTime: string
}

/** Paths are relative to the Claude home (`sessions/4242.json`, `settings.json`); `""` is the home itself. */
export interface World {
  readonly kind: "memory" | "node"
  readonly home: string
  readonly sessions: string
  readonly settingsFile: string
  readonly lockFile: string
  /** This world's pid domain, as a record of a session started here would carry it. */
  readonly pidDomain: string
  /** The process the program runs as: a lock of ours names it. */
  readonly self: Process
  /** Creates missing parents; a new file gets `mode` (0o644 unless given). */
  readonly write: (name: string, content: string | Uint8Array, mode?: number) => void
  /** The bytes of a regular file (links followed), or undefined. */
  readonly read: (name: string) => Uint8Array | undefined
  readonly exists: (name: string) => boolean
  /** Entry names of a directory of the home, sorted; empty when it is missing. */
  readonly list: (directory?: string) => ReadonlyArray<string>
  /** Permission bits, links not followed. */
  readonly modeOf: (name: string) => number
  readonly isSymlink: (name: string) => boolean
  readonly symlink: (target: string, name: string) => void
  readonly mkdir: (name: string) => void
  readonly mkfifo: (name: string) => void
  /** A link to a character device (`/dev/zero` on the real OS). */
  readonly linkToDevice: (name: string) => void
  readonly remove: (name: string) => void
  readonly chmod: (name: string, mode: number) => void
  /** Follows links. */
  readonly chown: (name: string, uid: number, gid: number) => void
  /** Owner and group, links not followed. */
  readonly ownerOf: (name: string) => { readonly uid: number; readonly gid: number }
  /**
   * A token that changes whenever the entry is replaced (an inode number), so a test can tell
   * "nothing was written" from "the same bytes were written again".
   */
  readonly identityOf: (name: string) => string
  readonly spawn: () => Process
  readonly kill: (pid: number) => Promise<void>
  /** A pid that no process has now. */
  readonly deadPid: () => Promise<number>
  /** A process that has exited and is not reaped (a zombie), with the start time it had. */
  readonly zombie: () => Promise<Process>
  /** Every service over this world, through the shipped composite layer. */
  readonly layer: Layer.Layer<Services>
  /** The same with other waits (`timing`). */
  readonly layerWith: (options: { readonly timing?: TimingOptions }) => Layer.Layer<Services>
  readonly close: () => Promise<void>
}

export interface WorldOptions {
  /** The home directory is not created (a registry or an update must cope). */
  readonly missingHome?: boolean
  /** The home path is a regular file, so neither the registry nor the settings can be reached. */
  readonly homeIsAFile?: boolean
  /** The registry directory is created (default: yes, unless the home is missing or a file). */
  readonly sessionsDirectory?: boolean
  /** Memory worlds only: the user the program runs as (uid 0 is root). A Node world runs as this process. */
  readonly user?: MemoryUser
}

export type MemoryTestWorld = World & { readonly world: MemoryWorld }

export const makeMemoryWorld = (options: WorldOptions = {}): MemoryTestWorld => {
  const world = makeShippedWorld({ user: options.user })
  const { processes, tree } = world
  const home = world.home.root
  const pidDomain = "linux:memory:pid:[1]"
  processes.setPidDomain(pidDomain)
  if (options.homeIsAFile === true) tree.writeFile(home, "not a directory")
  else if (options.missingHome !== true) {
    tree.makeDirectory(home, 0o700)
    if (options.sessionsDirectory !== false) tree.makeDirectory(world.home.sessionsDirectory, 0o700)
  }
  const at = (name: string) => (name === "" ? home : `${home}/${name}`)
  // The entry as the services see it, through the shipped port.
  const port = FilesMemory.make(tree)
  const lstat = (name: string) => Effect.runSync(port.lstat(at(name)))
  return {
    kind: "memory",
    world,
    home,
    sessions: world.home.sessionsDirectory,
    settingsFile: world.home.settingsFile,
    lockFile: `${home}/.settings.json.claude-peers.lock`,
    pidDomain,
    self: processes.self,
    write: (name, content, mode) => {
      if (!tree.exists(at(name))) tree.writeFile(at(name), content, mode ?? 0o644)
      else tree.writeFile(at(name), content, mode)
    },
    read: (name) => tree.readFile(at(name)),
    exists: (name) => tree.exists(at(name)),
    list: (directory = "") => tree.list(at(directory)),
    modeOf: (name) => lstat(name).mode,
    isSymlink: (name) => tree.exists(at(name)) && lstat(name).type === "SymbolicLink",
    symlink: (target, name) => tree.symlink(target, at(name)),
    mkdir: (name) => tree.makeDirectory(at(name)),
    mkfifo: (name) => tree.makeSpecial(at(name), "FIFO"),
    linkToDevice: (name) => {
      if (!tree.exists("/dev/zero")) tree.makeSpecial("/dev/zero", "CharacterDevice")
      tree.symlink("/dev/zero", at(name))
    },
    remove: (name) => tree.remove(at(name)),
    chmod: (name, mode) => tree.chmod(at(name), mode),
    chown: (name, uid, gid) => tree.chown(at(name), uid, gid),
    ownerOf: (name) => {
      const { gid, uid } = lstat(name)
      return { uid, gid }
    },
    identityOf: (name) => String(tree.inodeOf(at(name)) ?? "absent"),
    spawn: () => processes.spawn(),
    kill: async (pid) => processes.kill(pid),
    deadPid: async () => {
      const { pid } = processes.spawn()
      processes.kill(pid)
      return pid
    },
    zombie: async () => {
      const proc = processes.spawn()
      processes.exitUnreaped(proc.pid)
      return proc
    },
    layer: layerMemory(world),
    layerWith: (options: MemoryOptions) => layerMemory(world, options),
    close: async () => {}
  }
}

export const startTimeOf = (pid: number): string => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}

export const linuxPidDomain = (): string => `linux:${fs.readFileSync("/etc/machine-id", "utf8").trim()}:${fs.readlinkSync("/proc/self/ns/pid")}`

/** Whether `pid` names a process (a zombie included): `kill(pid, 0)` succeeds. */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

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
    /**
     * A real zombie: a shell starts a short-lived child, prints its pid, and replaces itself with a
     * `sleep` that never waits for it. Killing that parent (in `close`) hands the zombie to init.
     */
    zombie: async (): Promise<Process> => {
      const parent = spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 3600"], { stdio: ["ignore", "pipe", "ignore"] })
      children.set(parent.pid!, parent)
      const pid = await new Promise<number>((resolve) => parent.stdout!.once("data", (data: Buffer) => resolve(Number(String(data).trim()))))
      const startTime = startTimeOf(pid)
      for (let i = 0; i < 200 && stateOf(pid) !== "Z"; i++) await new Promise((r) => setTimeout(r, 10))
      if (stateOf(pid) !== "Z") throw new Error(`pid ${pid} did not become a zombie`)
      return { pid, startTime }
    },
    close: async (): Promise<void> => {
      await Promise.all([...children.values()].map(killAndReap))
    }
  }
}

const stateOf = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
  } catch {
    return undefined
  }
}

export const makeNodeWorld = (options: WorldOptions = {}): World => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-world-"))
  const home = path.join(base, "claude")
  if (options.homeIsAFile === true) fs.writeFileSync(home, "not a directory")
  else if (options.missingHome !== true) {
    fs.mkdirSync(home, { mode: 0o700 })
    if (options.sessionsDirectory !== false) fs.mkdirSync(path.join(home, "sessions"), { mode: 0o700 })
  }
  const at = (name: string) => (name === "" ? home : path.join(home, name))
  const processes = makeRealProcesses()
  const layerWith = (layerOptions: Omit<NodeOptions, "claudeHome">) => layerNode({ ...layerOptions, claudeHome: home })
  return {
    kind: "node",
    home,
    sessions: at("sessions"),
    settingsFile: at("settings.json"),
    lockFile: at(".settings.json.claude-peers.lock"),
    pidDomain: linuxPidDomain(),
    self: { pid: process.pid, startTime: startTimeOf(process.pid) },
    write: (name, content, mode) => {
      fs.mkdirSync(path.dirname(at(name)), { recursive: true })
      fs.writeFileSync(at(name), content, { mode: mode ?? 0o644 })
      if (mode !== undefined) fs.chmodSync(at(name), mode)
    },
    read: (name) => {
      try {
        return fs.statSync(at(name)).isFile() ? new Uint8Array(fs.readFileSync(at(name))) : undefined
      } catch {
        return undefined
      }
    },
    exists: (name) => fs.lstatSync(at(name), { throwIfNoEntry: false }) !== undefined,
    list: (directory = "") => (fs.existsSync(at(directory)) ? fs.readdirSync(at(directory)).sort() : []),
    modeOf: (name) => fs.lstatSync(at(name)).mode & 0o7777,
    isSymlink: (name) => fs.lstatSync(at(name), { throwIfNoEntry: false })?.isSymbolicLink() === true,
    symlink: (target, name) => fs.symlinkSync(target, at(name)),
    mkdir: (name) => fs.mkdirSync(at(name), { recursive: true }),
    mkfifo: (name) => execFileSync("mkfifo", [at(name)]),
    linkToDevice: (name) => fs.symlinkSync("/dev/zero", at(name)),
    remove: (name) => fs.rmSync(at(name), { recursive: true, force: true }),
    chmod: (name, mode) => fs.chmodSync(at(name), mode),
    chown: (name, uid, gid) => fs.chownSync(at(name), uid, gid),
    ownerOf: (name) => {
      const { gid, uid } = fs.lstatSync(at(name))
      return { uid, gid }
    },
    identityOf: (name) => {
      const stats = fs.lstatSync(at(name), { throwIfNoEntry: false })
      return stats === undefined ? "absent" : `${stats.dev}:${stats.ino}`
    },
    spawn: processes.spawn,
    kill: processes.kill,
    deadPid: processes.deadPid,
    zombie: processes.zombie,
    layer: layerWith({}),
    layerWith,
    close: async () => {
      await processes.close()
      fs.rmSync(base, { recursive: true, force: true })
    }
  }
}

/** Runs an effect that needs the services in a world. */
export const inWorld = <A, E>(world: World, effect: Effect.Effect<A, E, Services>) => Effect.provide(effect, world.layer)

/** The same world with paths relative to its registry directory (`4242.json`, `""` for the directory itself). */
export const registryView = <W extends World>(world: W): W => {
  const at = (name: string) => (name === "" ? "sessions" : `sessions/${name}`)
  return {
    ...world,
    write: (name: string, content: string | Uint8Array, mode?: number) => world.write(at(name), content, mode),
    read: (name: string) => world.read(at(name)),
    exists: (name: string) => world.exists(at(name)),
    list: (directory = "") => world.list(at(directory)),
    modeOf: (name: string) => world.modeOf(at(name)),
    isSymlink: (name: string) => world.isSymlink(at(name)),
    symlink: (target: string, name: string) => world.symlink(target, at(name)),
    mkdir: (name: string) => world.mkdir(at(name)),
    mkfifo: (name: string) => world.mkfifo(at(name)),
    linkToDevice: (name: string) => world.linkToDevice(at(name)),
    remove: (name: string) => world.remove(at(name)),
    chmod: (name: string, mode: number) => world.chmod(at(name), mode),
    chown: (name: string, uid: number, gid: number) => world.chown(at(name), uid, gid),
    ownerOf: (name: string) => world.ownerOf(at(name)),
    identityOf: (name: string) => world.identityOf(at(name))
  }
}

/** A memory world seen from its registry directory, as the registry and watch suites use it. */
export const makeMemoryRegistry = (options: WorldOptions = {}) => registryView(makeMemoryWorld(options))
/** A real-OS world seen from its registry directory. */
export const makeNodeRegistry = (options: WorldOptions = {}) => registryView(makeNodeWorld(options))
