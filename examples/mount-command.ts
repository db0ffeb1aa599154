/**
 * Mounting: `claude-peers` as a subcommand of your own command line (`my-tool peers list --json`).
 * The mounted command provides its own layers; a failure it has already reported ends in an
 * `ExitCode` error that carries the contract's exit code.
 */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { command as peers, ExitCode } from "claude-peers/cli"
import { Effect } from "effect"

const myTool = Command.make("my-tool").pipe(Command.withSubcommands([peers]))

Command.run(myTool, { name: "my-tool", version: "1.0.0" })(process.argv).pipe(
  Effect.catchTag("ExitCode", (e: ExitCode) => Effect.sync(() => void (process.exitCode = e.code))),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain
)
