/**
 * `claude-peers/node`: the services on the real machine. `layerNode(options)` is all an application
 * needs; the port layers are here for one that replaces some ports and keeps the others.
 */
export { layer as layerFiles } from "./layers/FilesNode.js"
export { layerNode, layerPorts, type NodeOptions } from "./layers/Node.js"
export { layer as layerProcessProbe } from "./layers/ProcessProbeNode.js"
export { findClaudeBinary, layer as layerRelay, make as makeRelay, type RelayNodeOptions } from "./layers/RelayNode.js"
