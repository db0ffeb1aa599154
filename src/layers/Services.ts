/**
 * The one composition of the services over their ports: `layerNode` puts it over the Node ports,
 * `layerMemory` over a memory world's, so the two cannot be wired differently.
 */
import * as Layer from "effect/Layer"
import type { ClaudeHome } from "../services/ClaudeHome.js"
import * as Delivery from "../services/Delivery.js"
import type { Files } from "../services/Files.js"
import * as Policy from "../services/Policy.js"
import type { ProcessProbe } from "../services/ProcessProbe.js"
import * as Registry from "../services/Registry.js"
import type { Relay } from "../services/Relay.js"
import * as Settings from "../services/Settings.js"
import * as Timing from "../services/Timing.js"
import * as Watch from "../services/Watch.js"

/** What the services run on. */
export type Ports = Files | ProcessProbe | ClaudeHome

/** Every service of the library, the relay `Delivery` sends through, and the ports they run on. */
export type Services = Registry.Registry | Settings.Settings | Watch.Watch | Policy.Policy | Delivery.Delivery | Relay | Ports

/** The options every composite layer takes. */
export interface CommonOptions {
  /** The waits the library makes (torn-read retry, lock wait and poll, watch interval and windows). */
  readonly timing?: Timing.TimingOptions | undefined
}

/** The services over `ports` and the relay (home-independent: each request names the Claude home it runs under). */
export const layerServices = (ports: Layer.Layer<Ports | Relay>, options: CommonOptions = {}): Layer.Layer<Services> =>
  Delivery.layer.pipe(
    Layer.provideMerge(Layer.merge(Watch.layer, Policy.layer)),
    Layer.provideMerge(Layer.merge(Registry.layer, Settings.layer)),
    // Merged, so that what runs on these services (a mounted command re-pointing its home) can read the same waits.
    Layer.provideMerge(Timing.layer(options.timing)),
    Layer.provideMerge(ports)
  )
