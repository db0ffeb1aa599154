/**
 * Where the registry and the user settings live. First match wins: an explicit directory (the
 * `--claude-home` option, the layers' `claudeHome`), `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as path from "node:path"

export interface ClaudeHome {
  readonly root: string
  /** `<claude home>/sessions` */
  readonly sessionsDirectory: string
  /** `<claude home>/settings.json` */
  readonly settingsFile: string
}

export const ClaudeHome = Context.GenericTag<ClaudeHome>("claude-peers/ClaudeHome")

export const make = (root: string): ClaudeHome => {
  const resolved = path.resolve(root)
  return {
    root: resolved,
    sessionsDirectory: path.join(resolved, "sessions"),
    settingsFile: path.join(resolved, "settings.json")
  }
}

/** A fixed Claude home: what tests use, so that they never touch the real `~/.claude`. */
export const layer = (root: string): Layer.Layer<ClaudeHome> => Layer.sync(ClaudeHome, () => make(root))

/** `claudeHome` when given, then `CLAUDE_CONFIG_DIR` (read through Effect's `ConfigProvider`), then `<user home>/.claude`. */
export const fromEnvironment = (claudeHome?: string): Effect.Effect<ClaudeHome> =>
  claudeHome !== undefined
    ? Effect.sync(() => make(claudeHome))
    : Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
      // An empty CLAUDE_CONFIG_DIR is unset, not the current directory.
      Effect.map(Option.filter((dir) => dir.length > 0)),
      Effect.map(Option.getOrElse(() => path.join(os.homedir(), ".claude"))),
      Effect.map(make),
      Effect.orDie
    )

export const layerFromEnvironment = (claudeHome?: string): Layer.Layer<ClaudeHome> =>
  Layer.effect(ClaudeHome, fromEnvironment(claudeHome))
