/**
 * What each command accepts, as the completion scripts (`Completions.ts`) and the walk that places
 * the words of a command line (`Argv.ts`) read it: subcommands, options, which options take a value,
 * and what the word after an option or a command's first argument can be. Derived from the command
 * table (`CommandTable.ts`), with `--help` on every command (it is `@effect/cli`'s own).
 */
import { type CommandSpec as TableCommand, commandTable, type Completion } from "./CommandTable.js"

export { type CompletionShell, completionShells } from "./CommandTable.js"

/** What the word after an option is: a directory, one of these words, or free text (nothing to offer). */
export type OptionValue = Completion

export interface OptionSpec {
  readonly name: string
  /** Absent for a flag: the next word is not the option's. */
  readonly value?: OptionValue
  /** May be given more than once. */
  readonly repeatable?: boolean
}

export interface CommandSpec {
  readonly name: string
  readonly options: ReadonlyArray<OptionSpec>
  /** The values a command's first argument can take, when they are a fixed few. */
  readonly argumentValues?: ReadonlyArray<string>
  /** The arguments it takes, in order (none for a command with subcommands). */
  readonly arguments: ReadonlyArray<{ readonly name: string; readonly description: string; readonly required: boolean }>
  readonly subcommands?: ReadonlyArray<CommandSpec>
}

const help: OptionSpec = { name: "--help" }

/** What the walk and the completions read of a command table. */
export const treeOf = (command: TableCommand): CommandSpec => {
  const values = command.arguments?.[0]?.value.completion
  return {
    name: command.name,
    options: [
      ...command.options.map((option): OptionSpec => ({
        name: option.name,
        ...(option.value === undefined ? {} : { value: option.value.completion }),
        ...(option.repeatable === true ? { repeatable: true } : {})
      })),
      help
    ],
    ...(Array.isArray(values) ? { argumentValues: values } : {}),
    arguments: (command.arguments ?? []).map(({ description, name, required }) => ({ name, description, required })),
    ...(command.subcommands === undefined ? {} : { subcommands: command.subcommands.map(treeOf) })
  }
}

export const commandTree: CommandSpec = treeOf(commandTable)

/** A command and the words that lead to it from the program: `""` for the root, `"settings set"`. */
export interface Place {
  readonly path: string
  readonly command: CommandSpec
}

export const placesOf = (command: CommandSpec, path = ""): ReadonlyArray<Place> => [
  { path, command },
  ...(command.subcommands ?? []).flatMap((sub) => placesOf(sub, path === "" ? sub.name : `${path} ${sub.name}`))
]
