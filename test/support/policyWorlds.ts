/**
 * Worlds for the policy suites: a Claude home, a folder for projects, `--settings` files and a
 * managed settings directory, and sessions whose processes carry arguments, an environment and a
 * working directory. On memory they are staged in the shipped process table; on node they are real
 * processes: a small script named `claude` run by node, so that `/proc/<pid>/cmdline` holds
 * `node …/claude --settings …` exactly as a JavaScript install of Claude Code shows it.
 */
import { Effect, type Layer } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionPolicy } from "../../src/domain/Policy.js"
import { layerMemory, makeMemoryWorld, type MemoryWorld } from "../../src/layers/Memory.js"
import { layerNode } from "../../src/layers/Node.js"
import type { Services } from "../../src/layers/Services.js"
import { Policy } from "../../src/services/Policy.js"
import type { ResolveQuery } from "../../src/services/Registry.js"
import { recordText } from "./records.js"
import { killAndReap, linuxPidDomain, startTimeOf } from "./worlds.js"

export interface SessionOptions {
  /** The words after the program (`--settings …`). */
  readonly args?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  /** The folder the session runs in (its record's `cwd` and the process's working directory); default `<base>/work`, created. */
  readonly cwd?: string
  readonly name?: string
  readonly sessionId?: string
  /** Whether its record names a socket (default: yes). */
  readonly socket?: boolean
  readonly entrypoint?: string
  /** Record fields to add or drop (undefined drops). */
  readonly record?: Readonly<Record<string, unknown>>
}

export interface StartedSession {
  readonly pid: number
  readonly sessionId: string
  readonly name: string
  readonly cwd: string
}

export interface PolicyWorld {
  readonly kind: "memory" | "node"
  readonly home: string
  /** A folder outside the home for projects and `--settings` files. */
  readonly base: string
  /** The managed settings directory this world's layer reads (not created). */
  readonly managed: string
  /** The program the sessions run as (`node` on the real OS), and its script: `cmdline` is `[program, script, …args]`. */
  readonly program: ReadonlyArray<string>
  readonly write: (file: string, content: string | Uint8Array) => void
  readonly mkdir: (directory: string) => void
  readonly symlink: (target: string, file: string) => void
  readonly remove: (file: string) => void
  readonly mkfifo: (file: string) => void
  readonly startSession: (options?: SessionOptions) => Promise<StartedSession>
  readonly stopSession: (pid: number) => Promise<void>
  readonly layer: Layer.Layer<Services>
  readonly close: () => Promise<void>
}

/** `{"crossSessionInbound": value}` as Claude Code's /config writes it, or with other members. */
export const settingsText = (value: unknown, others: Readonly<Record<string, unknown>> = {}): string =>
  `${JSON.stringify({ ...others, crossSessionInbound: value }, null, 2)}\n`

export const policies = (world: PolicyWorld): Promise<ReadonlyArray<SessionPolicy>> =>
  Effect.runPromise(Effect.provide(Effect.flatMap(Policy, (p) => p.list), world.layer))

/** The one session the query resolves to, with its policy. */
export const resolvedOf = (world: PolicyWorld, query: ResolveQuery) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(Policy, (p) => p.resolve(query)), world.layer))

/** The policy of the one session the query resolves to. */
export const policyOf = async (world: PolicyWorld, query: ResolveQuery): Promise<SessionPolicy> => (await resolvedOf(world, query)).policy

/** The one session's policy, from `list`. */
export const onlyPolicy = async (world: PolicyWorld): Promise<SessionPolicy> => {
  const all = await policies(world)
  if (all.length !== 1) throw new Error(`expected one live session, found ${all.length}`)
  return all[0]!
}

let sessionCount = 0

const sessionIdentity = (options: SessionOptions) => {
  sessionCount++
  return {
    sessionId: options.sessionId ?? `00000000-0000-4000-8000-${String(sessionCount).padStart(12, "0")}`,
    name: options.name ?? `work-${sessionCount}`
  }
}

const recordOf = (pid: number, startTime: string, pidDomain: string, cwd: string, identity: { sessionId: string; name: string }, options: SessionOptions) =>
  recordText(pid, {
    procStart: startTime,
    pidDomain,
    cwd,
    sessionId: identity.sessionId,
    name: identity.name,
    messagingSocketPath: options.socket === false ? undefined : `/tmp/cc-socks/${pid}.sock`,
    entrypoint: options.entrypoint ?? "cli",
    ...options.record
  })

