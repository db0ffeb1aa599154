/**
 * Where each word of a command line belongs, before any value is parsed: the command it names, the
 * command each option belongs to, and what is wrong with the layout. The standalone command's recognizer
 * and the full command line (`CommandLine.ts`, which hands the words to `@effect/cli` in the order
 * it needs) both read argv through this one walk over the command table (`CompletionTree.ts`), so
 * that they cannot disagree about where a word goes. The rules, as the README states them:
 * - An option may be written anywhere after the program's name, before or after the command it
 *   belongs to: `list --claude-home DIR --json` is `--claude-home DIR list --json`. `@effect/cli`
 *   only takes a command's options between its name and its subcommand's, and says "unknown
 *   argument" or "invalid subcommand" otherwise, which tells nobody where the option goes.
 * - An option that takes a value takes the next word, unless there is none or it starts with `-`:
 *   then the value is missing, a usage error, rather than the next option silently becoming the
 *   value (`resolve --json --name` would otherwise resolve the session id `--name`). `--opt=VALUE`
 *   takes any value, one that starts with `-` included. No option takes an empty value.
 * - A flag takes no value, and no option is given twice unless the table says it repeats.
 * - A word that starts with `-` and is no command's option is a usage error that names it as typed
 *   (`resolve --bogus`), never an argument.
 * - A command that has subcommands takes one of them, nothing else.
 * - `--help` (or `-h`) anywhere asks for the help of the command the other words lead to.
 * - After `--`, every word is an argument; no argument starts with `-`, except `-` itself (standard input).
 */
import { type CommandSpec, commandTree, type OptionSpec } from "./CompletionTree.js"
import { quotedWord } from "./Text.js"

export interface GivenOption {
  readonly name: string
  /** Undefined for a flag. */
  readonly value: string | undefined
}

export interface Reading {
  /** The subcommands named, from the program on: `[]` for the program itself, `["settings", "set"]`. */
  readonly path: ReadonlyArray<string>
  /** The options of each command on the path, the program's first, each in the order written. */
  readonly options: ReadonlyArray<ReadonlyArray<GivenOption>>
  /** Everything else before `--`, in order: the arguments, and options no command declares. */
  readonly words: ReadonlyArray<string>
  /** The words after `--`; undefined without one. */
  readonly afterDashes: ReadonlyArray<string> | undefined
  readonly help: boolean
  /** Whether `--json` was written: a usage error is then also printed as JSON. */
  readonly json: boolean
  /** What is wrong with the layout, as a usage error's sentence (the first thing found). */
  readonly problem: string | undefined
}

const isHelp = (word: string) => word === "--help" || word === "-h"

const declared = (command: CommandSpec, name: string): OptionSpec | undefined => command.options.find((option) => option.name === name)

/** An option of a command below `command`: one written before the command it belongs to. */
const declaredBelow = (command: CommandSpec, name: string): OptionSpec | undefined => {
  for (const sub of command.subcommands ?? []) {
    const found = declared(sub, name) ?? declaredBelow(sub, name)
    if (found !== undefined) return found
  }
  return undefined
}

/** The deepest command on the path, deeper than `depth`, that declares the option; -1 for none. */
const ownerOf = (chain: ReadonlyArray<CommandSpec>, name: string, depth = -1): number => {
  for (let at = chain.length - 1; at > depth; at--) if (declared(chain[at]!, name) !== undefined) return at
  return -1
}

