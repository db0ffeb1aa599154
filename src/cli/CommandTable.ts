/**
 * The command table: every command, its options, its argument, their value parsers and their help,
 * written once. Everything else is derived from it: the `@effect/cli` tree (`Root.ts`), the mounted
 * command (`Mount.ts`), the completion scripts (`CompletionTree.ts`, `Completions.ts`), the walk that
 * places the words of a command line (`Argv.ts`) and the standalone command's recognizer. It is
 * plain data and plain functions, so that a command recognized without the parser loads nothing more.
 *
 * Adding an option is one entry in its command's `options` (and a read of it in `make`); adding a
 * command is one entry here and one handler (`Handlers.ts`).
 */
import type { WaitState } from "../domain/Errors.js"
import { inboundPolicyNames } from "../domain/InboundPolicyNames.js"
import { messageProblem, messageProblemSentence } from "../domain/Message.js"
import type { InboundPolicy } from "../domain/Settings.js"
import type { Status } from "../domain/Status.js"
import type { Command, Invocation } from "./Invocation.js"
import { maxIntervalMillis, parseInterval, parseRevision } from "./Invocation.js"
import { quotedWord } from "./Text.js"

/** A value parsed, or the sentence of the usage error it is. */
export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }

const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const refused = (message: string): Parsed<never> => ({ ok: false, message })

/** What the word after an option (or a command's argument) is, for completion: a directory, one of these words, or free text. */
export type Completion = "directory" | "text" | ReadonlyArray<string>

export interface ValueSpec {
  /** What help calls the value. */
  readonly placeholder: string
  readonly completion: Completion
  readonly parse: (text: string) => Parsed<unknown>
}

export interface OptionSpec {
  /** As written: `--json`. */
  readonly name: string
  readonly description: string
  /** Absent for a flag: the next word is not the option's. */
  readonly value?: ValueSpec
  /** Answered by `@effect/cli` itself (`--completions`, `--version`): declared here for the walk and the completions only. */
  readonly builtIn?: boolean
  /**
   * May be given more than once (`--until idle --until waiting`); `Given.values` reads every value in
   * the order written. Any other option given twice is a usage error: two values for one question.
   */
  readonly repeatable?: boolean
}

export interface ArgumentSpec {
  readonly name: string
  readonly description: string
  /** Whether the command line must give it; an optional one may still be required by `make` together with an option. */
  readonly required: boolean
  readonly value: ValueSpec
}

/** What a command line gave a command: its flags, its options' parsed values, its arguments'. */
export interface Given {
  readonly flag: (name: string) => boolean
  /** The option's parsed value; for a repeatable option, the last one written. */
  readonly value: (name: string) => unknown
  /** Every parsed value of the option, in the order written; empty when it was not given. */
  readonly values: (name: string) => ReadonlyArray<unknown>
  /**
   * The arguments' parsed values, one per declared argument in order, undefined where none was
   * given: words fill the declared arguments from the first, so `make` decides what a shorter line
   * means (`send --name N MESSAGE` gives its one word to the first argument).
   */
  readonly arguments: ReadonlyArray<unknown>
}

export interface CommandSpec {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  /**
   * The positional arguments, in order. Every one after the first is optional as written: the
   * parser fills them from the first, and `make` says which combinations mean something.
   */
  readonly arguments?: ReadonlyArray<ArgumentSpec>
  readonly subcommands?: ReadonlyArray<CommandSpec>
  /** The command a leaf's given options and argument stand for, or the sentence of the usage error they are. */
  readonly make?: (given: Given) => Command | string
}

/** The shells `--completions` writes a script for; `sh` is bash's, as in @effect/cli. */
export const completionShells = ["bash", "fish", "sh", "zsh"] as const
export type CompletionShell = (typeof completionShells)[number]

const text = (placeholder: string): ValueSpec => ({ placeholder, completion: "text", parse: ok })

