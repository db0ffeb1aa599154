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
  /**
   * Whether the senders this program speaks for run in this home (it is the caller's default home,
   * or the program said so): only then is a session's name its address, since Claude Code resolves
   * a name only among the sessions of the sender's own home. Otherwise every address is the socket.
   */
  readonly sendersHome: boolean
}

export const ClaudeHome = Context.GenericTag<ClaudeHome>("claude-peers/ClaudeHome")

/** What a home's configuration can change besides its root. */
export interface HomeOptions {
  /** The managed settings directory; the platform's when absent. */
  readonly managedSettingsDirectory?: string | undefined
  /** Whether a name is an address for this program's senders (`ClaudeHome.sendersHome`); default true. */
  readonly sendersHome?: boolean | undefined
}

export const make = (root: string, options: HomeOptions = {}): ClaudeHome => {
  const resolved = path.resolve(root)
  return {
    root: resolved,
    sessionsDirectory: path.join(resolved, "sessions"),
    settingsFile: path.join(resolved, "settings.json"),
    managedSettingsDirectory: options.managedSettingsDirectory === undefined
      ? managedDirectoryOf(process.platform)
      : path.resolve(options.managedSettingsDirectory),
    sendersHome: options.sendersHome !== false
  }
}

/** A fixed Claude home: what tests use, so that they never touch the real `~/.claude`. */
export const layer = (root: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> => Layer.sync(ClaudeHome, () => make(root, options))

/** The user's home directory. */
export const userHome = (): string => os.homedir()

/**
 * The rule that finds the Claude home, first match wins: the explicit directory, the value of
 * `CLAUDE_CONFIG_DIR`, then `<user home>/.claude`. A `CLAUDE_CONFIG_DIR` that is set but empty is the
 * working directory, as Claude Code takes it (its home is then wherever it was started), so that
 * claude-peers reads the registry the sessions started beside it write. The user's home and the
 * working directory are asked for only when the rule needs them: finding the first can fail (no
 * `HOME`, and a uid the system knows no home for).
 */
export const rootOf = (
  claudeHome: string | undefined,
  configDir: string | undefined,
  home: () => string,
  workingDirectory: () => string = process.cwd
): string => claudeHome ?? (configDir === undefined ? path.join(home(), ".claude") : configDir.length > 0 ? configDir : workingDirectory())

/** The Claude home by `rootOf`, reading `CLAUDE_CONFIG_DIR` through Effect's `Config`. */
export const fromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Effect.Effect<ClaudeHome> =>
  Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
    Effect.map((configDir) => make(rootOf(claudeHome, Option.getOrUndefined(configDir), userHome), options)),
    Effect.orDie
  )

export const layerFromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> =>
  Layer.effect(ClaudeHome, fromEnvironment(claudeHome, options))
