/**
 * The services on the real machine: the file port on `node:fs`, the process probe on `kill(pid, 0)`
 * and `/proc` (or `ps` on macOS), and the Claude home from the option, then `CLAUDE_CONFIG_DIR`, then
 * `~/.claude`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DeliveryFailed } from "../domain/Errors.js"
import * as ClaudeHome from "../services/ClaudeHome.js"
import { Relay } from "../services/Relay.js"
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

/**
 * The relay on this machine. Until the Node relay (a `claude -p` run) is composed here, every send
 * fails as a relay that cannot be found, before anything runs: never a pretended delivery.
 */
export const layerRelay: Layer.Layer<Relay> = Layer.succeed(
  Relay,
  Relay.of({
    senderClass: "prompting",
    send: () =>
      Effect.fail(new DeliveryFailed({ cause: "relay_not_found", detail: "this build composes no relay for the real machine", session: null, relay: null }))
  })
)

/** Registry, Settings, Watch, Policy and Delivery on the real machine, with the ports and the relay they run on. */
export const layerNode = (options: NodeOptions = {}): Layer.Layer<Services> => layerServices(Layer.merge(layerPorts(options), layerRelay), options)
