/**
 * The one composition of the services over their ports: `layerNode` puts it over the Node ports,
 * `layerMemory` over a memory world's, so the two cannot be wired differently. The registry and the
 * settings are also composed alone, the same way, for a program that uses only one of them (each of
 * the command's recognized commands), so that it neither loads nor builds the others.
 */
import * as Layer from "effect/Layer"
import type { ClaudeHome } from "../services/ClaudeHome.js"
import type { Files } from "../services/Files.js"
import type { ProcessProbe } from "../services/ProcessProbe.js"
import * as Registry from "../services/Registry.js"
import * as Settings from "../services/Settings.js"
import * as Timing from "../services/Timing.js"
import * as Watch from "../services/Watch.js"

/** What the services run on. */
export type Ports = Files | ProcessProbe | ClaudeHome

/** Every service of the library, and the ports they run on. */
export type Services = Registry.Registry | Settings.Settings | Watch.Watch | Ports

/** The options every composite layer takes. */
export interface CommonOptions {
  /** The waits the library makes (torn-read retry, lock wait and poll, watch interval and windows). */
  readonly timing?: Timing.TimingOptions | undefined
}

/** One service over the ports, with the timing options applied. */
const over = <S>(service: Layer.Layer<S, never, Ports>, ports: Layer.Layer<Ports>, options: CommonOptions) =>
  service.pipe(Layer.provide(Timing.layer(options.timing)), Layer.provideMerge(ports))

export const layerServices = (ports: Layer.Layer<Ports>, options: CommonOptions = {}): Layer.Layer<Services> =>
  over(Watch.layer.pipe(Layer.provideMerge(Layer.merge(Registry.layer, Settings.layer))), ports, options)

/** The registry alone over its ports. */
export const layerRegistry = (ports: Layer.Layer<Ports>, options: CommonOptions = {}): Layer.Layer<Registry.Registry | Ports> =>
  over(Registry.layer, ports, options)

/** The settings alone over their ports. */
export const layerSettings = (ports: Layer.Layer<Ports>, options: CommonOptions = {}): Layer.Layer<Settings.Settings | Ports> =>
  over(Settings.layer, ports, options)