export const readArgv = (args: ReadonlyArray<string>, tree: CommandSpec = commandTree): Reading => {
  const chain: Array<CommandSpec> = [tree]
  const path: Array<string> = []
  const options: Array<Array<GivenOption>> = [[]]
  /** Options written before the command that declares them, with the depth they were written at. */
  const early: Array<{ readonly option: GivenOption; readonly depth: number }> = []
  const words: Array<string> = []
  /** Words spelled as options that no command on the path, or below it, declares. */
  const unknown: Array<string> = []
  let argumentSeen = false
  let json = false
  let problem: string | undefined
  const found = (message: string) => {
    problem ??= message
  }

  /** Reads the option `word` (and its value from `next`, when it takes it); says how many words it took. */
  const readOption = (word: string, next: string | undefined): number => {
    const eq = word.startsWith("--") ? word.indexOf("=") : -1
    const name = eq > 0 ? word.slice(0, eq) : word
    const owner = ownerOf(chain, name)
    const spec = owner >= 0 ? declared(chain[owner]!, name) : declaredBelow(chain.at(-1)!, name)
    if (spec === undefined) {
      unknown.push(word)
      return 1
    }
    const value = spec.value === undefined ? undefined : eq > 0 ? word.slice(eq + 1) : next?.startsWith("-") === false ? next : undefined
    if (spec.value === undefined && eq > 0) found(`${name} takes no value`)
    if (spec.value !== undefined && value === undefined) {
      found(`${name} needs a value: ${name} VALUE, or ${name}=VALUE for a value that starts with -`)
      return 1
    }
    if (value === "") found(`${name} needs a value, not an empty string`)
    if (name === "--json") json = true
    if (owner >= 0) options[owner]!.push({ name, value })
    else early.push({ option: { name, value }, depth: chain.length - 1 })
    return spec.value !== undefined && eq < 0 ? 2 : 1
  }

  /** A word names a subcommand only where its command expects one, before any argument. */
  const readWord = (word: string): void => {
    const { subcommands } = chain.at(-1)!
    const sub = argumentSeen ? undefined : subcommands?.find((command) => command.name === word)
    if (sub !== undefined) {
      chain.push(sub)
      path.push(word)
      options.push([])
      return
    }
    // @effect/cli would blame the program, whichever command it was, and not say which word it was.
    if (subcommands !== undefined && !argumentSeen) {
      found(`unknown command ${quotedWord(word)} for ${[tree.name, ...path].join(" ")}: use one of ${subcommands.map((command) => command.name).join(", ")}`)
    }
    argumentSeen = true
    words.push(word)
  }

  // No word of a real command line holds a NUL (execve cannot pass one); the walk joins a repeatable
  // option's values with it, so a word that does is refused rather than split.
  const withNul = args.find((word) => word.includes(repeatSeparator))
  if (withNul !== undefined) found(`a command line cannot hold a NUL character (${JSON.stringify(withNul.slice(0, 40))})`)
  const dashes = args.indexOf("--")
  const before = dashes < 0 ? args : args.slice(0, dashes)
  const help = before.some(isHelp)
  for (let i = 0; i < before.length;) {
    const word = before[i]!
    if (isHelp(word)) i++
    else if (word.startsWith("-") && word !== "-") i += readOption(word, before[i + 1])
    else {
      readWord(word)
      i++
    }
  }
  const reached = [tree.name, ...path].join(" ")
  const { subcommands } = chain.at(-1)!
  for (const word of unknown) found(`${quotedWord(word)} is not an option of ${reached}`)
  for (const { depth, option } of early) {
    const owner = ownerOf(chain, option.name, depth)
    if (owner >= 0) options[owner]!.push(option)
    else if (subcommands !== undefined) {
      found(`${reached} takes a command (${subcommands.map((command) => command.name).join(", ")}), and ${option.name} goes after it`)
    } else found(`${option.name} is not an option of ${reached}`)
  }
  // Past `--` every word is an argument, and a command that has subcommands takes none.
  const afterDashes = dashes < 0 ? undefined : args.slice(dashes + 1)
  if (afterDashes !== undefined && subcommands !== undefined) {
    found(`${reached} takes a command (${subcommands.map((command) => command.name).join(", ")}) before --`)
  }
  // No argument of any command starts with `-`; and @effect/cli takes `-h` or `--version` for its
  // own wherever it stands, `--` or not, so such an argument could not reach the command anyway.
  const dashed = afterDashes?.find((word) => word.startsWith("-") && word !== "-")
  if (dashed !== undefined) found(`${quotedWord(dashed)} is not an argument of ${reached}: none starts with -`)
  // A word past the arguments the command takes: @effect/cli would name the word, not the command.
  if (subcommands === undefined) {
    const takes = chain.at(-1)!.arguments
    const given = [...words, ...(afterDashes ?? [])]
    const extra = given[takes.length]
    if (extra !== undefined) {
      found(
        takes.length === 0
          ? `${reached} takes no argument, not ${quotedWord(extra)}`
          : `${quotedWord(extra)} is one argument too many for ${reached}, which takes ${takes.map((a) => a.name).join(" then ")}`
      )
    }
    // A required one not given: @effect/cli would say only `Missing argument <VALUE>`.
    const absent = takes.filter((argument) => argument.required)[given.length]
    if (absent !== undefined) found(`${path.join(" ")} needs <${absent.name}>: ${absent.description}`)
  }
  for (const [depth, given] of options.entries()) {
    const twice = given.find((option, at) =>
      declared(chain[depth]!, option.name)?.repeatable !== true && given.findIndex((other) => other.name === option.name) !== at
    )
    if (twice !== undefined) found(`${twice.name} is given twice`)
  }
  return { path, options, words, afterDashes, help, json, problem }
}

