/**
 * Several Claude homes at once. People who run many sessions often run them under several homes
 * (one `CLAUDE_CONFIG_DIR` per account or profile), and a reader of one home sees only its share.
 * `ClaudeHomes` is the set a program reads: the homes it names, and with `all`, the default home,
 * `$CLAUDE_CONFIG_DIR` and the home of every live Claude Code process whose environment this user
 * may read. Each home is read once, by real path (a link to a home and the home are one home).
 *
 * A process's home is known only from its environment (`CLAUDE_CONFIG_DIR`, else `HOME/.claude`),
 * read through `ProcessProbe.evidence`: on Linux `/proc/<pid>/environ`, readable by the same user
 * and root. macOS shows no other process's environment to this project, so there `all` is the
 * default home and `$CLAUDE_CONFIG_DIR` only.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
import * as ClaudeHome from "./ClaudeHome.js"
import { Files } from "./Files.js"
import { type ProcessEvidence, ProcessProbe } from "./ProcessProbe.js"

export interface ClaudeHomes {
  /**
   * The homes to read now, each once by real path, in the order they were named or found. Asked
   * again each time: a link re-pointed since is followed, and with `all` a Claude Code process
   * started under a new home since is found.
   */
  readonly homes: Effect.Effect<ReadonlyArray<ClaudeHome.ClaudeHome>>
  /**
   * Whether the program asked for several homes (`all`, or more than one named): then every
   * session, entry and event carries its `home`, and no name is an address. It is the question,
   * not the count found, so that the shape of an answer never depends on what runs.
   */
  readonly several: boolean
  /**
   * Whether `homes` include every live Claude Code process's (`all`). A watch keeps such a home
   * until it ends, even once no process names it; without `all`, a home that `homes` no longer
   * answers (a named link re-pointed elsewhere) stops being watched, its sessions gone.
   */
  readonly all?: boolean | undefined
}

export const ClaudeHomes = Context.GenericTag<ClaudeHomes>("claude-peers/ClaudeHomes")

export interface HomesSelection {
  /** Homes named (`--claude-home`, given more than once). */
  readonly roots: ReadonlyArray<string>
  /** Also the standard homes and every live Claude Code process's (`--all-homes`). */
  readonly all: boolean
}

export interface HomesOptions extends ClaudeHome.HomeOptions {
  /**
   * The homes `all` starts from: the default home (`<user home>/.claude`) and `$CLAUDE_CONFIG_DIR`'s.
   * The layers compute them (the Node layer from this process's environment, a memory world from its
   * own home).
   */
  readonly standard: ReadonlyArray<string>
}

/**
 * Whether a process's arguments are Claude Code's: the native `claude` binary, or a runtime running
 * its `claude` launcher or `cli.js` from the `@anthropic-ai/claude-code` package.
 */
export const isClaudeCode = (argv: ReadonlyArray<string>): boolean => {
  const [program, script] = argv
  if (program === undefined) return false
  if (path.basename(program) === "claude") return true
  return script !== undefined &&
    (path.basename(script) === "claude" || (path.basename(script) === "cli.js" && script.includes("claude-code")))
}

/**
 * The Claude home a process runs with, by the same rule as ours (`ClaudeHome.rootOf`): its
 * `CLAUDE_CONFIG_DIR` (set but empty: its working directory; relative: against it), else its
 * `HOME/.claude`. Undefined when its environment, or what the rule needs of it, is not readable.
 */
export const homeOfProcess = (evidence: ProcessEvidence): string | undefined => {
  if (evidence.environment._tag !== "Read") return undefined
  const environ = evidence.environment.value
  const cwd = evidence.workingDirectory._tag === "Read" ? evidence.workingDirectory.value : undefined
  const unknown = () => {
    throw new Error("unknown")
  }
  const userHome = environ.get("HOME")
  try {
    const root = ClaudeHome.rootOf(undefined, environ.get("CLAUDE_CONFIG_DIR"), userHome ? () => userHome : unknown, cwd === undefined ? unknown : () => cwd)
    if (path.isAbsolute(root)) return path.normalize(root)
    return cwd === undefined ? undefined : path.resolve(cwd, root)
  } catch {
    return undefined
  }
}

/** The pids of the live Claude Code processes this machine lists, in pid order. */
const claudeProcesses: Effect.Effect<ReadonlyArray<number>, never, ProcessProbe> = Effect.flatMap(
  ProcessProbe,
  (probe) =>
    Effect.map(probe.processes, (listed) =>
      listed
        .filter(({ arguments: argv }) => argv._tag === "Read" && isClaudeCode(argv.value))
        .map(({ pid }) => pid)
        .sort((a, b) => a - b))
)

