/**
 * A settings "home" is a Claude home plus a process table, on one backend: the in-memory layers,
 * or the real OS (a temporary directory, real child processes). The settings conformance suite is
 * written once against this interface and run on both, so the memory layers cannot drift from the
 * file system they stand for.
 */
import { Effect, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeMemoryFiles, type MemoryFiles } from "../../src/layers/FilesMemory.js"
import { layerNode as filesLayerNode } from "../../src/layers/FilesNode.js"
import {
  layerMemory as probeLayerMemory,
  makeMemoryProcesses,
  type MemoryProcesses
} from "../../src/layers/ProcessProbeMemory.js"
import { layerNode as probeLayerNode } from "../../src/layers/ProcessProbeNode.js"
import * as ClaudeHome from "../../src/services/ClaudeHome.js"
import { Files } from "../../src/services/Files.js"
import * as Settings from "../../src/services/Settings.js"
import { makeRealProcesses } from "./worlds.js"

export interface Process {
  readonly pid: number
  readonly startTime: string
}

export interface SettingsHome {
  readonly kind: "memory" | "node"
  /** The Claude home; it exists unless `missingHome` was asked for. */
  readonly home: string
  readonly settingsFile: string
  readonly lockFile: string
  /** Names are relative to the home. A new file gets `mode` (0o644 unless given). */
  readonly write: (name: string, content: string | Uint8Array, mode?: number) => void
  /** The bytes of a regular file (links followed), or undefined. */
  readonly read: (name: string) => Uint8Array | undefined
  readonly exists: (name: string) => boolean
  /** The home's entry names, sorted. */
  readonly list: () => ReadonlyArray<string>
  /** Permission bits, links not followed. */
  readonly modeOf: (name: string) => number
  readonly isSymlink: (name: string) => boolean
  readonly symlink: (target: string, name: string) => void
  readonly mkdir: (name: string) => void
  readonly mkfifo: (name: string) => void
  readonly remove: (name: string) => void
  readonly chmod: (name: string, mode: number) => void
  /**
   * A token that changes whenever the settings file is replaced (an inode number on the OS), so a
   * test can tell "nothing was written" from "the same bytes were written again".
   */
  readonly identityOf: (name: string) => string
  readonly spawn: () => Process
  readonly kill: (pid: number) => Promise<void>
  /** A pid that no process has now. */
  readonly deadPid: () => Promise<number>
  readonly layer: Layer.Layer<Settings.Settings>
  readonly close: () => Promise<void>
}

export interface HomeOptions {
  /** The home directory is not created: an update must create it. */
  readonly missingHome?: boolean
  /** The home path is a regular file, so the settings path's parent is not a directory. */
  readonly homeIsAFile?: boolean
}

export type MemoryHome = SettingsHome & {
  readonly files: MemoryFiles
  readonly processes: MemoryProcesses
  /** Every call of the settings service through the file port, in order, as `method path…`. */
  readonly calls: ReadonlyArray<string>
}

