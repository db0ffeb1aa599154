/**
 * `claude-peers [--claude-home DIR] list [--json]` without the command-line parser: what `bin.ts`
 * runs for those exact spellings. The handler is `list`'s own (`ListSessions.ts`), over the
 * registry and the same Node layers the root command provides (`layers/Node.ts`), minus the
 * settings service `list` does not use: its module, its JSONC parser and its hash would otherwise
 * be initialized on every run.
 */
import { Effect, Layer, Option } from "effect"
import { layerNode as filesLayerNode } from "../layers/FilesNode.js"
import { layerNode as processProbeLayerNode } from "../layers/ProcessProbeNode.js"
import * as ClaudeHome from "../services/ClaudeHome.js"
import * as Registry from "../services/Registry.js"
import { listSessions } from "./ListSessions.js"
import { runMain } from "./RunMain.js"

export const main = (options: { readonly claudeHome: string | undefined; readonly json: boolean }): void =>
  runMain(
    listSessions({ json: options.json }).pipe(
      Effect.provide(
        Registry.layer.pipe(
          Layer.provide(
            Layer.mergeAll(filesLayerNode, processProbeLayerNode, ClaudeHome.layerFromEnvironment(Option.fromNullable(options.claudeHome)))
          )
        )
      )
    )
  )