/** A directory: an empty one would silently become the current one, and a settings update would write there. */
const directory = (option: string): ValueSpec => ({
  placeholder: "DIR",
  completion: "directory",
  parse: (dir) => (dir.length > 0 ? ok(dir) : refused(`${option} needs a directory, not an empty string`))
})

const revision: ValueSpec = {
  placeholder: "REVISION",
  completion: "text",
  // A mistyped revision is a usage error (exit 2), not another writer's change (exit 5).
  parse: (rev) => {
    const parsed = parseRevision(rev)
    return parsed === undefined
      ? refused(`--expect-revision must be a revision from \`settings get\`: 64 hexadecimal digits, not ${quotedWord(rev)}`)
      : ok(parsed)
  }
}

const interval: ValueSpec = {
  placeholder: "MS",
  completion: "text",
  // A zero or negative interval would re-read the registry in a busy loop.
  parse: (ms) => {
    const parsed = parseInterval(ms)
    return parsed === undefined
      ? refused(`--interval must be a positive number of milliseconds, at most ${maxIntervalMillis}, not ${quotedWord(ms)}`)
      : ok(parsed)
  }
}

const statuses = ["idle", "busy", "waiting"] as const
const waitStates = [...statuses, "gone"] as const

const statusValue: ValueSpec = {
  placeholder: "STATE",
  completion: statuses,
  parse: (word) => ((statuses as ReadonlyArray<string>).includes(word) ? ok(word) : refused(`--status takes idle, busy or waiting, not ${quotedWord(word)}`))
}

const waitStateValue: ValueSpec = {
  placeholder: "STATE",
  completion: waitStates,
  parse: (
    word
  ) => ((waitStates as ReadonlyArray<string>).includes(word) ? ok(word) : refused(`--until takes idle, busy, waiting or gone, not ${quotedWord(word)}`))
}

const timeoutValue: ValueSpec = {
  placeholder: "MS",
  completion: "text",
  // A zero timeout would end a wait, or stop a relay, before it began.
  parse: (ms) => {
    const parsed = parseInterval(ms)
    return parsed === undefined
      ? refused(`--timeout must be a positive number of milliseconds, at most ${maxIntervalMillis}, not ${quotedWord(ms)}`)
      : ok(parsed)
  }
}

const isPolicy = (word: string): word is InboundPolicy => (inboundPolicyNames as ReadonlyArray<string>).includes(word)

const policyValue: ValueSpec = {
  placeholder: "VALUE",
  completion: inboundPolicyNames,
  // A value outside the three is a usage error (exit 2), decided before anything runs.
  parse: (word) => (isPolicy(word) ? ok(word) : refused(`settings set takes accept, hold or refuse, not ${quotedWord(word)}`))
}

const senderModes = ["bypass", "prompting"] as const

const senderModeValue: ValueSpec = {
  placeholder: "MODE",
  completion: senderModes,
  parse: (word) =>
    (senderModes as ReadonlyArray<string>).includes(word) ? ok(word) : refused(`--sender-mode takes bypass or prompting, not ${quotedWord(word)}`)
}

const json: OptionSpec = { name: "--json", description: "print JSON on stdout instead of a table" }

const expectRevision: OptionSpec = {
  name: "--expect-revision",
  description: "fail with exit 5 unless the file is still at this revision (from `settings get`)",
  value: revision
}

const throughLink: OptionSpec = {
  name: "--through-link",
  description: "when settings.json is a symbolic link, update the file it points to (one hop, as Claude Code writes)"
}

const sessionId = (description: string): ArgumentSpec => ({ name: "SESSION_ID", description, required: false, value: text("SESSION_ID") })

const asString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