export const makeMemoryHome = (options: HomeOptions = {}): MemoryHome => {
  const files = makeMemoryFiles()
  const processes = makeMemoryProcesses()
  // This process must be a live process of the table: the lock it writes names it, and a fiber of
  // this same process that finds the lock must see its holder alive, as on the OS.
  processes.spawn({ pid: process.pid })
  const home = "/home/user/.claude"
  if (options.homeIsAFile === true) files.writeFile(home, "not a directory")
  else if (options.missingHome !== true) files.makeDirectory(home, 0o700)
  const at = (name: string) => (name === "" ? home : `${home}/${name}`)
  const lstat = (name: string) => Effect.runSync(files.files.lstat(at(name)))
  // The memory tree has no inode numbers: the port is watched instead, and every rename over a
  // path counts as a new file there.
  const replacements = new Map<string, number>()
  const calls: Array<string> = []
  const logged = <A, E>(call: string, effect: Effect.Effect<A, E>) =>
    Effect.zipRight(Effect.sync(() => calls.push(call)), effect)
  const watchedFiles: Files = {
    ...files.files,
    lstat: (path) => logged(`lstat ${path}`, files.files.lstat(path)),
    stat: (path) => logged(`stat ${path}`, files.files.stat(path)),
    readBounded: (path, options) => logged(`readBounded ${path}`, files.files.readBounded(path, options)),
    writeNewFile: (path, bytes, mode) => logged(`writeNewFile ${path}`, files.files.writeNewFile(path, bytes, mode)),
    syncDirectory: (path) => logged(`syncDirectory ${path}`, files.files.syncDirectory(path)),
    removeFile: (path) => logged(`removeFile ${path}`, files.files.removeFile(path)),
    replaceIfUnchanged: (source, target, expected, maxBytes) =>
      Effect.tap(files.files.replaceIfUnchanged(source, target, expected, maxBytes), (outcome) => {
        calls.push(`replaceIfUnchanged ${source} ${target} ${outcome._tag}`)
        if (outcome._tag === "Replaced") replacements.set(target, (replacements.get(target) ?? 0) + 1)
      })
  }
  return {
    kind: "memory",
    home,
    settingsFile: `${home}/settings.json`,
    lockFile: `${home}/.settings.json.claude-peers.lock`,
    files,
    processes,
    calls,
    write: (name, content, mode) => {
      if (!files.exists(at(name))) files.writeFile(at(name), content, mode ?? 0o644)
      else files.writeFile(at(name), content, mode)
    },
    read: (name) => files.readFile(at(name)),
    exists: (name) => files.exists(at(name)),
    list: () => files.list(home),
    modeOf: (name) => lstat(name).mode,
    isSymlink: (name) => files.exists(at(name)) && lstat(name).type === "SymbolicLink",
    symlink: (target, name) => files.symlink(target, at(name)),
    mkdir: (name) => files.makeDirectory(at(name)),
    mkfifo: (name) => files.makeSpecial(at(name), "FIFO"),
    remove: (name) => files.remove(at(name)),
    chmod: (name, mode) => files.chmod(at(name), mode),
    identityOf: (name) => (files.exists(at(name)) ? `replaced-${replacements.get(at(name)) ?? 0}` : "absent"),
    spawn: () => processes.spawn(),
    kill: async (pid) => processes.kill(pid),
    deadPid: async () => {
      const { pid } = processes.spawn()
      processes.kill(pid)
      return pid
    },
    layer: Settings.layer.pipe(
      Layer.provide(Layer.mergeAll(Layer.succeed(Files, watchedFiles), probeLayerMemory(processes), ClaudeHome.layer(home)))
    ),
    close: async () => {}
  }
}

export const makeNodeHome = (options: HomeOptions = {}): SettingsHome => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-settings-"))
  const home = path.join(base, "claude")
  if (options.homeIsAFile === true) fs.writeFileSync(home, "not a directory")
  else if (options.missingHome !== true) fs.mkdirSync(home, { mode: 0o700 })
  const at = (name: string) => (name === "" ? home : path.join(home, name))
  const processes = makeRealProcesses()
  return {
    kind: "node",
    home,
    settingsFile: at("settings.json"),
    lockFile: at(".settings.json.claude-peers.lock"),
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
    list: () => (fs.existsSync(home) ? fs.readdirSync(home).sort() : []),
    modeOf: (name) => fs.lstatSync(at(name)).mode & 0o7777,
    isSymlink: (name) => fs.lstatSync(at(name), { throwIfNoEntry: false })?.isSymbolicLink() === true,
    symlink: (target, name) => fs.symlinkSync(target, at(name)),
    mkdir: (name) => fs.mkdirSync(at(name), { recursive: true }),
    mkfifo: (name) => execFileSync("mkfifo", [at(name)]),
    remove: (name) => fs.rmSync(at(name), { recursive: true, force: true }),
    chmod: (name, mode) => fs.chmodSync(at(name), mode),
    identityOf: (name) => {
      const stats = fs.lstatSync(at(name), { throwIfNoEntry: false })
      return stats === undefined ? "absent" : `${stats.dev}:${stats.ino}`
    },
    spawn: processes.spawn,
    kill: processes.kill,
    deadPid: processes.deadPid,
    layer: Settings.layer.pipe(
      Layer.provide(Layer.mergeAll(filesLayerNode, probeLayerNode, ClaudeHome.layer(home)))
    ),
    close: async () => {
      await processes.close()
      fs.rmSync(base, { recursive: true, force: true })
    }
  }
}
