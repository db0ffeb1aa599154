/**
 * How a relay's Claude Code is started: its arguments and its environment. Pure, so that the
 * check that captures Claude Code's requests (`scripts/check-claude/relay-capture.mjs`) starts it
 * exactly as the Node relay does.
 *
 * The relay may run nothing but `ToolSearch` (to load the deferred `SendMessage`) and `SendMessage`:
 * every other source of behaviour a Claude Code run can pick up from the machine is switched off by
 * name, because the relay runs in the receiver's Claude home, whose hooks, plugins and MCP servers
 * are the user's and must not run on a send. Each flag exists in Claude Code 2.1.332 (`claude --help`).
 * `--bare` is not used: it also removes `ToolSearch`, and with it `SendMessage`.
 */
import * as path from "node:path"

/**
 * The prompt of the `-p` run. The message itself never appears in the arguments (other users can
 * read a process's command line): the endpoint hands it to `SendMessage`.
 */
export const relayPrompt = "Relay one message with SendMessage."

/** The only tools the relay has, and the only ones it may use without asking. */
export const relayTools = "ToolSearch,SendMessage"

/**
 * The relay's permission mode. It sends from the prompting class: the receiver, with
 * `crossSessionInbound` set nowhere, delivers automatically only from a sender of its own class.
 */
export const relayPermissionMode = "default"

export const relayArguments = (): ReadonlyArray<string> => [
  "-p",
  relayPrompt,
  "--tools",
  relayTools,
  "--allowedTools",
  relayTools,
  "--permission-mode",
  relayPermissionMode,
  // Nobody answers a permission prompt: anything that would ask is denied instead of waiting.
  "--permission-prompts",
  "none",
  "--strict-mcp-config",
  "--mcp-config",
  "{\"mcpServers\":{}}",
  // No user, project or local settings (their hooks, plugins, API key helpers, environment).
  "--setting-sources",
  "",
  "--settings",
  "{\"disableAllHooks\":true}",
  "--disable-slash-commands",
  "--no-session-persistence"
]

/**
 * Variables that would send the relay's requests elsewhere or change how it runs (another API,
 * provider, key or model; being started from inside a Claude Code session; Claude Code's own
 * switches), dropped from the environment the relay inherits.
 */
const dropped = /^(ANTHROPIC_|CLAUDE_CODE_|CLAUDECODE$|CLAUDE_CONFIG_DIR$|AWS_BEARER_TOKEN_BEDROCK$)/

export interface RelayEnvironmentInput {
  /** The environment the relay inherits (the caller's). */
  readonly base: Readonly<Record<string, string | undefined>>
  /** The Claude home the relay runs under. */
  readonly claudeHome: string
  /** The user's home directory: a Claude home of `<home>/.claude` is Claude Code's default one. */
  readonly userHome: string
  readonly baseUrl: string
  readonly apiKey: string
}

const withLoopback = (value: string | undefined): string => ["127.0.0.1", "localhost", value].filter((part) => part !== undefined && part !== "").join(",")

/**
 * The relay's environment. The default home is selected by leaving `CLAUDE_CONFIG_DIR` unset:
 * Claude Code reads its global configuration from `<CLAUDE_CONFIG_DIR>/.claude.json` when the
 * variable is set and from `~/.claude.json` when it is not, so setting it to `~/.claude` would run
 * the relay on another configuration file than the user's sessions. Loopback is exempted from any
 * proxy, so that the requests reach the endpoint.
 */
export const relayEnvironment = (input: RelayEnvironmentInput): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(input.base)) {
    if (value !== undefined && !dropped.test(key)) env[key] = value
  }
  const isDefaultHome = path.resolve(input.claudeHome) === path.resolve(input.userHome, ".claude")
  return {
    ...env,
    ...(isDefaultHome ? {} : { CLAUDE_CONFIG_DIR: input.claudeHome }),
    ANTHROPIC_BASE_URL: input.baseUrl,
    ANTHROPIC_API_KEY: input.apiKey,
    // No telemetry, update check or connectivity probe: nothing but the model requests leaves the relay.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    NO_PROXY: withLoopback(env.NO_PROXY),
    no_proxy: withLoopback(env.no_proxy)
  }
}
