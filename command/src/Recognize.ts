/**
 * The documented spellings of the commands, recognized without loading the command-line parser:
 * `list`, `inspect`, `resolve`, `settings` and `policy` run from status lines, hooks and orchestrator
 * loops many times a minute, and building `@effect/cli`'s command tree costs more start-up than
 * answering them. Words are placed by the walk the full command line uses (`src/cli/Argv.ts`), and
 * each option and argument is read by the command table's own parser and made into a command by
 * its `make` (`src/cli/CommandTable.ts`), as the `@effect/cli` tree reads them. Anything else (help,
 * a mistake, `--`, a refused value) is left to the full parser, which owns every usage error and
 * help text; a property test holds the two to the same invocations.
 */
import { readArgv } from "../../src/cli/Argv.js"
import { commandAt, type CommandSpec, commandTable, type Given } from "../../src/cli/CommandTable.js"
import type { Invocation } from "../../src/cli/Invocation.js"

/** The parsed values of `given` options declared by `command` (none of them a built-in), each option's in the order written, or undefined. */
const valuesOf = (
  command: CommandSpec,
  given: ReadonlyArray<{ readonly name: string; readonly value: string | undefined }>
): Map<string, Array<unknown>> | undefined => {
  const values = new Map<string, Array<unknown>>()
  for (const option of given) {
    const spec = command.options.find((declared) => declared.name === option.name)
    if (spec === undefined || spec.builtIn === true || (spec.value === undefined) !== (option.value === undefined)) return undefined
    let value: unknown = true
    if (spec.value !== undefined) {
      const parsed = spec.value.parse(option.value!)
      if (!parsed.ok) return undefined
      value = parsed.value
    }
    const seen = values.get(option.name)
    if (seen === undefined) values.set(option.name, [value])
    else seen.push(value)
  }
  return values
}

/** The invocation `args` (argv without node and the script) spells, or undefined when only the full parser can say. */
export const recognize = (args: ReadonlyArray<string>): Invocation | undefined => {
  const reading = readArgv(args)
  if (reading.help || reading.problem !== undefined || reading.afterDashes !== undefined) return undefined
  const command = commandAt(reading.path)
  if (command?.make === undefined) return undefined
  // Between the program and the command (`settings`), nothing: the walk has put every option in its place.
  if (reading.options.slice(1, -1).some((given) => given.length > 0)) return undefined
  const program = valuesOf(commandTable, reading.options[0]!)
  const values = valuesOf(command, reading.options[reading.options.length - 1]!)
  if (program === undefined || values === undefined) return undefined
  const words = reading.words
  const declared = command.arguments ?? []
  // `-` is the one argument spelled like an option; what it means is the parser's to say.
  if (words.length > declared.length || words.some((word) => word.startsWith("-"))) return undefined
  if (words.length === 0 && declared[0]?.required === true) return undefined
  const parsedArguments: Array<unknown> = []
  for (const [at, argument] of declared.entries()) {
    if (at >= words.length) {
      parsedArguments.push(undefined)
      continue
    }
    const parsed = argument.value.parse(words[at]!)
    if (!parsed.ok) return undefined
    parsedArguments.push(parsed.value)
  }
  const given: Given = {
    flag: (name) => values.get(name)?.[0] === true,
    value: (name) => values.get(name)?.at(-1),
    values: (name) => values.get(name) ?? [],
    arguments: parsedArguments
  }
  const made = command.make(given)
  if (typeof made === "string") return undefined
  return { claudeHome: program.get("--claude-home")?.at(-1) as string | undefined, json: given.flag("--json"), command: made }
}
