/**
 * The root command before its subcommands are attached: its options (`--claude-home`) are what each
 * subcommand's handler reads by yielding it, as `@effect/cli` gives a parent's parsed options to its
 * children.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Command as Invoked, Invocation } from "./Invocation.js"
import type { OutputFailed } from "./Output.js"
import type { ExitCode, UsageError } from "./Report.js"

/**
 * What runs an invocation. The command tree asks for it rather than running the handlers itself, so
 * that a test can give the tree a runner that only records what the parser made of an argv.
 */
export class Runner extends Context.Tag("claude-peers/cli/Runner")<
  Runner,
  (invocation: Invocation) => Effect.Effect<void, ExitCode | OutputFailed | UsageError>
>() {}

const claudeHome = Options.text("claude-home").pipe(
  // An empty directory would silently become the current one, and a settings update would write there.
  Options.filterMap((dir) => (dir.length > 0 ? Option.some(dir) : Option.none()), "--claude-home needs a directory, not an empty string"),
  Options.withDescription("the Claude home (default: $CLAUDE_CONFIG_DIR, then ~/.claude)"),
  Options.optional
)

export const base = Command.make("claude-peers", { claudeHome })

/** A subcommand's handler: the invocation it stands for, handed to whatever runs invocations. */
export const invoke = (command: Invoked, json: boolean) =>
  Effect.flatMap(Effect.zip(base, Runner), ([root, run]) =>
    run({ claudeHome: Option.getOrUndefined(root.claudeHome), json, command }))
