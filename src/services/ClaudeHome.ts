/**
 * Where the registry and the user settings live, and where this machine keeps the managed settings
 * an administrator installs. The home is, first match wins: an explicit directory (the
 * `--claude-home` option, the layers' `claudeHome`), `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`.
 * The managed directory is the platform's (`/etc/claude-code` on Linux) unless configured: tests and
 * unusual installs name another (`--managed-dir`).
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as path from "node:path"
import { managedDirectoryOf } from "../domain/ManagedSettings.js"

export interface ClaudeHome {
  readonly root: string
  /** `<claude home>/sessions` */
  readonly sessionsDirectory: string
  /** `<claude home>/settings.json` */
  readonly settingsFile: string
  /**
   * The managed settings directory: `managed-settings.json` and the drop-ins of
   * `managed-settings.d/`, read by every Claude Code session on this machine.
   */
  readonly managedSettingsDirectory: string
}

export const ClaudeHome = Context.GenericTag<ClaudeHome>("claude-peers/ClaudeHome")

/** What a home's configuration can change besides its root. */
export interface HomeOptions {
  /** The managed settings directory; the platform's when absent. */
  readonly managedSettingsDirectory?: string | undefined
}

export const make = (root: string, options: HomeOptions = {}): ClaudeHome => {
  const resolved = path.resolve(root)
  return {
    root: resolved,
    sessionsDirectory: path.join(resolved, "sessions"),
    settingsFile: path.join(resolved, "settings.json"),
    managedSettingsDirectory: options.managedSettingsDirectory === undefined
      ? managedDirectoryOf(process.platform)
      : path.resolve(options.managedSettingsDirectory)
  }
}

/** A fixed Claude home: what tests use, so that they never touch the real `~/.claude`. */
export const layer = (root: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> => Layer.sync(ClaudeHome, () => make(root, options))

/** The user's home directory. */
export const userHome = (): string => os.homedir()

/**
 * The rule that finds the Claude home, first match wins: the explicit directory, the value of
 * `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`. An empty `CLAUDE_CONFIG_DIR` is unset, not the
 * current directory. The user's home is asked for only when the rule needs it: finding it can fail
 * (no `HOME`, and a uid the system knows no home for).
 */
export const rootOf = (claudeHome: string | undefined, configDir: string | undefined, home: () => string): string =>
  claudeHome ?? (configDir !== undefined && configDir.length > 0 ? configDir : path.join(home(), ".claude"))

/** The Claude home by `rootOf`, reading `CLAUDE_CONFIG_DIR` through Effect's `Config`. */
export const fromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Effect.Effect<ClaudeHome> =>
  Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
    Effect.map((configDir) => make(rootOf(claudeHome, Option.getOrUndefined(configDir), userHome), options)),
    Effect.orDie
  )

export const layerFromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> =>
  Layer.effect(ClaudeHome, fromEnvironment(claudeHome, options))
