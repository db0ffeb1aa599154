/**
 * `claude-peers --completions bash|zsh|fish|sh`: a completion script made from `CompletionTree.ts`.
 *
 * It replaces @effect/cli 0.77's own scripts, which do not complete this program (issue 9): bash's
 * never gets past the first word (its `case` labels spell the program `claude__peers`, and a
 * nested label such as `claude__peers,settings,set` is never the `claude__peers__settings,set` it
 * is tested against); zsh's calls `_claude-peers__settings_commands` but defines
 * `_claude__peers__settings_commands`, takes `--claude-home` for a flag, and gives `settings set`
 * the action `CHOICE:(…)`; fish's offers no subcommand after `--claude-home DIR` and no directory
 * for it.
 *
 * Every shell completes by the same rules, so the one walk below is written in each shell's syntax:
 * - The words before the cursor are read from the program on: a subcommand's name moves into that
 *   command; an option that takes a value takes the next word with it; any other word is an
 *   argument. A word is only a subcommand where its parent expects one, so an option's value that
 *   happens to be spelled `list` changes nothing.
 * - After an option that takes a value: a directory, one of its choices, or nothing (free text).
 * - A word that starts with `-`: the options of the command reached.
 * - Any other word: the command's subcommands, or its first argument's values until one is given;
 *   its options when it has neither.
 */
import type { Reading } from "./Argv.js"
import { type CommandSpec, commandTree, type CompletionShell, completionShells, type Place, placesOf } from "./CompletionTree.js"
import { printLine } from "./Output.js"

/**
 * What `--completions SHELL` (or `--completions=SHELL`, wherever it stands) asks for: the value as
 * typed, and the shell it names (undefined for an unknown one, which is a usage error); undefined
 * without the option. @effect/cli takes it as a built-in option, so every spelling is answered here.
 */
export const requestedCompletionShell = (reading: Reading): { readonly value: string; readonly shell: CompletionShell | undefined } | undefined => {
  const given = reading.options[0]!.find((option) => option.name === "--completions")
  if (given === undefined) return undefined
  const value = given.value ?? ""
  return { value, shell: completionShells.find((known) => known === value) }
}

/** The script on stdout, as every command prints its data. */
export const printCompletionScript = (shell: CompletionShell) => printLine(completionScript(shell))

export const completionScript = (shell: CompletionShell): string => {
  const places = checkedPlaces(commandTree)
  switch (shell) {
    case "bash":
    case "sh":
      return bashScript(commandTree.name, places)
    case "zsh":
      return zshScript(commandTree.name, places)
    case "fish":
      return fishScript(commandTree.name, places)
  }
}

/**
 * Names are written into shell code as they are. One with any other character than these would
 * need quoting in three syntaxes; it is refused here, where it is a mistake in the tree.
 */
const shellWord = /^(--)?[a-z0-9][a-z0-9-]*$/

const checkedPlaces = (tree: CommandSpec): ReadonlyArray<Place> => {
  const places = placesOf(tree)
  for (const { command } of places) {
    const words = [command.name, ...command.options.map((o) => o.name), ...(command.argumentValues ?? [])]
    const values = command.options.flatMap((o) => (Array.isArray(o.value) ? o.value : []))
    const unsafe = [...words, ...values].find((word) => !shellWord.test(word))
    if (unsafe !== undefined) throw new Error(`completion: ${JSON.stringify(unsafe)} is not a word a script can hold unquoted`)
  }
  return places
}

/** The walk's data: `path:word` keys, as both the sh and fish walks test them. */
interface Walk {
  /** `path:--option` of every option that takes the next word. */
  readonly valueOptions: ReadonlyArray<string>
  /** `path:subcommand` and the path it leads to. */
  readonly descents: ReadonlyArray<{ readonly key: string; readonly path: string }>
  readonly directoryOptions: ReadonlyArray<string>
  readonly choiceOptions: ReadonlyArray<{ readonly key: string; readonly values: ReadonlyArray<string> }>
  /** What each command offers: its options, and the words its first position takes. */
  readonly offers: ReadonlyArray<{ readonly path: string; readonly options: ReadonlyArray<string>; readonly next: ReadonlyArray<string> }>
}

