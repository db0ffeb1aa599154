/**
 * The documented spellings of the hot commands, recognized without loading the command-line parser:
 * `list`, `inspect`, `resolve`, `settings` and `policy` run from status lines, hooks and orchestrator loops
 * many times a minute, and building `@effect/cli`'s command tree costs more start-up than answering
 * them. Words are placed by the same walk the full command line uses (`Argv.ts`); what this then
 * recognizes is a command whose options are its own (and the program's `--claude-home`), each at
 * most once, with every value valid. Anything else (help, a mistake, `--`, an unusual value) is
 * left to the full parser, which owns every usage error and help text; a property test holds the
 * two to the same invocations.
 */
import { inboundPolicyNames } from "../domain/InboundPolicyNames.js"
import type { InboundPolicy } from "../domain/Settings.js"
import { type Reading, readArgv } from "./Argv.js"
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

interface Parsed {
  readonly flags: ReadonlySet<string>
  readonly values: ReadonlyMap<string, string>
  readonly positionals: ReadonlyArray<string>
}

/** The command's options and arguments, or undefined for anything outside its grammar. */
const parseOptions = (name: Name, reading: Reading): Parsed | undefined => {
  const { flags: knownFlags, positionals: maxPositionals, valued } = grammar[name]
  const leaf = reading.options[reading.options.length - 1]!
  // Between the program and the command (`settings`), nothing: the walk has put every option in its place.
  if (reading.options.slice(1, -1).some((given) => given.length > 0)) return undefined
  const flags = new Set<string>()
  const values = new Map<string, string>()
  for (const option of leaf) {
    if (option.value === undefined && (knownFlags as ReadonlyArray<string>).includes(option.name)) flags.add(option.name)
    else if (option.value !== undefined && (valued as ReadonlyArray<string>).includes(option.name)) values.set(option.name, option.value)
    else return undefined
  }
  const positionals = reading.words
  if (positionals.length > maxPositionals || positionals.some((word) => word.startsWith("-"))) return undefined
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
      // Neither, both, an empty id, or a name with --allow-shared-name: a usage error, which is the parser's to give.
      if (
        (sessionId === undefined) === (byName === undefined) || sessionId === "" ||
        (byName !== undefined && flags.has("--allow-shared-name"))
      ) {
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
      // Both, or an empty id: a usage error, which is the parser's to give.
      if ((sessionId !== undefined && byName !== undefined) || sessionId === "") return undefined
      const query = sessionId !== undefined ? { sessionId } : byName !== undefined ? { name: byName } : undefined
      return { _tag: "policy", query, managedDirectory: values.get("--managed-dir") }
    }
  }
}

/** The invocation `args` (argv without node and the script) spells, or undefined when only the full parser can say. */
export const recognize = (args: ReadonlyArray<string>): Invocation | undefined => {
  const reading = readArgv(args)
  if (reading.help || reading.problem !== undefined || reading.afterDashes !== undefined) return undefined
  const name = reading.path.join(" ") as Name
  if (!Object.prototype.hasOwnProperty.call(grammar, name)) return undefined
  const root = reading.options[0]!
  const claudeHome = root[0]
  if (root.length > 1 || (claudeHome !== undefined && claudeHome.name !== "--claude-home")) return undefined
  const parsed = parseOptions(name, reading)
  const command = parsed === undefined ? undefined : commandOf(name, parsed)
  return command === undefined ? undefined : { claudeHome: claudeHome?.value, json: parsed!.flags.has("--json"), command }
}