export const commandTable: CommandSpec = {
  name: "claude-peers",
  description:
    "Find the Claude Code sessions that are really running, read or update the user-level policy for messages between them, and tell the policy in effect for each.",
  options: [
    {
      name: "--claude-home",
      description: "the Claude home (default: $CLAUDE_CONFIG_DIR, then ~/.claude); more than one: read them all",
      value: directory("--claude-home"),
      repeatable: true
    },
    {
      name: "--all-homes",
      description: "read every Claude home: the default one, $CLAUDE_CONFIG_DIR's and every live Claude Code process's"
    },
    {
      name: "--completions",
      description: "print a completion script for bash, fish, sh or zsh",
      value: { placeholder: "SHELL", completion: completionShells, parse: ok },
      builtIn: true
    },
    { name: "--version", description: "print the version", builtIn: true }
  ],
  subcommands: [
    {
      name: "list",
      description: "list the live Claude Code sessions, sorted by pid",
      options: [json],
      make: () => ({ _tag: "list" })
    },
    {
      name: "inspect",
      description: "show every registry file with its verdict",
      options: [json],
      make: () => ({ _tag: "inspect" })
    },
    {
      name: "resolve",
      description: "resolve a session id (or --name) to its one live session, or refuse",
      options: [
        { name: "--name", description: "resolve by registry name (compared as Claude Code compares names)", value: text("NAME") },
        {
          name: "--allow-shared-name",
          description: "resolve SESSION_ID even when its name is shared with another live session; its address is then its socket"
        },
        json
      ],
      arguments: [sessionId("the session id to resolve")],
      // Exactly one question: an id and a name together would be two questions with one answer.
      make: (given) => {
        const id = asString(given.arguments[0])
        const name = asString(given.value("--name"))
        const allowSharedName = given.flag("--allow-shared-name")
        if (id === undefined && name === undefined) return "resolve takes a SESSION_ID or --name NAME"
        if (id !== undefined && name !== undefined) return "resolve takes a SESSION_ID or --name NAME, not both"
        // No session has an empty id: an empty argument is a mistake (an unset shell variable), not a question.
        if (id === "") return "resolve takes a SESSION_ID, and an empty one names no session"
        if (name !== undefined) {
          return allowSharedName
            ? "--allow-shared-name applies to a SESSION_ID: a name shared by two live sessions addresses neither"
            : { _tag: "resolve", query: { name }, allowSharedName: false }
        }
        return { _tag: "resolve", query: { sessionId: id! }, allowSharedName }
      }
    },
    {
      name: "settings",
      description: "read or update crossSessionInbound in the user settings file (managed, project and command-line settings can override it)",
      options: [],
      subcommands: [
        {
          name: "get",
          description: "show the user-level crossSessionInbound and the file's revision",
          options: [json],
          make: () => ({ _tag: "settings get" })
        },
        {
          name: "set",
          description: "set the user-level crossSessionInbound, keeping every other byte of the file",
          options: [expectRevision, throughLink, json],
          arguments: [{ name: "VALUE", description: "accept, hold or refuse", required: true, value: policyValue }],
          make: (given) => ({
            _tag: "settings set",
            value: given.arguments[0] as InboundPolicy,
            expectRevision: asString(given.value("--expect-revision")),
            throughLink: given.flag("--through-link")
          })
        },
        {
          name: "reset",
          description: "remove the user-level crossSessionInbound (Claude Code then decides by permission modes)",
          options: [expectRevision, throughLink, json],
          make: (given) => ({
            _tag: "settings reset",
            expectRevision: asString(given.value("--expect-revision")),
            throughLink: given.flag("--through-link")
          })
        }
      ]
    },
    {
      name: "watch",
      description: "print a line for every session that appears, changes or is gone, until interrupted",
      options: [
        {
          name: "--interval",
          description: "how often, in ms, live sessions are re-checked for a process that died without touching its file (default 2000)",
          value: interval
        },
        { name: "--name", description: "only the sessions with this registry name (compared as Claude Code compares names)", value: text("NAME") },
        { name: "--session", description: "only the session with this session id", value: text("SESSION_ID") },
        {
          name: "--status",
          description: "only sessions in this status: idle, busy or waiting (repeatable: any of them); a change that takes one out is its last event",
          value: statusValue,
          repeatable: true
        },
        json
      ],
      make: (given) => {
        const ms = given.value("--interval")
        const sessionId = asString(given.value("--session"))
        if (sessionId === "") return "watch --session takes a SESSION_ID, and an empty one names no session"
        return {
          _tag: "watch",
          intervalMillis: typeof ms === "number" ? ms : undefined,
          filter: { name: asString(given.value("--name")), sessionId, statuses: given.values("--status") as ReadonlyArray<Status> }
        }
      }
    },
    {
      name: "wait",
      description: "wait until one session (resolved once, as resolve does) is idle, busy, waiting or gone; exit 12 on timeout, 13 if it ends first",
      options: [
        { name: "--name", description: "the session with this registry name (compared as Claude Code compares names)", value: text("NAME") },
        {
          name: "--until",
          description: "a state to wait for: idle, busy, waiting or gone (repeatable: any of them)",
          value: waitStateValue,
          repeatable: true
        },
        { name: "--timeout", description: "give up after this many ms with exit 12 (default: wait for as long as it takes)", value: timeoutValue },
        json
      ],
      arguments: [sessionId("the session id to wait on")],
      // One session, and at least one state: a wait for nothing would never return.
      make: (given) => {
        const id = asString(given.arguments[0])
        const name = asString(given.value("--name"))
        const until = given.values("--until") as ReadonlyArray<WaitState>
        const timeout = given.value("--timeout")
        if (id === undefined && name === undefined) return "wait takes a SESSION_ID or --name NAME"
        if (id !== undefined && name !== undefined) return "wait takes a SESSION_ID or --name NAME, not both"
        if (id === "") return "wait takes a SESSION_ID, and an empty one names no session"
        if (until.length === 0) return "wait needs --until STATE (idle, busy, waiting or gone), once or more"
        return {
          _tag: "wait",
          query: id !== undefined ? { sessionId: id } : { name: name! },
          until: [...new Set(until)],
          timeoutMillis: typeof timeout === "number" ? timeout : undefined
        }
      }
    },
    {
      name: "policy",
      description:
        "tell the inbound policy in effect for each live session (or one), from managed, command-line, user and project settings, and how sure that is",
      options: [
        {
          name: "--name",
          description: "the session with this registry name (compared as Claude Code compares names)",
          value: text("NAME")
        },
        {
          name: "--managed-dir",
          description: "the managed settings directory (default: the platform's, /etc/claude-code on Linux)",
          value: directory("--managed-dir")
        },
        {
          name: "--sender-mode",
          description: "answer for a sender of this permission-mode class only: bypass, or prompting (every other mode)",
          value: senderModeValue
        },
        {
          name: "--allow-shared-name",
          description: "tell SESSION_ID's policy even when its name is shared with another live session (as send --allow-shared-name sends)"
        },
        json
      ],
      arguments: [sessionId("the session whose policy to tell (default: every live session)")],
      // At most one session: an id and a name together would be two questions with one answer.
      make: (given) => {
        const id = asString(given.arguments[0])
        const name = asString(given.value("--name"))
        if (id !== undefined && name !== undefined) return "policy takes a SESSION_ID or --name NAME, not both"
        if (id === "") return "policy takes a SESSION_ID, and an empty one names no session"
        const allowSharedName = given.flag("--allow-shared-name")
        if (allowSharedName && id === undefined) {
          return "--allow-shared-name applies to a SESSION_ID: a name shared by two live sessions addresses neither"
        }
        const query = id !== undefined ? { sessionId: id } : name !== undefined ? { name } : undefined
        const senderMode = asString(given.value("--sender-mode"))
        return {
          _tag: "policy",
          query,
          managedDirectory: asString(given.value("--managed-dir")),
          senderMode: senderMode === "bypass" || senderMode === "prompting" ? senderMode : undefined,
          allowSharedName
        }
      }
    },
    {
      name: "send",
      description:
        "send a message into one live session through Claude Code's own SendMessage, unless its policy refuses or would hold it, and tell what became of it",
      options: [
        { name: "--name", description: "the session with this registry name (compared as Claude Code compares names)", value: text("NAME") },
        { name: "--allow-hold", description: "send even when the session would hold the message for its user's approval (it may expire unseen)" },
        {
          name: "--allow-shared-name",
          description: "send to SESSION_ID even when its name is shared with another live session (the message goes to its socket)"
        },
        { name: "--timeout", description: "how long, in ms, the relay may take to get a receipt (default 30000)", value: timeoutValue },
        json
      ],
      arguments: [
        sessionId("the session to send to"),
        { name: "MESSAGE", description: "the message, or - to read it from standard input", required: false, value: text("MESSAGE") }
      ],
      // One session and one message: with --name, the one word is the message.
      make: (given) => {
        const name = asString(given.value("--name"))
        const [first, second] = given.arguments.map(asString)
        const id = name === undefined ? first : undefined
        const word = name === undefined ? second : first
        if (name !== undefined && second !== undefined) return "send takes a SESSION_ID or --name NAME, not both"
        if (name === undefined && first === undefined) return "send takes a SESSION_ID or --name NAME, then the MESSAGE (or - for standard input)"
        if (word === undefined) return "send takes the MESSAGE after the session (or - to read it from standard input)"
        if (id === "") return "send takes a SESSION_ID, and an empty one names no session"
        const allowSharedName = given.flag("--allow-shared-name")
        if (name !== undefined && allowSharedName) {
          return "--allow-shared-name applies to a SESSION_ID: a name shared by two live sessions addresses neither"
        }
        // The sentence says what is wrong with the message, never the message itself.
        const problem = word === "-" ? undefined : messageProblem(word)
        if (problem !== undefined) return messageProblemSentence(problem, word.length)
        // Node reads a command line's bytes that are not UTF-8 as U+FFFD: sending that would send
        // another text than the one typed, so the character is refused where it cannot be told apart.
        if (word.includes("\uFFFD")) {
          return "the message holds U+FFFD, which is what a command line makes of bytes that are not UTF-8, and a message that is not valid UTF-8 is not sent: give one that holds U+FFFD on standard input (send ID -)"
        }
        const ms = given.value("--timeout")
        return {
          _tag: "send",
          query: name !== undefined ? { name } : { sessionId: id! },
          message: word === "-" ? { _tag: "stdin" } : { _tag: "text", text: word },
          allowHold: given.flag("--allow-hold"),
          allowSharedName,
          timeoutMillis: typeof ms === "number" ? ms : undefined
        }
      }
    }
  ]
}

/** The command the path of subcommand names leads to, or undefined. */
export const commandAt = (path: ReadonlyArray<string>, tree: CommandSpec = commandTable): CommandSpec | undefined => {
  let at: CommandSpec | undefined = tree
  for (const name of path) at = at?.subcommands?.find((sub) => sub.name === name)
  return at
}

/**
 * The invocation a command line makes of the program's options and its command, or the sentence of
 * the usage error it is: `--claude-home` given more than once, or `--all-homes`, reads several homes,
 * and a settings command, which reads and writes one home's file, then refuses.
 */
export const invocationOf = (program: Given, json: boolean, command: Command): Invocation | string => {
  const homes = program.values("--claude-home").filter((home): home is string => typeof home === "string")
  const allHomes = program.flag("--all-homes")
  const several = allHomes || homes.length > 1
  if (several && command._tag.startsWith("settings")) {
    return `${command._tag} reads and writes the settings file of one Claude home: give one --claude-home, not ${allHomes ? "--all-homes" : `${homes.length}`}`
  }
  return { claudeHome: homes[0], json, command, ...(several ? { claudeHomes: homes, allHomes } : {}) }
}
