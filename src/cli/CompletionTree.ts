/**
 * What each command accepts: subcommands, options, which options take a value, and what the word
 * after an option or a command's first argument can be. The scripts in `Completions.ts` are made
 * from this alone, and the walk that places the words of a command line (`Argv.ts`) reads it, so
 * it is plain data the fast path can load (nothing from the schema library).
 *
 * It is written out rather than read from `rootCommand`: @effect/cli keeps its command tree
 * internal (its public `getSubcommands` loses `settings`' children), and it cannot say that a
 * text option names a directory. `test/Completions.test.ts` checks that every command and option
 * the parser accepts is here.
 */
import { inboundPolicyNames } from "../domain/InboundPolicyNames.js"

/** What the word after an option is: a directory, one of these words, or free text (nothing to offer). */
export type OptionValue = "directory" | "text" | ReadonlyArray<string>

export interface OptionSpec {
  readonly name: string
  /** Absent for a flag: the next word is not the option's. */
  readonly value?: OptionValue
}

export interface CommandSpec {
  readonly name: string
  readonly options: ReadonlyArray<OptionSpec>
  /** The values a command's first argument can take, when they are a fixed few. */
  readonly argumentValues?: ReadonlyArray<string>
  readonly subcommands?: ReadonlyArray<CommandSpec>
}

/** The shells `--completions` writes a script for; `sh` is bash's, as in @effect/cli. */
export const completionShells = ["bash", "fish", "sh", "zsh"] as const
export type CompletionShell = (typeof completionShells)[number]

const flag = (name: string): OptionSpec => ({ name })
const help = flag("--help")
const json = flag("--json")
const expectRevision: OptionSpec = { name: "--expect-revision", value: "text" }
const byName: OptionSpec = { name: "--name", value: "text" }

export const commandTree: CommandSpec = {
  name: "claude-peers",
  options: [{ name: "--claude-home", value: "directory" }, { name: "--completions", value: completionShells }, help, flag("--version")],
  subcommands: [
    { name: "list", options: [json, help] },
    { name: "inspect", options: [json, help] },
    { name: "resolve", options: [byName, flag("--allow-shared-name"), json, help] },
    {
      name: "settings",
      options: [help],
      subcommands: [
        { name: "get", options: [json, help] },
        { name: "set", options: [expectRevision, json, help], argumentValues: inboundPolicyNames },
        { name: "reset", options: [expectRevision, json, help] }
      ]
    },
    { name: "watch", options: [{ name: "--interval", value: "text" }, json, help] },
    { name: "policy", options: [byName, { name: "--managed-dir", value: "directory" }, json, help] }
  ]
}

/** A command and the words that lead to it from the program: `""` for the root, `"settings set"`. */
export interface Place {
  readonly path: string
  readonly command: CommandSpec
}

export const placesOf = (command: CommandSpec, path = ""): ReadonlyArray<Place> => [
  { path, command },
  ...(command.subcommands ?? []).flatMap((sub) => placesOf(sub, path === "" ? sub.name : `${path} ${sub.name}`))
]