export type MemoryPolicyWorld = PolicyWorld & { readonly world: MemoryWorld }

export const makeMemoryPolicyWorld = (): MemoryPolicyWorld => {
  const base = "/home/user"
  const managed = "/etc/claude-code"
  const world = makeMemoryWorld({ claudeHome: `${base}/.claude`, managedSettingsDirectory: managed })
  const { processes, tree } = world
  const pidDomain = "linux:memory:pid:[1]"
  processes.setPidDomain(pidDomain)
  tree.makeDirectory(world.home.sessionsDirectory, 0o700)
  const program = ["node", "/opt/claude-code/claude"]
  return {
    kind: "memory",
    world,
    home: world.home.root,
    base,
    managed,
    program,
    write: (file, content) => tree.writeFile(file, content),
    mkdir: (directory) => tree.makeDirectory(directory),
    symlink: (target, file) => tree.symlink(target, file),
    remove: (file) => tree.remove(file),
    mkfifo: (file) => tree.makeSpecial(file, "FIFO"),
    startSession: async (options = {}) => {
      const cwd = options.cwd ?? `${base}/work`
      tree.makeDirectory(cwd)
      const { pid, startTime } = processes.spawn({
        arguments: [...program, ...(options.args ?? [])],
        environment: options.env ?? {},
        workingDirectory: cwd
      })
      const identity = sessionIdentity(options)
      tree.writeFile(`${world.home.sessionsDirectory}/${pid}.json`, recordOf(pid, startTime, pidDomain, cwd, identity, options))
      return { pid, cwd, ...identity }
    },
    stopSession: async (pid) => processes.kill(pid),
    layer: layerMemory(world),
    close: async () => {}
  }
}

/** The script the real sessions run: it only waits to be killed. */
const idleScript = "setInterval(() => {}, 1 << 30)\n"

export const makeNodePolicyWorld = (): PolicyWorld => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-policy-")))
  const home = path.join(base, ".claude")
  const managed = path.join(base, "managed")
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true, mode: 0o700 })
  const script = path.join(base, "bin", "claude")
  fs.mkdirSync(path.dirname(script))
  fs.writeFileSync(script, idleScript)
  const children = new Map<number, ChildProcess>()
  const pidDomain = linuxPidDomain()
  const program = [process.execPath, script]
  return {
    kind: "node",
    home,
    base,
    managed,
    program,
    write: (file, content) => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, content)
    },
    mkdir: (directory) => fs.mkdirSync(directory, { recursive: true }),
    symlink: (target, file) => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.symlinkSync(target, file)
    },
    remove: (file) => fs.rmSync(file, { recursive: true, force: true }),
    mkfifo: (file) => {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      spawnSyncOrThrow("mkfifo", [file])
    },
    startSession: async (options = {}) => {
      const cwd = options.cwd ?? path.join(base, "work")
      fs.mkdirSync(cwd, { recursive: true })
      const child = spawn(process.execPath, [script, ...(options.args ?? [])], {
        cwd,
        env: { ...options.env },
        stdio: "ignore"
      })
      if (child.pid === undefined) throw new Error("could not start the session's process")
      children.set(child.pid, child)
      await untilArgumentsShow(child.pid, script)
      const identity = sessionIdentity(options)
      fs.writeFileSync(
        path.join(home, "sessions", `${child.pid}.json`),
        recordOf(child.pid, startTimeOf(child.pid), pidDomain, cwd, identity, options)
      )
      return { pid: child.pid, cwd, ...identity }
    },
    stopSession: async (pid) => {
      const child = children.get(pid)
      if (child !== undefined) await killAndReap(child)
    },
    layer: layerNode({ claudeHome: home, managedSettingsDirectory: managed }),
    close: async () => {
      await Promise.all([...children.values()].map(killAndReap))
      fs.rmSync(base, { recursive: true, force: true })
    }
  }
}

const spawnSyncOrThrow = (command: string, args: ReadonlyArray<string>) => {
  if (spawnSync(command, [...args]).status !== 0) throw new Error(`${command} failed`)
}

/** Until the child has exec'd node with the script: before that, `/proc/<pid>/cmdline` is the forking parent's. */
const untilArgumentsShow = async (pid: number, script: string): Promise<void> => {
  for (let i = 0; i < 500; i++) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(script)) return
    } catch {
      // not there yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`pid ${pid} never showed ${script} in its arguments`)
}
