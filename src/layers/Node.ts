/**
 * The services on the real machine: the file port on `node:fs`, the process probe on `kill(pid, 0)`
 * and `/proc` (or `ps` on macOS), and the Claude home from the option, then `CLAUDE_CONFIG_DIR`, then
 * `~/.claude`.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ClaudeHome from "../services/ClaudeHome.js"
import { Files } from "../services/Files.js"
import { ProcessProbe } from "../services/ProcessProbe.js"
import * as FilesNode from "./FilesNode.js"
import * as ProcessProbeNode from "./ProcessProbeNode.js"
import { type CommonOptions, layerServices, type Ports, providePolicy, provideRegistry, provideSettings, type Services } from "./Services.js"

export interface NodeOptions extends CommonOptions {
  /** The Claude home; when absent, `CLAUDE_CONFIG_DIR`, then `~/.claude`. */
  readonly claudeHome?: string | undefined
  /** The managed settings directory; when absent, the platform's (`/etc/claude-code` on Linux). */
  readonly managedSettingsDirectory?: string | undefined
}

/** The Node ports, as the context `layerPorts` provides. */
export const portsNode = (options: NodeOptions = {}): Effect.Effect<Context.Context<Ports>> =>
  Effect.map(ClaudeHome.fromEnvironment(options.claudeHome, options), (home) =>
    Context.make(Files, FilesNode.make()).pipe(
      Context.add(ProcessProbe, ProcessProbeNode.makeNode()),
      Context.add(ClaudeHome.ClaudeHome, home)
    ))

/** The ports alone, for a program that provides its own services over them. */
export const layerPorts = (options: NodeOptions = {}): Layer.Layer<Ports> => Layer.effectContext(portsNode(options))

/** Registry, Settings, Watch and Policy on the real machine, with the ports they run on. */
export const layerNode = (options: NodeOptions = {}): Layer.Layer<Services> => layerServices(layerPorts(options), options)

/** The registry alone on the real machine, provided to one effect (see `provideRegistry`). */
export const provideNodeRegistry = (options: NodeOptions = {}) => provideRegistry(portsNode(options), options)

/** The settings alone on the real machine, provided to one effect (see `provideSettings`). */
export const provideNodeSettings = (options: NodeOptions = {}) => provideSettings(portsNode(options), options)

/** The policy and the registry on the real machine, provided to one effect (see `providePolicy`). */
export const provideNodePolicy = (options: NodeOptions = {}) => providePolicy(portsNode(options), options)
