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
export const layer = (root: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> =>
  Layer.sync(ClaudeHome, () => make(root, options))

/**
 * The user's home directory, as `os.homedir()` finds it. On POSIX libuv answers `HOME` whenever it
 * is set (even empty) and asks the password database only when it is not: `HOME` is read here
 * first, so that the command does not load `node:os` only for this.
 */
export const userHome = (): string =>
  process.platform !== "win32" && process.env.HOME !== undefined ? process.env.HOME : os.homedir()

/** `<user home>/.claude`, the home when nothing names another. */
const defaultRoot = (): string => path.join(userHome(), ".claude")

/** `claudeHome` when given, then `CLAUDE_CONFIG_DIR` (read through Effect's `ConfigProvider`), then `<user home>/.claude`. */
export const fromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Effect.Effect<ClaudeHome> =>
  claudeHome !== undefined
    ? Effect.sync(() => make(claudeHome, options))
    : Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
      // An empty CLAUDE_CONFIG_DIR is unset, not the current directory.
      Effect.map(Option.filter((dir) => dir.length > 0)),
      Effect.map(Option.getOrElse(defaultRoot)),
      Effect.map((root) => make(root, options)),
      Effect.orDie
    )

/**
 * The same rule read from this process's own environment, for the command: a program's
 * `ConfigProvider` has nothing to say to a process, and Effect's `Config` machinery is several
 * milliseconds of a `list --json` that runs a few hundred.
 */
export const rootFromProcess = (claudeHome: string | undefined): string => {
  if (claudeHome !== undefined) return claudeHome
  const configured = process.env.CLAUDE_CONFIG_DIR
  return configured !== undefined && configured.length > 0 ? configured : defaultRoot()
}

export const layerFromEnvironment = (claudeHome?: string, options: HomeOptions = {}): Layer.Layer<ClaudeHome> =>
  Layer.effect(ClaudeHome, fromEnvironment(claudeHome, options))
