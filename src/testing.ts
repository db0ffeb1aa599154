/**
 * `claude-peers/testing`: everything in memory, for the tests of programs built on claude-peers. A
 * file tree and a process table that the test controls (and can inject faults into), behind the same
 * services, composed the same way as `layerNode`; the library's own conformance suites run on both.
 */
export { layer as layerFiles } from "./layers/FilesMemory.js"
export { layerMemory, makeMemoryWorld, type MemoryOptions, type MemoryWorld, type MemoryWorldOptions } from "./layers/Memory.js"
export { makeMemoryTree, type MemoryTree, type MemoryTreeOptions, type MemoryUser, type SpecialType, type WatchRefusal } from "./layers/MemoryTree.js"
export type { MemoryTreeKernel } from "./layers/MemoryTreeKernel.js"
export { layer as layerProcessProbe, makeMemoryProcesses, type MemoryProcesses, type MemoryProcessesOptions } from "./layers/ProcessProbeMemory.js"
export { layer as layerRelay, makeMemoryRelay, type MemoryRelay, type MemoryRelayOptions, RelayAnswer, type SentMessage } from "./layers/RelayMemory.js"
