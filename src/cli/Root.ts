/**
 * The `@effect/cli` tree, derived from the command table (`CommandTable.ts`): each option and
 * argument is parsed by the table's own parser, and each leaf stands for the invocation the table's
 * `make` builds, which the tree hands to the `Runner` in context. It holds no handler itself, so
 * that a test can give it a runner that only records what the parser made of an argv.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ArgumentSpec, type CommandSpec, commandTable, type Given, type OptionSpec, type ValueSpec } from "./CommandTable.js"
import type { Invocation } from "./Invocation.js"
import type { OutputFailed } from "./Output.js"
import { type ExitCode, UsageError } from "./Report.js"

/** What runs an invocation: the standalone command's composition, a mounted command's host services, or a test's recorder. */
export class Runner extends Context.Tag("claude-peers/cli/Runner")<
  Runner,
  (invocation: Invocation) => Effect.Effect<void, ExitCode | OutputFailed | UsageError>
>() {}

/** A value through the table's parser: its refusal is the parser's usage error, with the table's sentence. */
const parsedBy = (value: ValueSpec) => (text: string): Effect.Effect<unknown, HelpDoc.HelpDoc> => {
  const parsed = value.parse(text)
  return parsed.ok ? Effect.succeed(parsed.value) : Effect.fail(HelpDoc.p(parsed.message))
}

const optionOf = (spec: OptionSpec): Options.Options<unknown> => {
  const name = spec.name.slice(2)
  const value = spec.value
  if (value === undefined) return Options.boolean(name).pipe(Options.withDescription(spec.description))
  return Options.text(name).pipe(
    Options.withPseudoName(value.placeholder),
    Options.mapEffect((text) => Effect.mapError(parsedBy(value)(text), ValidationError.invalidValue)),
    Options.withDescription(spec.description),
    Options.optional
  )
}

const argumentOf = (spec: ArgumentSpec): Args.Args<unknown> => {
  const parsed = Args.text({ name: spec.name }).pipe(Args.mapEffect(parsedBy(spec.value)), Args.withDescription(spec.description))
  return spec.required ? parsed : Args.optional(parsed)
}

/** The options a command declares to `@effect/cli` (not its built-ins), keyed by their names. */
const configOf = (spec: CommandSpec) => {
  const config: Record<string, Options.Options<unknown> | Args.Args<unknown>> = {}
  for (const option of spec.options) if (option.builtIn !== true) config[option.name] = optionOf(option)
  if (spec.argument !== undefined) config["argument"] = argumentOf(spec.argument)
  return config
}

/** What `@effect/cli` parsed for a command, as the table's `make` reads it. */
const givenOf = (parsed: Record<string, unknown>): Given => {
  const unwrapped = (value: unknown) => (Option.isOption(value) ? Option.getOrUndefined(value) : value)
  return {
    flag: (name) => parsed[name] === true,
    value: (name) => unwrapped(parsed[name]),
    argument: unwrapped(parsed["argument"])
  }
}

type AnyCommand = Command.Command<string, Runner, UsageError | ExitCode | OutputFailed, Record<string, unknown>>

const root = Command.make(commandTable.name, configOf(commandTable)) as unknown as AnyCommand

const leafOf = (spec: CommandSpec, path: string): AnyCommand => {
  const make = spec.make
  const command = Command.make(spec.name, configOf(spec), (parsed: Record<string, unknown>) =>
    Effect.gen(function*() {
      if (make === undefined) {
        return yield* new UsageError({ message: `${path} takes a command: ${(spec.subcommands ?? []).map((sub) => sub.name).join(", ")}` })
      }
      const given = givenOf(parsed)
      const made = make(given)
      if (typeof made === "string") return yield* new UsageError({ message: made })
      const program = givenOf((yield* root) as Record<string, unknown>)
      const run = yield* Runner
      yield* run({ claudeHome: program.value("--claude-home") as string | undefined, json: given.flag("--json"), command: made })
    })).pipe(Command.withDescription(spec.description)) as unknown as AnyCommand
  const subcommands = spec.subcommands
  return subcommands === undefined
    ? command
    : (Command.withSubcommands(command, subcommands.map((sub) => leafOf(sub, `${path} ${sub.name}`)) as [AnyCommand]) as unknown as AnyCommand)
}

/** The command tree, asking for a `Runner` to run what it parsed. */
export const commandTree: AnyCommand = Command.withSubcommands(
  Command.withDescription(root, commandTable.description),
  (commandTable.subcommands ?? []).map((sub) => leafOf(sub, `${commandTable.name} ${sub.name}`)) as [AnyCommand]
) as unknown as AnyCommand
