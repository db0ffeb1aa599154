/**
 * `claude-peers [--claude-home DIR] <command>`: a thin root; each subcommand lives in its own file and
 * stands for an invocation, which the root hands to `runInvocation`.
 */
import * as Command from "@effect/cli/Command"
import { base, Runner } from "./Base.js"
import { inspectCommand } from "./inspect.js"
import { listCommand } from "./list.js"
import { policyCommand } from "./policy.js"
import { resolveCommand } from "./resolve.js"
import { runInvocation } from "./Run.js"
import { settingsCommand } from "./settings.js"
import { watchCommand } from "./watch.js"

/** The command tree, asking for a `Runner` to run what it parsed. */
export const commandTree = base.pipe(
  Command.withDescription(
    "Find the Claude Code sessions that are really running, read or update the user-level policy for messages between them, and tell the policy in effect for each."
  ),
  Command.withSubcommands([listCommand, inspectCommand, resolveCommand, settingsCommand, watchCommand, policyCommand])
)

/** The whole command, running what it parsed over the Node layers. */
export const rootCommand = commandTree.pipe(Command.provideSync(Runner, () => runInvocation))
