/**
 * The services on the real machine: the file port on `node:fs`, the process probe on `kill(pid, 0)`
 * and `/proc` (or `ps` on macOS), and the Claude home from the option, then `CLAUDE_CONFIG_DIR`, then
 * `~/.claude`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as ClaudeHomes from "../services/ClaudeHomes.js"
import type { Files } from "../services/Files.js"
import type { ProcessProbe } from "../services/ProcessProbe.js"
import * as FilesNode from "./FilesNode.js"
import * as ProcessProbeNode from "./ProcessProbeNode.js"
import * as RelayNode from "./RelayNode.js"
import { type CommonOptions, type HomesOptions, layerServices, type Ports, type Services } from "./Services.js"

export interface NodeOptions extends CommonOptions, HomesOptions {
  /** The Claude home; when absent, `CLAUDE_CONFIG_DIR`, then `~/.claude`. */
  readonly claudeHome?: string | undefined
  /** The managed settings directory; when absent, the platform's (`/etc/claude-code` on Linux). */
  readonly managedSettingsDirectory?: string | undefined
  /** Whether a name is an address for this program's senders (`ClaudeHome.sendersHome`); default true. */
  readonly sendersHome?: boolean | undefined
  /** How the relay of `send` finds and runs Claude Code (`RelayNode`). */
  readonly relay?: RelayNode.RelayNodeOptions | undefined
}

/** The ports alone, for a program that provides its own services over them. */
export const layerPorts = (options: NodeOptions = {}): Layer.Layer<Ports> =>
  Layer.mergeAll(FilesNode.layer, ProcessProbeNode.layer, ClaudeHome.layerFromEnvironment(options.claudeHome, options))

/** Whether the options ask for several homes: `allHomes`, or more than one home named. */
export const severalHomes = (options: HomesOptions & { readonly claudeHome?: string | undefined }): boolean =>
  options.allHomes === true || (options.claudeHome === undefined ? 0 : 1) + (options.claudeHomes?.length ?? 0) > 1

/** The `ClaudeHomes` the options name, on this machine. */
export const layerHomes = (options: NodeOptions): Layer.Layer<ClaudeHomes.ClaudeHomes, never, ClaudeHome.ClaudeHome | Files | ProcessProbe> =>
  Layer.effect(
    ClaudeHomes.ClaudeHomes,
    Effect.gen(function*() {
      const home = yield* ClaudeHome.ClaudeHome
      const roots = [home.root, ...(options.claudeHomes ?? [])]
      return yield* ClaudeHomes.make({ roots, all: options.allHomes === true }, { ...options, standard: yield* ClaudeHomes.standardHomes })
    })
  )

/**
 * Registry, Settings, Watch, Wait, Policy and Delivery on the real machine, with the ports and the
 * relay (a `claude -p` run of the user's Claude Code) they run on; over several homes when the
 * options ask for them (the settings are then the first home's).
 */
export const layerNode = (options: NodeOptions = {}): Layer.Layer<Services> => {
  const ports = layerPorts(options)
  const withRelay = Layer.merge(ports, RelayNode.layer(options.relay))
  return severalHomes(options) ? layerServices(withRelay, options, Layer.provide(layerHomes(options), ports)) : layerServices(withRelay, options)
}
