/**
 * The documented spellings of the hot commands, recognized without loading the command-line parser:
 * `list`, `inspect`, `resolve`, `settings` and `policy` run from status lines, hooks and orchestrator loops
 * many times a minute, and building `@effect/cli`'s command tree costs more start-up than answering
 * them. What this recognizes is exactly `[--claude-home DIR] <command> <its options>`, with options
 * spelled `--opt value` or `--opt=value`, in any order after the command, each at most once, and
 * every value valid. Anything else (help, a mistake, an unusual spelling) is left to the full parser,
 * which owns every usage error and help text; a property test holds the two to the same invocations.
 */
import { inboundPolicyNames } from "../domain/InboundPolicyNames.js"
import type { InboundPolicy } from "../domain/Settings.js"
import { type Command, type Invocation, parseInterval, parseRevision } from "./Invocation.js"

/** The options each command takes: flags, and options with a value. */
const grammar = {
  list: { flags: ["--json"], valued: [], positionals: 0 },
  inspect: { flags: ["--json"], valued: [], positionals: 0 },
  resolve: { flags: ["--json", "--allow-shared-name"], valued: ["--name"], positionals: 1 },
  "settings get": { flags: ["--json"], valued: [], positionals: 0 },
  "settings set": { flags: ["--json"], valued: ["--expect-revision"], positionals: 1 },
  "settings reset": { flags: ["--json"], valued: ["--expect-revision"], positionals: 0 },
  watch: { flags: ["--json"], valued: ["--interval"], positionals: 0 },
  policy: { flags: ["--json"], valued: ["--name", "--managed-dir"], positionals: 1 }
} as const satisfies Record<Command["_tag"], { flags: ReadonlyArray<string>; valued: ReadonlyArray<string>; positionals: number }>

type Name = keyof typeof grammar

/** The words that name a command; a `--claude-home` value spelled like one is left to the parser. */
const commandWords = new Set(["list", "inspect", "resolve", "settings", "watch", "policy", "get", "set", "reset"])

interface Parsed {
  readonly flags: ReadonlySet<string>
  readonly values: ReadonlyMap<string, string>
  readonly positionals: ReadonlyArray<string>
}

/** A value is taken as one only when no parser could read it as an option. */
const isPlainValue = (value: string | undefined): value is string => value !== undefined && value.length > 0 && !value.startsWith("-")

/** The options after the command, or undefined for any spelling outside the grammar. */
const parseOptions = (name: Name, words: ReadonlyArray<string>): Parsed | undefined => {
  const { flags: knownFlags, positionals: maxPositionals, valued } = grammar[name]
  const flags = new Set<string>()
  const values = new Map<string, string>()
  const positionals: Array<string> = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const eq = word.indexOf("=")
    const option = word.startsWith("--") && eq > 0 ? word.slice(0, eq) : word
    if ((knownFlags as ReadonlyArray<string>).includes(word)) {
      if (flags.has(word)) return undefined
      flags.add(word)
    } else if ((valued as ReadonlyArray<string>).includes(option)) {
      const value = option === word ? words[++i] : word.slice(eq + 1)
      if (values.has(option) || !isPlainValue(value)) return undefined
      values.set(option, value)
    } else if (!word.startsWith("-") && positionals.length < maxPositionals) {
      positionals.push(word)
    } else {
      return undefined
    }
  }
  return { flags, values, positionals }
}

const isPolicy = (word: string): word is InboundPolicy => (inboundPolicyNames as ReadonlyArray<string>).includes(word)

/** The command a parse stands for, or undefined when a value is invalid (the parser then says why). */
const commandOf = (name: Name, { flags, positionals, values }: Parsed): Command | undefined => {
  const revision = values.get("--expect-revision")
  const expectRevision = revision === undefined ? undefined : parseRevision(revision)
  if (revision !== undefined && expectRevision === undefined) return undefined
  switch (name) {
    case "list":
    case "inspect":
    case "settings get":
      return { _tag: name }
    case "resolve": {
      const sessionId = positionals[0]
      const byName = values.get("--name")
      // Neither, both, or a name with --allow-shared-name: a usage error, which is the parser's to give.
      if ((sessionId === undefined) === (byName === undefined) || (byName !== undefined && flags.has("--allow-shared-name"))) {
        return undefined
      }
      return sessionId !== undefined
        ? { _tag: "resolve", query: { sessionId }, allowSharedName: flags.has("--allow-shared-name") }
        : { _tag: "resolve", query: { name: byName! }, allowSharedName: false }
    }
    case "settings set": {
      const value = positionals[0]
      return value !== undefined && isPolicy(value) ? { _tag: "settings set", value, expectRevision } : undefined
    }
    case "settings reset":
      return { _tag: "settings reset", expectRevision }
    case "watch": {
      const interval = values.get("--interval")
      if (interval === undefined) return { _tag: "watch", intervalMillis: undefined }
      const intervalMillis = parseInterval(interval)
      return intervalMillis === undefined ? undefined : { _tag: "watch", intervalMillis }
    }
    case "policy": {
      const sessionId = positionals[0]
      const byName = values.get("--name")
      // Both: a usage error, which is the parser's to give.
      if (sessionId !== undefined && byName !== undefined) return undefined
      const query = sessionId !== undefined ? { sessionId } : byName !== undefined ? { name: byName } : undefined
      return { _tag: "policy", query, managedDirectory: values.get("--managed-dir") }
    }
  }
}

/** The invocation `args` (argv without node and the script) spells, or undefined when only the full parser can say. */
export const recognize = (args: ReadonlyArray<string>): Invocation | undefined => {
  let rest = args
  let claudeHome: string | undefined
  const first = rest[0]
  if (first === "--claude-home" || first?.startsWith("--claude-home=")) {
    claudeHome = first === "--claude-home" ? rest[1] : first.slice("--claude-home=".length)
    if (!isPlainValue(claudeHome) || commandWords.has(claudeHome)) return undefined
    rest = rest.slice(first === "--claude-home" ? 2 : 1)
  }
  const name = (rest[0] === "settings" ? `settings ${rest[1]}` : rest[0]) as Name
  if (!Object.prototype.hasOwnProperty.call(grammar, name)) return undefined
  const parsed = parseOptions(name, rest.slice(name.startsWith("settings ") ? 2 : 1))
  const command = parsed === undefined ? undefined : commandOf(name, parsed)
  return command === undefined ? undefined : { claudeHome, json: parsed!.flags.has("--json"), command }
}
