/**
 * Runs a completion script in the real shell it is for and returns what that shell offers for a
 * command line: bash calls the function the script registers with `complete -F` as bash would,
 * zsh completes on a pseudo-terminal (`zsh-complete.zsh`), fish answers `complete -C`.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"

export type Shell = "bash" | "zsh" | "fish"

/**
 * bash's COMP_WORDS for these words: COMP_WORDBREAKS makes the `=` of `--option=value` a word of
 * its own, and right after `--option=` the word being completed is the `=` itself.
 */
const bashWords = (words: ReadonlyArray<string>): ReadonlyArray<string> =>
  words.flatMap((word) => {
    const at = word.indexOf("=")
    if (at < 0) return [word]
    const value = word.slice(at + 1)
    return value === "" ? [word.slice(0, at), "="] : [word.slice(0, at), "=", value]
  })

const bashHarness = path.resolve(import.meta.dirname, "bash-complete.sh")
const zshHarness = path.resolve(import.meta.dirname, "zsh-complete.zsh")

export interface CompletionRun {
  readonly script: string
  /** The directory the shell runs in, where file names are completed. */
  readonly cwd: string
  /** The shells' HOME, apart from `cwd`: fish writes its history and variables there. */
  readonly home: string
  /** compinit's cache file, written by the first zsh run. */
  readonly zshDump: string
}

const run = (command: string, args: ReadonlyArray<string>, setup: CompletionRun) => {
  const result = spawnSync(command, args, {
    cwd: setup.cwd,
    encoding: "utf8",
    timeout: 20_000,
    env: { PATH: process.env.PATH, HOME: setup.home }
  })
  if (result.error !== undefined) throw result.error
  return result.stdout
}

const argumentsFor = (shell: Shell, setup: CompletionRun, words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const line = ["claude-peers", ...words].join(" ")
  switch (shell) {
    case "bash":
      return ["--norc", "--noprofile", bashHarness, setup.script, "claude-peers", ...bashWords(words)]
    case "zsh":
      return ["-f", zshHarness, setup.script, line, setup.zshDump]
    case "fish":
      return ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", setup.script, line]
  }
}

/**
 * What `shell` offers after `claude-peers WORDS…` (the last word is the one being completed), as a
 * sorted set of what each candidate puts after the cursor's word start: a directory without its
 * trailing `/`, a fish candidate without its description, and a value after `--option=` without
 * the `--option=` fish repeats (bash and zsh complete only the part after the `=`).
 */
export const offered = (shell: Shell, setup: CompletionRun, words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const output = run(shell, argumentsFor(shell, setup, words), setup)
  const optionPrefix = /^--[^=]+=/.exec(words.at(-1) ?? "")?.[0] ?? ""
  const candidates = output
    .split("\n")
    .map((line) => line.split("\t")[0]!.replace(/\/$/, ""))
    .map((candidate) => (optionPrefix !== "" && candidate.startsWith(optionPrefix) ? candidate.slice(optionPrefix.length) : candidate))
    .filter((candidate) => candidate !== "")
  return [...new Set(candidates)].sort()
}
