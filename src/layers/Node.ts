/**
 * The services on the real machine: the file port on `node:fs`, the process probe on `kill(pid, 0)`
 * and `/proc` (or `ps` on macOS), and the Claude home from the option, then `CLAUDE_CONFIG_DIR`, then
 * `~/.claude`.
 */
import * as Layer from "effect/Layer"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as FilesNode from "./FilesNode.js"
import * as ProcessProbeNode from "./ProcessProbeNode.js"
import { type CommonOptions, layerServices, type Ports, type Services } from "./Services.js"

export interface NodeOptions extends CommonOptions {
  /** The Claude home; when absent, `CLAUDE_CONFIG_DIR`, then `~/.claude`. */
  readonly claudeHome?: string | undefined
  /** The managed settings directory; when absent, the platform's (`/etc/claude-code` on Linux). */
  readonly managedSettingsDirectory?: string | undefined
}

/** The ports alone, for a program that provides its own services over them. */
export const layerPorts = (options: NodeOptions = {}): Layer.Layer<Ports> =>
  Layer.mergeAll(FilesNode.layer, ProcessProbeNode.layer, ClaudeHome.layerFromEnvironment(options.claudeHome, options))

/** Registry, Settings, Watch and Policy on the real machine, with the ports they run on. */
export const layerNode = (options: NodeOptions = {}): Layer.Layer<Services> => layerServices(layerPorts(options), options)
