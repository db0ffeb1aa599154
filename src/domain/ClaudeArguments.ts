/**
 * What a running Claude Code process was told on its command line about its settings, read from
 * its argument vector (`/proc/<pid>/cmdline` split on NUL) the way Claude Code 2.1.332 reads its own.
 *
 * Claude Code does not take `--settings` and `--setting-sources` from its option parser: it scans
 * the raw argument vector before the parser runs. That scan differs from a generic option parser
 * in ways that change the answer, so it is copied here rule for rule:
 * - the last occurrence of a flag wins (`--settings a.json --settings b.json` loads `b.json`);
 * - `--flag value` takes the next word whatever it looks like, `--flag=value` the rest of the word;
 * - a bare `--` ends the options: nothing after it is a flag;
 * - the value of another flag is never read as a flag (`--model --settings` names a model), which
 *   needs the list of Claude Code's flags that take a value, below. A flag missing from those
 *   lists makes its value scanned as a word, as Claude Code itself would scan it.
 */

/** Value flags that also take every following word up to the next option (`--add-dir a b c`). */
const listFlags: ReadonlySet<string> = new Set([
  "--allowedTools",
  "--allowed-tools",
  "--disallowedTools",
  "--disallowed-tools",
  "--tools",
  "--add-dir",
  "--mcp-config",
  "--betas",
  "--file",
  "--channels",
  "--dangerously-load-development-channels"
])

/** Flags whose next word is their value (the list flags among them). */
const valueFlags: ReadonlySet<string> = new Set([
  ...listFlags,
  "--prefill",
  "--prefill-b64",
  "--deep-link-repo",
  "--deep-link-last-fetch",
  "--deep-link-cwd-b64",
  "--handle-uri",
  "--settings",
  "--managed-settings",
  "--initialize-fields",
  "--setting-sources",
  "--client-data-url",
  "--watch-artifact",
  "--watch-artifact-no-autoreact",
  "--team-name",
  "--agent-id",
  "--agent-name",
  "--agent-color",
  "--parent-session-id",
  "--lead-verify-key",
  "--agent-type",
  "--model",
  "--agent",
  "--routine",
  "--effort",
  "--fast-mode",
  "--permission-mode",
  "--inherit-permission-mode",
  "--proactivity",
  "--debug-file",
  "--system-prompt",
  "--system-prompt-file",
  "--append-system-prompt",
  "--append-system-prompt-file",
  "--system-prompt-snapshot",
  "--append-subagent-system-prompt",
  "--append-subagent-system-prompt-file",
  "--plan-mode-instructions",
  "--permission-prompt-tool",
  "--permission-prompts",
  "--json-schema",
  "--fallback-model",
  "--advisor",
  "--agents",
  "--name",
  "-n",
  "--plugin-dir",
  "--plugin-dir-no-mcp",
  "--plugin-url",
  "--remote-control-session-name-prefix",
  "--exec",
  "-m",
  "--sdk-url",
  "--thinking",
  "--thinking-display",
  "--max-thinking-tokens",
  "--max-turns",
  "--max-budget-usd",
  "--task-budget",
  "--autocompact",
  "--rewind-files",
  "--resume-session-at",
  "--resume-drops-turn",
  "--workload",
  "--output-format",
  "--input-format",
  "--teammate-mode",
  "--messaging-socket-path",
  "--session-id",
  "--environment",
  "--pool",
  "--ref",
  "--on-branch",
  "--correlation-id",
  "--metadata",
  "--forward-home-settings",
  "--project-config-root",
  "--attach-serve",
  "--runner-declares",
  "--session-began-as-copy"
])

/** Flags whose value is optional: the next word is theirs unless it looks like an option. */
const optionalValueFlags: ReadonlySet<string> = new Set([
  "-d",
  "--debug",
  "-r",
  "--resume",
  "--from-pr",
  "-w",
  "--worktree",
  "--teleport",
  "--cloud",
  "--remote",
  "--project",
  "--remote-control",
  "--rc",
  "--prompt-suggestions"
])

/** A word that reads as an option: `-` followed by anything (a lone `-` is a value). */
export const looksLikeOption = (word: string): boolean => word.length > 1 && word.startsWith("-")

/** The index of the last word that belongs to the flag at `index` (the flag itself when it takes none). */
const lastWordOf = (argv: ReadonlyArray<string>, index: number): number => {
  const word = argv[index]
  if (word === undefined) return index
  if (optionalValueFlags.has(word)) {
    const next = argv[index + 1]
    return next !== undefined && !looksLikeOption(next) ? index + 1 : index
  }
  if (!valueFlags.has(word)) return index
  let last = index + 1
  if (listFlags.has(word)) {
    while (last + 1 < argv.length && !looksLikeOption(argv[last + 1]!)) last++
  }
  return last
}

/** Every value given to `flag`, in order. `argv` holds the options only, without the executable. */
export const flagValues = (flag: string, argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const values: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    if (word === "--") break
    if (word.startsWith(`${flag}=`)) {
      values.push(word.slice(flag.length + 1))
    } else if (word === flag && i + 1 < argv.length) {
      values.push(argv[i + 1]!)
      i++
    } else {
      i = lastWordOf(argv, i)
    }
  }
  return values
}

