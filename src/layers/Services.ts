/**
 * The one composition of the services over their ports: `layerNode` puts it over the Node ports,
 * `layerMemory` over a memory world's, so the two cannot be wired differently.
 */
import * as Layer from "effect/Layer"
import type { ClaudeHome } from "../services/ClaudeHome.js"
import type { ClaudeHomes } from "../services/ClaudeHomes.js"
import * as Delivery from "../services/Delivery.js"
import type { Files } from "../services/Files.js"
import * as Policy from "../services/Policy.js"
import type { ProcessProbe } from "../services/ProcessProbe.js"
import * as Registry from "../services/Registry.js"
import type { Relay } from "../services/Relay.js"
import * as Settings from "../services/Settings.js"
import * as Timing from "../services/Timing.js"
import * as Wait from "../services/Wait.js"
import * as Watch from "../services/Watch.js"
import * as WatchHomes from "../services/WatchHomes.js"

/** What the services run on. */
export type Ports = Files | ProcessProbe | ClaudeHome

/** Every service of the library, the relay `Delivery` sends through, and the ports they run on. */
export type Services = Registry.Registry | Settings.Settings | Watch.Watch | Wait.Wait | Policy.Policy | Delivery.Delivery | Relay | Ports

/** The options every composite layer takes. */
export interface CommonOptions {
  /** The waits the library makes (torn-read retry, lock wait and poll, watch interval and windows). */
  readonly timing?: Timing.TimingOptions | undefined
}

/** Which homes the services read when a program asks for several (`--claude-home` twice, `--all-homes`). */
export interface HomesOptions {
  /** More Claude homes: with `claudeHome` (or the default home) first, each read once by real path. */
  readonly claudeHomes?: ReadonlyArray<string> | undefined
  /** Also the default home, `$CLAUDE_CONFIG_DIR` and the home of every live Claude Code process this user may read. */
  readonly allHomes?: boolean | undefined
}

/**
 * The services over the ports; with `homes` (several homes asked for), the registry, the policy's
 * registry and the watch read every home it names. The settings stay the one `ClaudeHome`'s.
 */
export const layerServices = (
  ports: Layer.Layer<Ports | Relay>,
  options: CommonOptions = {},
  homes?: Layer.Layer<ClaudeHomes, never, Files | ProcessProbe>
): Layer.Layer<Services> => {
  // Merged, so that what runs on these services (a mounted command re-pointing its home) can read the same waits.
  const base = Layer.provideMerge(Timing.layer(options.timing), ports)
  if (homes === undefined) {
    return Layer.merge(Wait.layer, Delivery.layer).pipe(
      Layer.provideMerge(Layer.merge(Watch.layer, Policy.layer)),
      Layer.provideMerge(Layer.merge(Registry.layer, Settings.layer)),
      Layer.provideMerge(base)
    )
  }
  return Layer.merge(Wait.layer, Delivery.layer).pipe(
    Layer.provideMerge(Layer.merge(WatchHomes.layer, Policy.layer)),
    Layer.provideMerge(Layer.merge(Registry.layerHomes, Settings.layer)),
    Layer.provideMerge(Layer.provideMerge(homes, base))
  )
}