const walkOf = (places: ReadonlyArray<Place>): Walk => {
  const options = places.flatMap(({ command, path }) => command.options.map((option) => ({ key: `${path}:${option.name}`, option })))
  return {
    valueOptions: options.filter(({ option }) => option.value !== undefined).map(({ key }) => key),
    descents: places.flatMap(({ command, path }) =>
      (command.subcommands ?? []).map((sub) => ({ key: `${path}:${sub.name}`, path: path === "" ? sub.name : `${path} ${sub.name}` }))
    ),
    directoryOptions: options.filter(({ option }) => option.value === "directory").map(({ key }) => key),
    choiceOptions: options.flatMap(({ key, option }) => (Array.isArray(option.value) ? [{ key, values: option.value }] : [])),
    offers: places.map(({ command, path }) => ({
      path,
      options: command.options.map((o) => o.name),
      next: [...(command.subcommands ?? []).map((sub) => sub.name), ...(command.argumentValues ?? [])]
    }))
  }
}

/** `"a"|"b") body ;;`, or nothing for no patterns (an empty pattern list is a syntax error). */
const shCase = (indent: string, patterns: ReadonlyArray<string>, body: string): ReadonlyArray<string> =>
  patterns.length === 0 ? [] : [`${indent}${patterns.map((p) => `"${p}"`).join("|")}) ${body} ;;`]

/** The walk in the syntax bash and zsh share; it sets the caller's `expected`. */
const shWalk = (walk: Walk): ReadonlyArray<string> => [
  "# Sets the caller's `expected` to what the word being completed ($1) can be after the words",
  "# before it ($2 on): the words it can be, or `:directory`.",
  "__claude_peers_expected() {",
  "    local cur=$1 cmd=\"\" pending=\"\" chosen=\"\" word",
  "    shift",
  "    for word in \"$@\"; do",
  "        if [[ -n $pending ]]; then",
  "            # bash splits `--option=value` into three words at the `=` (COMP_WORDBREAKS).",
  "            [[ $word == \"=\" ]] || pending=\"\"",
  "            continue",
  "        fi",
  "        case \"$cmd:$word\" in",
  ...shCase("            ", walk.valueOptions, "pending=$word"),
  ...walk.descents.flatMap(({ key, path }) => shCase("            ", [key], `cmd="${path}" chosen=""`)),
  "            *:-*) ;;",
  "            *) chosen=$word ;;",
  "        esac",
  "    done",
  "    if [[ -n $pending ]]; then",
  "        case \"$cmd:$pending\" in",
  ...shCase("            ", walk.directoryOptions, "expected=:directory"),
  ...walk.choiceOptions.flatMap(({ key, values }) => shCase("            ", [key], `expected="${values.join(" ")}"`)),
  "            *) expected=\"\" ;;",
  "        esac",
  "        return 0",
  "    fi",
  "    local options=\"\" next=\"\"",
  "    case \"$cmd\" in",
  ...walk.offers.flatMap(({ next, options, path }) => shCase("        ", [path], `options="${options.join(" ")}" next="${next.join(" ")}"`)),
  "    esac",
  "    if [[ $cur == -* || -n $chosen || -z $next ]]; then expected=$options; else expected=$next; fi",
  "}"
]

const bashScript = (program: string, places: ReadonlyArray<Place>): string =>
  [
    `# ${program} completion for bash: in ~/.bashrc, \`source <(${program} --completions bash)\`.`,
    ...shWalk(walkOf(places)),
    "",
    "_claude_peers() {",
    "    local cur=${COMP_WORDS[COMP_CWORD]} expected=\"\" line",
    "    # Right after `--option=` bash's word is the `=`; what is completed is the empty word after it.",
    "    if [[ $cur == \"=\" ]]; then cur=\"\"; fi",
    "    __claude_peers_expected \"$cur\" \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"",
    "    COMPREPLY=()",
    "    if [[ $expected == :directory ]]; then",
    "        # A directory's name may hold spaces: read one a line, and have bash quote it as a file name.",
    "        compopt -o filenames 2>/dev/null",
    "        while IFS= read -r line; do COMPREPLY+=(\"$line\"); done < <(compgen -d -- \"$cur\")",
    "    else",
    "        COMPREPLY=($(compgen -W \"$expected\" -- \"$cur\"))",
    "    fi",
    "}",
    `complete -F _claude_peers ${program}`
  ].join("\n")