/**
 * The home of the Claude Code process at `pid`, from its environment (and its working directory
 * when the rule needs it). The pid may be another process's since it was listed (a registry scan
 * may have run meanwhile): its arguments are read again with the environment, and a process that
 * is no longer Claude Code names no home.
 */
const homeOfPid = (pid: number): Effect.Effect<string | undefined, never, ProcessProbe> =>
  Effect.gen(function*() {
    const probe = yield* ProcessProbe
    const evidence = yield* probe.evidence(pid, ["arguments", "environment"])
    if (evidence.arguments._tag !== "Read" || !isClaudeCode(evidence.arguments.value)) return undefined
    if (evidence.environment._tag !== "Read") return undefined
    const home = homeOfProcess(evidence)
    if (home !== undefined) return home
    const { workingDirectory } = yield* probe.evidence(pid, ["workingDirectory"])
    return homeOfProcess({ ...evidence, workingDirectory })
  })

/** The homes of the live Claude Code processes this user may read, in pid order, repeats included. */
export const processHomes: Effect.Effect<ReadonlyArray<string>, never, ProcessProbe> = Effect.flatMap(
  claudeProcesses,
  (pids) => Effect.map(Effect.forEach(pids, homeOfPid), (homes) => homes.filter((home) => home !== undefined))
)

/**
 * Each home once, by real path; a home that does not exist (yet) by its resolved path. `known` holds
 * the real path each root was last found at: one that cannot be found now for another reason than
 * its absence (an I/O error) keeps it, so that a home never seems to move for a moment.
 */
export const distinct = (roots: ReadonlyArray<string>, known: Map<string, string> = new Map()): Effect.Effect<ReadonlyArray<string>, never, Files> =>
  Effect.gen(function*() {
    const files = yield* Files
    const seen = new Set<string>()
    const kept: Array<string> = []
    for (const root of roots) {
      const resolved = path.resolve(root)
      // A home nobody has used (the default one of a user whose homes are all CLAUDE_CONFIG_DIRs)
      // is an answer, not a failure to make and throw away.
      const absent = Option.exists(yield* Effect.option(files.statIfExists(resolved)), Option.isNone)
      const real = absent ? resolved : yield* files.realPath(resolved).pipe(
        Effect.tap((found) => Effect.sync(() => void known.set(resolved, found))),
        Effect.catchAll((error) => Effect.succeed(error._tag === "SystemError" && error.reason === "NotFound" ? resolved : known.get(resolved) ?? resolved))
      )
      if (seen.has(real)) continue
      seen.add(real)
      kept.push(real)
    }
    return kept
  })

/**
 * The homes `all` starts from on this machine: `<user home>/.claude` and the home the environment
 * names (`CLAUDE_CONFIG_DIR`, by `ClaudeHome.rootOf`); either left out where it cannot be found
 * (no user home).
 */
export const standardHomes: Effect.Effect<ReadonlyArray<string>> = Config.option(Config.string("CLAUDE_CONFIG_DIR")).pipe(
  Effect.orDie,
  Effect.map((configDir) => {
    const homes: Array<string> = []
    try {
      homes.push(path.join(ClaudeHome.userHome(), ".claude"))
    } catch {
      // No user home: only CLAUDE_CONFIG_DIR can name one.
    }
    try {
      homes.push(path.resolve(ClaudeHome.rootOf(undefined, Option.getOrUndefined(configDir), ClaudeHome.userHome)))
    } catch {
      // As above.
    }
    return homes
  })
)

export const make = (selection: HomesSelection, options: HomesOptions): Effect.Effect<ClaudeHomes, never, Files | ProcessProbe> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Files | ProcessProbe>()
    const known = new Map<string, string>()
    const found = Effect.gen(function*() {
      const roots = selection.all ? [...selection.roots, ...options.standard, ...(yield* processHomes)] : selection.roots
      const real = yield* distinct(roots, known)
      return real.map((root) => ClaudeHome.make(root, options))
    }).pipe(Effect.provide(context), Effect.withSpan("ClaudeHomes.homes"))
    // Found again each time, named homes too: a link among them may be re-pointed while a watch runs.
    const homes = found
    return ClaudeHomes.of({
      homes,
      several: selection.all || selection.roots.length > 1,
      all: selection.all
    })
  })

export const layer = (selection: HomesSelection, options: HomesOptions): Layer.Layer<ClaudeHomes, never, Files | ProcessProbe> =>
  Layer.effect(ClaudeHomes, make(selection, options))
