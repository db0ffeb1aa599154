/**
 * The services each of the command's handlers runs on, on the real machine, provided to its effect:
 * `layerNode`, the one composition of the layers.
 */
import * as Effect from "effect/Effect"
import { layerNode, type NodeOptions } from "../layers/Node.js"
import type { Services } from "../layers/Services.js"

const provideNode = (options: NodeOptions = {}) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Services>> =>
  Effect.provide(effect, layerNode(options))

/** What `list`, `inspect` and `resolve` run on. */
export const provideNodeRegistry = provideNode

/** What `settings get`, `set` and `reset` run on. */
export const provideNodeSettings = provideNode

/** What `policy` runs on. */
export const provideNodePolicy = provideNode
