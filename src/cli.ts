/**
 * `claude-peers/cli`: the command as an `@effect/cli` command, to mount `claude-peers` as a subcommand
 * of an application's own command line (`Command.withSubcommands([command])`). It provides its own
 * layers; a failure it has reported ends in an `ExitCode` error carrying the contract's exit code.
 */
export { rootCommand as command } from "./cli/Root.js"
export { ExitCode, UsageError } from "./cli/Report.js"
export { OutputFailed } from "./cli/Output.js"
