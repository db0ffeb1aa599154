/**
 * Everything in memory, for the tests of programs built on claude-peers: a file tree and a process
 * table that the test controls (and can inject faults into), behind the same services as the real
 * machine. The same conformance suites run against these and the Node layers.
 */
import { Layer } from "effect"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as Registry from "../services/Registry.js"
import * as Settings from "../services/Settings.js"
import { layerMemory as filesLayerMemory, makeMemoryFiles, type MemoryFiles } from "./FilesMemory.js"
import { layerMemory as processProbeLayerMemory, makeMemoryProcesses, type MemoryProcesses } from "./ProcessProbeMemory.js"

export interface MemoryWorld {
  readonly files: MemoryFiles
  readonly processes: MemoryProcesses
  /** The Claude home inside the memory tree. */
  readonly home: ClaudeHome.ClaudeHome
}

/** A fresh memory world; its Claude home is `/home/user/.claude` unless another is given. */
export const makeMemoryWorld = (root = "/home/user/.claude"): MemoryWorld => ({
  files: makeMemoryFiles(),
  processes: makeMemoryProcesses(),
  home: ClaudeHome.makeClaudeHome(root)
})

/** The registry, the settings and their ports over a memory world. */
export const layerMemory = (world: MemoryWorld) =>
  Layer.merge(Registry.layer, Settings.layer).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        filesLayerMemory(world.files),
        processProbeLayerMemory(world.processes),
        Layer.succeed(ClaudeHome.ClaudeHome, world.home)
      )
    )
  )
