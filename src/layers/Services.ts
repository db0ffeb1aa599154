/**
 * The one composition of the services over their ports: `layerNode` puts it over the Node ports,
 * `layerMemory` over a memory world's, so the two cannot be wired differently.
 *
 * The registry, the settings and the policy can also be provided alone, to one effect, without
 * building layers (`provideRegistry`, `provideSettings`, `providePolicy`): each is its own `make`
 * run over the same ports, as its layer runs it. That is for a program that runs once and uses one
 * service, such as each of the command's recognized commands: building layers (a memo map, scopes,
 * a fiber per merged layer) was about a third of what `list --json` spent in JavaScript, and these
 * services acquire nothing a layer's scope would have to release.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ClaudeHome } from "../services/ClaudeHome.js"
import type { Files } from "../services/Files.js"
import * as Policy from "../services/Policy.js"
import type { ProcessProbe } from "../services/ProcessProbe.js"
import * as Registry from "../services/Registry.js"
import * as Settings from "../services/Settings.js"
import * as Timing from "../services/Timing.js"
import * as Watch from "../services/Watch.js"

/** What the services run on. */
export type Ports = Files | ProcessProbe | ClaudeHome

/** Every service of the library, and the ports they run on. */
export type Services = Registry.Registry | Settings.Settings | Watch.Watch | Policy.Policy | Ports

/** The options every composite layer takes. */
export interface CommonOptions {
  /** The waits the library makes (torn-read retry, lock wait and poll, watch interval and windows). */
  readonly timing?: Timing.TimingOptions | undefined
}

export const layerServices = (ports: Layer.Layer<Ports>, options: CommonOptions = {}): Layer.Layer<Services> =>
  Layer.merge(Watch.layer, Policy.layer).pipe(
    Layer.provideMerge(Layer.merge(Registry.layer, Settings.layer)),
    Layer.provide(Timing.layer(options.timing)),
    Layer.provideMerge(ports)
  )

/** Runs one service's `make` over the ports (and what `make` also needs, provided by `inner`), for `effect` alone. */
const provideOne = <S, I, N = never>(
  tag: Context.Tag<I, S>,
  make: Effect.Effect<S, never, Ports | N>,
  inner: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, N> | Ports> = (effect) =>
    effect as Effect.Effect<never, never, never>
) =>
(ports: Effect.Effect<Context.Context<Ports>>, options: CommonOptions) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, I | N | Ports>> =>
  Effect.flatMap(ports, (context) => {
    const provided = inner(Effect.provideServiceEffect(effect, tag, make))
    const timed = options.timing === undefined ? provided : Effect.provideService(provided, Timing.Timing, Timing.make(options.timing))
    return Effect.provide(timed, context) as Effect.Effect<A, E, Exclude<R, I | N | Ports>>
  })

/** The registry over the ports, provided to `effect` without building layers. */
export const provideRegistry = (ports: Effect.Effect<Context.Context<Ports>>, options: CommonOptions = {}) =>
  provideOne(Registry.Registry, Registry.make)(ports, options)

/** The settings over the ports, provided to `effect` without building layers. */
export const provideSettings = (ports: Effect.Effect<Context.Context<Ports>>, options: CommonOptions = {}) =>
  provideOne(Settings.Settings, Settings.make)(ports, options)

/** The policy, and the registry it reads, over the ports, provided to `effect` without building layers. */
export const providePolicy = (ports: Effect.Effect<Context.Context<Ports>>, options: CommonOptions = {}) =>
  provideOne(
    Policy.Policy,
    Policy.make,
    <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideServiceEffect(effect, Registry.Registry, Registry.make)
  )(ports, options)
