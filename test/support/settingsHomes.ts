/**
 * Worlds seen from the settings' side: a Claude home without a registry directory, so that the
 * home's listing shows only the settings file and what an update leaves beside it.
 *
 * The conformance suite runs on `makeMemoryHome` and `makeNodeHome`, both through the shipped
 * composite layers. `makeObservedMemoryHome` is for the memory-only suites that must see every call
 * the service makes through the file port: the same composition (`layerServices`) over the shipped
 * memory port, wrapped to log.
 */
import { Effect, Layer } from "effect"
import * as FilesMemory from "../../src/layers/FilesMemory.js"
import type { MemoryTree } from "../../src/layers/MemoryTree.js"
import * as ProcessProbeMemory from "../../src/layers/ProcessProbeMemory.js"
import * as RelayMemory from "../../src/layers/RelayMemory.js"
import { layerServices, type Services } from "../../src/layers/Services.js"
import * as ClaudeHome from "../../src/services/ClaudeHome.js"
import { Files } from "../../src/services/Files.js"
import { makeMemoryWorld, makeNodeWorld, type MemoryTestWorld, type World, type WorldOptions } from "./worlds.js"

export type SettingsHome = World
export type HomeOptions = Omit<WorldOptions, "sessionsDirectory">

export const makeMemoryHome = (options: HomeOptions = {}): MemoryTestWorld => makeMemoryWorld({ ...options, sessionsDirectory: false })

export const makeNodeHome = (options: HomeOptions = {}): World => makeNodeWorld({ ...options, sessionsDirectory: false })

export type MemoryHome = MemoryTestWorld & {
  readonly files: MemoryTree
  readonly processes: ProcessProbeMemory.MemoryProcesses
  /** Every call of the services through the file port, in order, as `method path…`. */
  readonly calls: ReadonlyArray<string>
  readonly layer: Layer.Layer<Services>
}

/** The services of a memory home over a file port of the caller's (the shipped one, wrapped). */
export const layerOverFiles = (home: MemoryTestWorld, files: Files): Layer.Layer<Services> =>
  layerServices(
    Layer.mergeAll(
      Layer.succeed(Files, files),
      ProcessProbeMemory.layer(home.world.processes),
      Layer.succeed(ClaudeHome.ClaudeHome, home.world.home),
      RelayMemory.layer(home.world.relay)
    )
  )

export const makeObservedMemoryHome = (options: HomeOptions = {}): MemoryHome => {
  const home = makeMemoryHome(options)
  const { processes, tree } = home.world
  const port = FilesMemory.make(tree)
  const calls: Array<string> = []
  const logged = <A, E>(call: string, effect: Effect.Effect<A, E>) => Effect.zipRight(Effect.sync(() => calls.push(call)), effect)
  const observed: Files = {
    ...port,
    lstat: (path) => logged(`lstat ${path}`, port.lstat(path)),
    stat: (path) => logged(`stat ${path}`, port.stat(path)),
    // The same system call whichever way the service asks it, so the order below reads as syscalls.
    lstatIfExists: (path) => logged(`lstat ${path}`, port.lstatIfExists(path)),
    statIfExists: (path) => logged(`stat ${path}`, port.statIfExists(path)),
    readBounded: (path, o) => logged(`readBounded ${path}`, port.readBounded(path, o)),
    writeNewFile: (path, bytes, mode, owner, attributes) => logged(`writeNewFile ${path}`, port.writeNewFile(path, bytes, mode, owner, attributes)),
    syncDirectory: (path) => logged(`syncDirectory ${path}`, port.syncDirectory(path)),
    removeFile: (path) => logged(`removeFile ${path}`, port.removeFile(path)),
    replaceIfUnchanged: (source, target, expected, maxBytes) =>
      Effect.tap(port.replaceIfUnchanged(source, target, expected, maxBytes), (outcome) => {
        calls.push(`replaceIfUnchanged ${source} ${target} ${outcome._tag}`)
      })
  }
  return {
    ...home,
    files: tree,
    processes,
    calls,
    layer: layerOverFiles(home, observed)
  }
}
