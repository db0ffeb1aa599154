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
import { repeatSeparator } from "./Argv.js"
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
  const parse = (text: string) => Effect.mapError(parsedBy(value)(text), ValidationError.invalidValue)
  // The walk hands a repeatable option's values over as one, joined (`Argv.ts`).
  const parseAll = spec.repeatable === true ? (text: string) => Effect.forEach(text.split(repeatSeparator), parse) : parse
  return Options.text(name).pipe(
    Options.withPseudoName(value.placeholder),
    Options.mapEffect(parseAll),
    Options.withDescription(spec.repeatable === true ? `${spec.description} (may be given more than once)` : spec.description),
    Options.optional
  )
}

/** Only the first argument may be required: the parser fills the arguments from the first. */
const argumentOf = (spec: ArgumentSpec, at: number): Args.Args<unknown> => {
  const parsed = Args.text({ name: spec.name }).pipe(Args.mapEffect(parsedBy(spec.value)), Args.withDescription(spec.description))
  return spec.required && at === 0 ? parsed : Args.optional(parsed)
}

/** Where an argument's value is in what `@effect/cli` parsed: no option's name has a space. */
const argumentKey = (at: number) => `argument ${at}`

/** The options a command declares to `@effect/cli` (not its built-ins), keyed by their names. */
const configOf = (spec: CommandSpec) => {
  const config: Record<string, Options.Options<unknown> | Args.Args<unknown>> = {}
  for (const option of spec.options) if (option.builtIn !== true) config[option.name] = optionOf(option)
  for (const [at, argument] of (spec.arguments ?? []).entries()) config[argumentKey(at)] = argumentOf(argument, at)
  return config
}

/** What `@effect/cli` parsed for a command, as the table's `make` reads it. */
const givenOf = (parsed: Record<string, unknown>): Given => {
  const unwrapped = (value: unknown) => (Option.isOption(value) ? Option.getOrUndefined(value) : value)
  const valuesOf = (name: string): ReadonlyArray<unknown> => {
    const value = unwrapped(parsed[name])
    return Array.isArray(value) ? value : value === undefined ? [] : [value]
  }
  const args: Array<unknown> = []
  for (let at = 0; argumentKey(at) in parsed; at++) args.push(unwrapped(parsed[argumentKey(at)]))
  return {
    flag: (name) => parsed[name] === true,
    value: (name) => valuesOf(name).at(-1),
    values: valuesOf,
    arguments: args
  }
}

type AnyCommand = Command.Command<string, Runner, UsageError | ExitCode | OutputFailed, Record<string, unknown>>

/** The `@effect/cli` tree of a command table: the real one below, a test's own table in tests. */
export const commandTreeOf = (table: CommandSpec): AnyCommand => {
  const root = Command.make(table.name, configOf(table)) as unknown as AnyCommand

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

  return Command.withSubcommands(
    Command.withDescription(root, table.description),
    (table.subcommands ?? []).map((sub) => leafOf(sub, `${table.name} ${sub.name}`)) as [AnyCommand]
  ) as unknown as AnyCommand
}

/** The command tree, asking for a `Runner` to run what it parsed. */
export const commandTree: AnyCommand = commandTreeOf(commandTable)
