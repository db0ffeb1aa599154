/** The Node.js implementations of the ports, and the composed layers the command itself uses. */
export * as FilesNode from "./layers/FilesNode.js"
export { layerNode, layerPlatform } from "./layers/Node.js"
export * as ProcessProbeNode from "./layers/ProcessProbeNode.js"