/**
 * An option as `@effect/cli` reads its value exactly. Given `--opt VALUE`, it takes a VALUE of `--`
 * for the end of the options, one that names a subcommand for that subcommand, and one spelled like
 * its own `-h` or `--version` for that request. Given `--opt=VALUE`, it trims the word's end, and
 * takes no VALUE with a line break (the word then becomes an argument). So `--opt=VALUE` whenever
 * that is exact, and `--opt VALUE` for the rest (which none of those words are).
 */
const arranged = (option: GivenOption): ReadonlyArray<string> =>
  option.value === undefined
    ? [option.name]
    : option.value.trimEnd() === option.value && !/[\n\r\u2028\u2029]/.test(option.value)
    ? [`${option.name}=${option.value}`]
    : [option.name, option.value]

/**
 * What `@effect/cli` gets for the options of one command: a repeatable option's values joined into
 * one value by NUL, which no word of a command line can hold. Its repeated options take neither
 * `--opt=VALUE` nor a value spelled like a subcommand, and they trim values; one value in the exact
 * spelling above keeps every value as typed.
 */
const joinedRepeats = (command: CommandSpec | undefined, given: ReadonlyArray<GivenOption>): ReadonlyArray<GivenOption> => {
  const joined: Array<GivenOption> = []
  for (const option of given) {
    if (declared(command ?? { name: "", options: [], arguments: [] }, option.name)?.repeatable !== true || option.value === undefined) {
      joined.push(option)
      continue
    }
    const at = joined.findIndex((seen) => seen.name === option.name)
    if (at < 0) joined.push(option)
    else joined[at] = { name: option.name, value: `${joined[at]!.value}${repeatSeparator}${option.value}` }
  }
  return joined
}

/** Between the values of a repeatable option handed to `@effect/cli` as one. */
export const repeatSeparator = "\u0000"

/**
 * The words as `@effect/cli` takes them: each command's options right after its name, the
 * arguments before the last command's options (it takes a flag's next word as the flag's value
 * when it reads as one: `--json 0` is `--json=false`).
 */
export const arrangedArgv = (reading: Reading, tree: CommandSpec = commandTree): ReadonlyArray<string> => {
  const last = reading.path.length
  const chain: Array<CommandSpec | undefined> = [tree]
  for (const name of reading.path) chain.push(chain.at(-1)?.subcommands?.find((sub) => sub.name === name))
  const optionsAt = (at: number) => joinedRepeats(chain[at], reading.options[at]!).flatMap(arranged)
  // `@effect/cli` reads no option after a `-` argument (standard input): a line with one gets its
  // arguments after `--`, past every option, in the order typed.
  const stdin = reading.words.includes("-")
  const words = stdin ? [] : reading.words
  const afterDashes = stdin ? [...reading.words, ...(reading.afterDashes ?? [])] : reading.afterDashes
  return [
    ...(last === 0 ? words : []),
    ...optionsAt(0),
    ...reading.path.flatMap((name, at) => [name, ...(at + 1 === last ? words : []), ...optionsAt(at + 1)]),
    ...(afterDashes === undefined ? [] : ["--", ...afterDashes])
  ]
}
