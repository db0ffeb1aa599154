/**
 * The services each recognized command runs on, each provided to one effect without building layers, as its own `make` run over the Node ports (as its layer runs it). A
 * recognized command runs once and uses one service, and these services acquire nothing a layer's
 * scope would have to release, while building layers (a memo map, scopes, a fiber per merged layer)
 * was about a third of what `list --json` spent in JavaScript.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FilesNode from "../../src/layers/FilesNode.js"
import type { NodeOptions } from "../../src/layers/Node.js"
import * as ProcessProbeNode from "../../src/layers/ProcessProbeNode.js"
import * as RelayNode from "../../src/layers/RelayNode.js"
import type { Ports } from "../../src/layers/Services.js"
import * as ClaudeHome from "../../src/services/ClaudeHome.js"
import * as ClaudeHomes from "../../src/services/ClaudeHomes.js"
import * as Delivery from "../../src/services/Delivery.js"
import { Files } from "../../src/services/Files.js"
import * as Policy from "../../src/services/Policy.js"
import { ProcessProbe } from "../../src/services/ProcessProbe.js"
import * as Registry from "../../src/services/Registry.js"
import { Relay } from "../../src/services/Relay.js"
import * as Settings from "../../src/services/Settings.js"
import * as Timing from "../../src/services/Timing.js"

/** The Node ports, for the Claude home the options name (or the one the process's environment names). */
const portsNode = (options: NodeOptions): Context.Context<Ports> =>
  Context.make(Files, FilesNode.make()).pipe(
    Context.add(ProcessProbe, ProcessProbeNode.makeNode()),
    Context.add(
      ClaudeHome.ClaudeHome,
      ClaudeHome.make(ClaudeHome.rootOf(options.claudeHome, process.env.CLAUDE_CONFIG_DIR, ClaudeHome.userHome), options)
    )
  )

/** The homes of an invocation that asked for several: `claudeHome` (or the default home) first. */
const homesNode = (options: NodeOptions) =>
  Effect.flatMap(ClaudeHomes.standardHomes, (standard) =>
    ClaudeHomes.make({
      roots: [ClaudeHome.rootOf(options.claudeHome, process.env.CLAUDE_CONFIG_DIR, ClaudeHome.userHome), ...(options.claudeHomes ?? [])],
      all: options.allHomes === true
    }, { ...options, standard }))

/** The registry of the options' one home, or of the several homes they ask for. */
const provideRegistry = (options: NodeOptions) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Registry.Registry> | Ports> =>
  (options.claudeHomes === undefined
    ? Effect.provideServiceEffect(effect, Registry.Registry, Registry.make)
    : Effect.provideServiceEffect(
      Effect.provideServiceEffect(effect, Registry.Registry, Registry.makeHomes),
      ClaudeHomes.ClaudeHomes,
      homesNode(options)
    )) as Effect.Effect<A, E, Exclude<R, Registry.Registry> | Ports>

/** `provided` with the options' timing and the Node ports. */
const overPorts = <A, E, R>(options: NodeOptions, provided: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Ports | Timing.Timing>> => {
  const timed = options.timing === undefined ? provided : Effect.provideService(provided, Timing.Timing, Timing.make(options.timing))
  return Effect.provide(timed, portsNode(options)) as Effect.Effect<A, E, Exclude<R, Ports | Timing.Timing>>
}

/**
 * Runs one service's `make` over the ports (and what `make` also needs, provided by `inner`, which
 * is given the options), for `effect` alone.
 */
const provideOne = <S, I, N = never>(
  tag: Context.Tag<I, S>,
  make: Effect.Effect<S, never, Ports | N>,
  inner: (options: NodeOptions) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, N> | Ports> = () => (effect) =>
    effect as Effect.Effect<never, never, never>
) =>
(options: NodeOptions = {}) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, I | N | Ports>> =>
  Effect.suspend(() => overPorts(options, inner(options)(Effect.provideServiceEffect(effect, tag, make)))) as Effect.Effect<
    A,
    E,
    Exclude<R, I | N | Ports>
  >

/** The registry of one home or several, over the ports. */
export const provideNodeRegistry =
  (options: NodeOptions = {}) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Registry.Registry | Ports>> =>
    Effect.suspend(() => overPorts(options, provideRegistry(options)(effect))) as Effect.Effect<A, E, Exclude<R, Registry.Registry | Ports>>

/** The settings over the ports. */
export const provideNodeSettings = provideOne(Settings.Settings, Settings.make)

/** Delivery, and the policy, registry (of one home or several) and relay it sends through, over the ports. */
export const provideNodeDelivery = provideOne(
  Delivery.Delivery,
  Delivery.make,
  (options) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    provideRegistry(options)(effect.pipe(
      Effect.provideServiceEffect(Policy.Policy, Policy.make),
      Effect.provideServiceEffect(Relay, Effect.sync(() => RelayNode.make()))
    )) as Effect.Effect<A, E, Exclude<R, Policy.Policy | Registry.Registry | Relay> | Ports>
)

/** The policy, and the registry (of one home or several) it reads, over the ports. */
export const provideNodePolicy = provideOne(Policy.Policy, Policy.make, provideRegistry)
