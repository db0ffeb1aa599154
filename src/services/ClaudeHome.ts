/**
 * Where the registry and the user settings live. First match wins: an explicit directory (the
 * `--claude-home` option), `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`.
 */
import { Config, Context, Effect, Layer, Option } from "effect"
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

export const makeClaudeHome = (root: string): ClaudeHome => {
  const resolved = path.resolve(root)
  return {
    root: resolved,
    sessionsDirectory: path.join(resolved, "sessions"),
    settingsFile: path.join(resolved, "settings.json")
  }
}

/** A fixed Claude home: what tests use, so that they never touch the real `~/.claude`. */
export const layer = (root: string): Layer.Layer<ClaudeHome> => Layer.succeed(ClaudeHome, makeClaudeHome(root))

/** The explicit directory when given, then `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`. */
export const resolveClaudeHome = (explicit: Option.Option<string>) =>
  Option.match(explicit, {
    onSome: (root) => Effect.succeed(makeClaudeHome(root)),
    onNone: () =>
      Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
        // An empty CLAUDE_CONFIG_DIR is unset, not the current directory.
        Effect.map(Option.filter((dir) => dir.length > 0)),
        Effect.map(Option.getOrElse(() => path.join(os.homedir(), ".claude"))),
        Effect.map(makeClaudeHome),
        Effect.orDie
      )
  })

export const layerFromEnvironment = (explicit: Option.Option<string> = Option.none()) =>
  Layer.effect(ClaudeHome, resolveClaudeHome(explicit))
