/** In-memory layers for testing programs built on claude-peers: no real files, no real processes. */
export * as FilesMemory from "./layers/FilesMemory.js"
export { layerMemory, makeMemoryWorld, type MemoryWorld } from "./layers/Memory.js"
export * as ProcessProbeMemory from "./layers/ProcessProbeMemory.js"
