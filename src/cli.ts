/**
 * `claude-peers/cli`: the command as an `@effect/cli` command, to mount `claude-peers` as a subcommand
 * of an application's own command line (`Command.withSubcommands([command])`). It runs on the
 * services the host provides (`layerNode(…)`, or `layerMemory(world)` in the host's tests), writes
 * through the host's `Console`, and ends a failure it has reported with an `ExitCode` error carrying
 * the contract's exit code (`teardown` gives a host's runtime those codes, an interruption's
 * included). A host whose `Console` can lose output says so through `OutputLoss`.
 */
export { command } from "./cli/Mount.js"
export { OutputLoss, type OutputLossReport } from "./cli/Output.js"
export { OutputFailed } from "./cli/Output.js"
export { ExitCode, UsageError } from "./cli/Report.js"
export { teardown } from "./cli/Teardown.js"
