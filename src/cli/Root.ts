/**
 * `claude-peers [--claude-home DIR] <command>`: a thin root that resolves the Claude home and
 * provides the Node layers; each subcommand lives in its own file.
 */
import { Command, Options } from "@effect/cli"
import { Option } from "effect"
import { layerNode } from "../layers/Node.js"
import { inspectCommand } from "./inspect.js"
import { listCommand } from "./list.js"
import { resolveCommand } from "./resolve.js"
import { settingsCommand } from "./settings.js"
import { watchCommand } from "./watch.js"

const claudeHome = Options.text("claude-home").pipe(
  // An empty directory would silently become the current one, and a settings update would write there.
  Options.filterMap((dir) => (dir.length > 0 ? Option.some(dir) : Option.none()), "--claude-home needs a directory, not an empty string"),
  Options.withDescription("the Claude home (default: $CLAUDE_CONFIG_DIR, then ~/.claude)"),
  Options.optional
)

export const rootCommand = Command.make("claude-peers", { claudeHome }).pipe(
  Command.withDescription("Find the Claude Code sessions that are really running, and read or update the user-level policy for messages between them."),
  Command.withSubcommands([listCommand, inspectCommand, resolveCommand, settingsCommand, watchCommand]),
  Command.provide(({ claudeHome }) => layerNode(claudeHome))
)
