/**
 * The services on the real machine: the narrow file port on `node:fs`, the process probe on
 * `kill(pid, 0)` and `/proc` (or `ps` on macOS), and the Claude home from the option, then
 * `CLAUDE_CONFIG_DIR`, then `~/.claude`.
 */
import { Layer, Option } from "effect"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as Registry from "../services/Registry.js"
import * as Settings from "../services/Settings.js"
import { layerNode as filesLayerNode } from "./FilesNode.js"
import { layerNode as processProbeLayerNode } from "./ProcessProbeNode.js"

/** `Files` and `ProcessProbe` on the real OS. */
export const layerPlatform = Layer.merge(filesLayerNode, processProbeLayerNode)

/** Everything the command needs, for the given Claude home (or the default one). */
export const layerNode = (claudeHome: Option.Option<string> = Option.none()) =>
  Layer.merge(Registry.layer, Settings.layer).pipe(
    Layer.provideMerge(Layer.merge(layerPlatform, ClaudeHome.layerFromEnvironment(claudeHome)))
  )