/** The value Claude Code uses for `flag`: the last one given, or undefined. */
export const lastFlagValue = (flag: string, argv: ReadonlyArray<string>): string | undefined => flagValues(flag, argv).at(-1)

/** Whether a flag without a value (`--restricted`) appears among the options. */
export const hasFlag = (flag: string, argv: ReadonlyArray<string>): boolean => {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    if (word === "--") return false
    if (word === flag) return true
    i = lastWordOf(argv, i)
  }
  return false
}

/**
 * Where Claude Code's own options begin in a process's argument vector. The native binary is
 * `claude ARGS…`; the JavaScript build runs as `node cli.js ARGS…` (or under bun). Claude Code
 * scans its whole `process.argv`, whose first two entries are the runtime and the script, neither
 * of which can read as one of its flags, so skipping them changes nothing but clarity.
 */
export const optionsOf = (cmdline: ReadonlyArray<string>): ReadonlyArray<string> => {
  const first = cmdline[0] ?? ""
  // The name after the last separator of either kind.
  const program = first.slice(Math.max(first.lastIndexOf("/"), first.lastIndexOf("\\")) + 1)
  return cmdline.slice(/^(node|nodejs|bun)(\.exe)?$/i.test(program) ? 2 : 1)
}

/**
 * `--settings` takes a file or JSON text. Claude Code trims the value and treats it as JSON text
 * when it then starts with `{` and ends with `}`; anything else is a path, used untrimmed, and a
 * relative path is resolved against the directory Claude Code was started in.
 */
export type SettingsFlag =
  | { readonly _tag: "JsonText"; readonly text: string }
  | { readonly _tag: "File"; readonly path: string }

export const settingsFlagOf = (value: string): SettingsFlag => {
  const trimmed = value.trim()
  return trimmed.startsWith("{") && trimmed.endsWith("}") ? { _tag: "JsonText", text: trimmed } : { _tag: "File", path: value }
}

/** The sources `--setting-sources` can name; the flag and managed sources always count. */
export type FolderOrUserSource = "userSettings" | "projectSettings" | "localSettings"

const sourceNames: Readonly<Record<string, FolderOrUserSource>> = {
  user: "userSettings",
  project: "projectSettings",
  local: "localSettings"
}

/**
 * `--setting-sources user,local`: comma-separated, each name trimmed, only `user`, `project` and
 * `local`. The empty string names none. Any other name (an empty one between commas included)
 * makes Claude Code exit at start, so a live process should never carry one: it is kept as
 * `Invalid` rather than guessed at.
 */
export type SettingSources =
  | { readonly _tag: "Listed"; readonly sources: ReadonlyArray<FolderOrUserSource> }
  | { readonly _tag: "Invalid"; readonly text: string }

export const settingSourcesOf = (text: string): SettingSources => {
  if (text === "") return { _tag: "Listed", sources: [] }
  const sources: Array<FolderOrUserSource> = []
  for (const name of text.split(",").map((part) => part.trim())) {
    const source = Object.hasOwn(sourceNames, name) ? sourceNames[name] : undefined
    if (source === undefined) return { _tag: "Invalid", text }
    sources.push(source)
  }
  return { _tag: "Listed", sources }
}

/** What a Claude Code command line says about settings. */
export interface ClaudeArguments {
  /** The `--settings` value in effect, or null when none was given. */
  readonly settings: SettingsFlag | null
  /** The `--setting-sources` value in effect, or null when none was given (all sources count). */
  readonly settingSources: SettingSources | null
  /** `--restricted`: Claude Code then reads no user, project or local settings at all. */
  readonly restricted: boolean
  /** `--project-config-root`: the folder a host names for the project's settings, as given. */
  readonly projectConfigRoot: string | null
  /**
   * `--managed-settings`: JSON a parent Claude Code process hands down as managed settings. How it
   * combines with the managed files depends on rules of the parent's choosing, so its effect is
   * not computed here, only noticed.
   */
  readonly parentManagedSettings: boolean
  /** `-w`/`--worktree`: the session moved into a worktree after it read its `--settings`. */
  readonly worktree: boolean
}

export const claudeArgumentsOf = (cmdline: ReadonlyArray<string>): ClaudeArguments => {
  const argv = optionsOf(cmdline)
  const settings = lastFlagValue("--settings", argv)
  const sources = lastFlagValue("--setting-sources", argv)
  return {
    // An empty `--settings ""` is ignored by Claude Code, as if absent.
    settings: settings === undefined || settings === "" ? null : settingsFlagOf(settings),
    settingSources: sources === undefined ? null : settingSourcesOf(sources),
    restricted: hasFlag("--restricted", argv),
    projectConfigRoot: lastFlagValue("--project-config-root", argv) ?? null,
    parentManagedSettings: (lastFlagValue("--managed-settings", argv) ?? "") !== "",
    worktree: hasFlag("-w", argv) || hasFlag("--worktree", argv) || flagValues("--worktree", argv).length > 0
  }
}
