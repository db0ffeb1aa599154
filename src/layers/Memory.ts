/**
 * Everything in memory, for the tests of programs built on claude-peers: a file tree and a process
 * table that the test controls (and can inject faults into), behind the same services, composed the
 * same way as on the real machine. The same conformance suites run against this and `layerNode`.
 */
import * as Layer from "effect/Layer"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as ClaudeHomes from "../services/ClaudeHomes.js"
import * as FilesMemory from "./FilesMemory.js"
import { makeMemoryTree, type MemoryTree, type MemoryUser } from "./MemoryTree.js"
import * as ProcessProbeMemory from "./ProcessProbeMemory.js"
import * as RelayMemory from "./RelayMemory.js"
import { type CommonOptions, type HomesOptions, layerServices, type Services } from "./Services.js"

export interface MemoryWorld {
  /** The file tree: write records and settings here, inject torn reads and racing writers. */
  readonly tree: MemoryTree
  /** The process table: spawn, kill, reuse pids; `self` is the process the program runs as. */
  readonly processes: ProcessProbeMemory.MemoryProcesses
  /** The Claude home inside the tree. */
  readonly home: ClaudeHome.ClaudeHome
  /** The relay: script its answers (delivered, held, refused, failed, none, late), read what was sent to whom. */
  readonly relay: RelayMemory.MemoryRelay
}

export interface MemoryWorldOptions extends ProcessProbeMemory.MemoryProcessesOptions {
  /** Where the Claude home is in the tree (default `/home/user/.claude`; it is not created). */
  readonly claudeHome?: string | undefined
  /** Where the managed settings are in the tree (default: the platform's, `/etc/claude-code` on Linux; not created). */
  readonly managedSettingsDirectory?: string | undefined
  /** The user the program runs as in the tree (default uid 1000, gid 1000; uid 0 is root). */
  readonly user?: MemoryUser | undefined
  /** The relay's permission-mode class (default `prompting`). */
  readonly relay?: RelayMemory.MemoryRelayOptions | undefined
  /** Whether a name is an address for the program's senders (`ClaudeHome.sendersHome`); default true, as `layerNode`'s. */
  readonly sendersHome?: boolean | undefined
}

export const makeMemoryWorld = (options: MemoryWorldOptions = {}): MemoryWorld => ({
  tree: makeMemoryTree({ user: options.user }),
  processes: ProcessProbeMemory.makeMemoryProcesses(options),
  home: ClaudeHome.make(options.claudeHome ?? "/home/user/.claude", options),
  relay: RelayMemory.makeMemoryRelay(options.relay)
})

export interface MemoryOptions extends CommonOptions, HomesOptions {
  /** Another Claude home in the same tree than the world's. */
  readonly claudeHome?: string | undefined
  /** Another managed settings directory in the same tree than the world's. */
  readonly managedSettingsDirectory?: string | undefined
  /** Whether a name is an address for the program's senders, as `layerNode`'s option (default: the world's home's). */
  readonly sendersHome?: boolean | undefined
}

/**
 * Registry, Settings, Watch and Policy over a memory world, with the ports they run on. With
 * `claudeHomes` or `allHomes`, over several homes of the tree, as `layerNode` reads several on the
 * machine; the world's own home is then the default home `allHomes` starts from, and a process's
 * home is what its staged environment says.
 */
export const layerMemory = (world: MemoryWorld, options: MemoryOptions = {}): Layer.Layer<Services> => {
  const homeOptions = {
    managedSettingsDirectory: options.managedSettingsDirectory ?? world.home.managedSettingsDirectory,
    sendersHome: options.sendersHome ?? world.home.sendersHome
  }
  const root = options.claudeHome ?? world.home.root
  const ports = Layer.mergeAll(
    FilesMemory.layer(world.tree),
    ProcessProbeMemory.layer(world.processes),
    RelayMemory.layer(world.relay),
    Layer.succeed(ClaudeHome.ClaudeHome, ClaudeHome.make(root, homeOptions))
  )
  const several = options.allHomes === true || (options.claudeHomes?.length ?? 0) > 0
  if (!several) return layerServices(ports, options)
  const homes = Layer.effect(
    ClaudeHomes.ClaudeHomes,
    ClaudeHomes.make({ roots: [root, ...(options.claudeHomes ?? [])], all: options.allHomes === true }, { ...homeOptions, standard: [world.home.root] })
  )
  return layerServices(ports, options, Layer.provide(homes, ports))
}