const zshScript = (program: string, places: ReadonlyArray<Place>): string =>
  [
    `#compdef ${program}`,
    `# ${program} completion for zsh: in ~/.zshrc after \`compinit\`, \`source <(${program} --completions zsh)\`;`,
    `# or save it as \`_${program}\` in a directory of $fpath.`,
    ...shWalk(walkOf(places)),
    "",
    // No `emulate -L zsh`: it would also reset the options compsys sets for `_directories` (extendedglob).
    "_claude_peers() {",
    "    local cur=$words[CURRENT] expected=\"\"",
    "    local -a before",
    "    before=(\"${(@)words[2,CURRENT-1]}\")",
    "    # `--option=value`: the value after the `=` is completed as the option's next word.",
    "    if [[ $cur == --*=* ]]; then",
    "        before+=(\"${cur%%=*}\")",
    "        compset -P '*='",
    "        cur=${cur#*=}",
    "    fi",
    "    __claude_peers_expected \"$cur\" \"${before[@]}\"",
    "    if [[ $expected == :directory ]]; then",
    "        _directories",
    "    else",
    "        compadd -- ${=expected}",
    "    fi",
    "}",
    "",
    "# Autoloaded from $fpath, this file is the completion function's body; sourced, it registers it.",
    `if [[ $funcstack[1] == _${program} ]]; then`,
    "    _claude_peers \"$@\"",
    "else",
    `    compdef _claude_peers ${program}`,
    "fi"
  ].join("\n")

/** `case 'a' 'b'` and its body, or nothing for no patterns. */
const fishCase = (patterns: ReadonlyArray<string>, body: ReadonlyArray<string>): ReadonlyArray<string> =>
  patterns.length === 0 ? [] : [`            case ${patterns.map((p) => `'${p}'`).join(" ")}`, ...body.map((line) => `                ${line}`)]

/** `set name a b`, or nothing for no words (`set name` alone would still be an empty list, but says less). */
const fishSet = (name: string, words: ReadonlyArray<string>): ReadonlyArray<string> => (words.length === 0 ? [] : [`set ${name} ${words.join(" ")}`])

const fishScript = (program: string, places: ReadonlyArray<Place>): string => {
  const walk = walkOf(places)
  return [
    `# ${program} completion for fish: \`${program} --completions fish > ~/.config/fish/completions/${program}.fish\`.`,
    "function __claude_peers_complete",
    "    set -l words (commandline -opc)",
    "    set -e words[1]",
    "    set -l cur (commandline -ct)",
    "    set -l prefix ''",
    "    # `--option=value`: the value after the `=` is completed as the option's next word.",
    "    if string match -qr -- '^--[^=]+=' $cur",
    "        set prefix (string match -r -- '^--[^=]+=' $cur)",
    "        set -a words (string replace -r -- '=$' '' $prefix)",
    "        set cur (string replace -r -- '^--[^=]+=' '' $cur)",
    "    end",
    "    set -l cmd ''",
    "    set -l pending ''",
    "    set -l chosen ''",
    "    for word in $words",
    "        if test -n \"$pending\"",
    "            set pending ''",
    "            continue",
    "        end",
    "        switch \"$cmd:$word\"",
    ...fishCase(walk.valueOptions, ["set pending $word"]),
    ...walk.descents.flatMap(({ key, path }) => fishCase([key], [`set cmd '${path}'`, "set chosen ''"])),
    "            case '*:-*'",
    "            case '*'",
    "                set chosen $word",
    "        end",
    "    end",
    "    if test -n \"$pending\"",
    "        switch \"$cmd:$pending\"",
    ...fishCase(walk.directoryOptions, ["for dir in (__fish_complete_directories \"$cur\")", "    echo $prefix$dir", "end"]),
    ...walk.choiceOptions.flatMap(({ key, values }) => fishCase([key], [`for value in ${values.join(" ")}`, "    echo $prefix$value", "end"])),
    "        end",
    "        return",
    "    end",
    "    set -l options",
    "    set -l next",
    "    switch \"$cmd\"",
    ...walk.offers.flatMap(({ next, options, path }) => fishCase([path], [...fishSet("options", options), ...fishSet("next", next)])),
    "    end",
    "    if string match -q -- '-*' \"$cur\"; or test -n \"$chosen\"; or not set -q next[1]",
    "        printf '%s\\n' $options",
    "    else",
    "        printf '%s\\n' $next",
    "    end",
    "end",
    `complete -c ${program} -f -a '(__claude_peers_complete)'`
  ].join("\n")
}
