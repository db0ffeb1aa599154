/**
 * `ProcessProbe` against the real OS, reading start times the way Claude Code writes `procStart`:
 * Linux field 22 of `/proc/<pid>/stat`, macOS `ps -o lstart=` under `TZ=UTC LC_ALL=C`, and none
 * elsewhere (Windows: liveness only).
 *
 * Two rules earn their place here:
 * - Only ESRCH means dead. EPERM is a live process owned by someone else, and any other failure of
 *   `kill(pid, 0)` proves nothing, so it counts as alive: calling a live session dead would let a
 *   caller discard it, which is worse than keeping a stale one.
 * - A start time that cannot be read because the process is gone is `Dead`. The read happens after
 *   the liveness check, so a process that exits in between would otherwise be reported alive with an
 *   unknown start time, which the registry treats as "nothing proves it was reused", i.e. live.
 *
 * On Linux a large check (more than `listingThreshold` pids: a registry is mostly stale records)
 * first lists `/proc` once, and only the pids it lists get a `kill(pid, 0)`: the others are dead
 * without one. That replaces thousands of failing system calls by one directory read, and stays
 * within the first rule: see `processListing` for when the listing is trusted and what it misses.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ChildProcess from "node:child_process"
import * as fs from "node:fs"
import { parseEnviron } from "../domain/ClaudeEnvironment.js"
import { type Observed, read, unreadable } from "../domain/Observed.js"
import {
  asks,
  type EvidencePart,
  type ListedProcess,
  make as makeProcessProbe,
  notAskedFor,
  type ProcessEvidence,
  type ProcessIdentity,
  ProcessProbe,
  type ProcessState,
  type Signalled
} from "../services/ProcessProbe.js"
import { isProcessId, signalZero, signalZeroAnswer } from "./SignalZero.js"

const dead: ProcessState = { _tag: "Dead" }

/** An alive state; `answer` is what `kill(pid, 0)` said (`"denied"`: another user's process). */
const aliveWith = (
  startTime: Option.Option<string>,
  answer: Signalled,
  seen: { readonly stopped: boolean; readonly hidden: boolean } = notSeen
): ProcessState => ({ _tag: "Alive", startTime, stopped: seen.stopped, otherUser: answer === "denied", hidden: seen.hidden })

const notSeen = { stopped: false, hidden: false }
const hiddenFromUs = { stopped: false, hidden: true }

const errorCode = (error: unknown): unknown => typeof error === "object" && error !== null ? (error as { readonly code?: unknown }).code : undefined

/**
 * Where `process.kill` answers, a dead pid is a thrown system error, and Node captures a stack trace
 * for each; turning that off roughly halves the cost of one.
 */
const withoutStackTraces = <A>(f: () => A): A => {
  const saved = Error.stackTraceLimit
  try {
    Error.stackTraceLimit = 0
  } catch {
    // A frozen `Error` (`node --frozen-intrinsics`, a lockdown): the same answers, with stacks.
    return f()
  }
  try {
    return f()
  } finally {
    Error.stackTraceLimit = saved
  }
}

/**
 * Above this many pids (repeats counted) a Linux check lists `/proc` first. Below it, one `kill`
 * per pid costs less than reading the directory, whose size is the whole machine's process count.
 */
export const listingThreshold = 64

/** Octal escapes of a mountinfo path (`\040` is a space). */
const unescapeMountPath = (path: string): string => path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))

/**
 * Whether `/proc`, as `/proc/self/mountinfo` describes it, lists every process this one could signal:
 * the topmost mount on `/proc` is a procfs without `hidepid`. With `hidepid=1|2` (`noaccess`,
 * `invisible`, `ptraceable`) other users' processes are missing from the listing while `kill(pid, 0)`
 * still finds them (EPERM): they must stay alive, so such a mount is not trusted. `hidepid=0` (`off`)
 * hides nothing; `subset=pid` hides only the entries that are not processes. Anything unexpected (no
 * procfs on `/proc`, a line that does not parse) is not trusted either.
 *
 * A line is `id parent major:minor root mountpoint options [optional…] - fstype source superoptions`;
 * `hidepid` is a superblock option, but both option fields are read, as kernels have moved it.
 */
export const procListsEveryProcess = (mountinfo: string): boolean => {
  let trusted = false
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ")
    if (fields.length < 7 || unescapeMountPath(fields[4]!) !== "/proc") continue
    // A later mount on /proc covers the earlier ones: the last line decides.
    const separator = fields.indexOf("-", 6)
    if (separator < 0 || fields[separator + 1] !== "proc") {
      trusted = false
      continue
    }
    const options = [...fields[5]!.split(","), ...(fields[separator + 3] ?? "").split(",")]
    trusted = options.every((option) => !option.startsWith("hidepid=") || option === "hidepid=0" || option === "hidepid=off")
  }
  return trusted
}

/**
 * The pids `/proc` lists (thread-group ids, i.e. processes), or null when the listing cannot be
 * trusted to hold every process `kill(pid, 0)` would find:
 * - `/proc` hides processes (`hidepid`, see `procListsEveryProcess`), or is not a procfs;
 * - `/proc` belongs to another pid namespace than ours (a host's `/proc` mounted in a container):
 *   then `/proc/self` is not our pid, and the pids it lists are not the ones `kill` addresses;
 * - anything fails to read.
 *
 * What the listing still misses, knowingly: a thread id that is not its process's id is not listed
 * (only `/proc/<pid>/task` lists threads) although `kill(tid, 0)` succeeds, so a record naming a
 * thread reads dead. Claude Code records process ids, never thread ids. A process that starts after
 * the listing is not in it, but it is not the one any record names: the listing is read after the
 * registry's directory, so every record's writer had started before it (a pid reused since is a new
 * process, which the start-time check would reject anyway).
 */
const processListing = (trustProc: () => boolean): ReadonlySet<number> | null => {
  try {
    if (!trustProc()) return null
    const listed = new Set<number>()
    for (const name of fs.readdirSync("/proc")) {
      const first = name.charCodeAt(0)
      if (first >= 48 && first <= 57) listed.add(Number(name))
    }
    return listed
  } catch {
    return null
  }
}

/** The processes `/proc` lists, whatever it hides, with their arguments: what discovery can see, not a liveness answer. */
const listedProcesses = (): ReadonlyArray<ListedProcess> => {
  let names: Array<string>
  try {
    names = fs.readdirSync("/proc")
  } catch {
    return []
  }
  return names.filter((name) => /^[1-9][0-9]*$/.test(name)).map((name) => {
    const pid = Number(name)
    try {
      return { pid, arguments: read(splitNul(readProcText(`/proc/${pid}/cmdline`))) }
    } catch {
      return { pid, arguments: unreadable("the process's arguments could not be read") }
    }
  })
}

/**
 * Whether `/proc` is our pid namespace's: `/proc/self` names our own pid. A host's `/proc` seen from
 * a pid namespace of its own (`unshare -p` without a `/proc` of its own) names us by the host's pid,
 * and what it says of any pid is another process's: its state, its start time, its arguments.
 */
const procIsOurs = (): boolean => {
  try {
    return fs.readlinkSync("/proc/self") === String(process.pid)
  } catch {
    return false
  }
}

const procOfAnotherNamespace =
  "/proc belongs to another pid namespace than this process's (a host's /proc seen from a container): what it shows under this pid is another process"

/** Read once per probe: a remount of `/proc` while a command runs is not worth a read per scan. */
const procTrustedOnce = (): () => boolean => {
  let trusted: boolean | undefined
  return () => (trusted ??= (() => {
    try {
      return procIsOurs() && procListsEveryProcess(fs.readFileSync("/proc/self/mountinfo", "utf8"))
    } catch {
      return false
    }
  })())
}

/**
 * Distinct pids in first-seen order, each with its liveness: at most one `kill(pid, 0)` per pid,
 * none for a pid the listing (when there is one) does not hold.
 */
const probeLiveness = (pids: Iterable<number>, listing: (count: number) => ReadonlySet<number> | null): Map<number, Signalled> =>
  withoutStackTraces(() => {
    const asked = Array.isArray(pids) ? (pids as ReadonlyArray<number>) : [...pids]
    const listed = listing(asked.length)
    const alive = new Map<number, Signalled>()
    for (const pid of asked) {
      if (!alive.has(pid)) alive.set(pid, isProcessId(pid) && (listed === null || listed.has(pid)) && signalZeroAnswer(pid))
    }
    return alive
  })

/** What `/proc/<pid>/stat` says of a process: whether it has exited (a zombie), and its start time. */
export interface ProcStat {
  /** State `Z` (zombie) or `X` (dead): the process has exited and only waits to be reaped. */
  readonly exited: boolean
  /** State `T` (stopped by a signal) or `t` (stopped by a tracer). */
  readonly stopped: boolean
  readonly startTime: Option.Option<string>
}

/**
 * Fields 3 (`state`) and 22 (`starttime`) of a `/proc/<pid>/stat` line, or none when the line is not
 * one. The comm field (2) is the process name in parentheses and may itself hold spaces and `)`, so
 * the fields are counted from the LAST `)`: what follows starts at field 3, making field 22 the 20th.
 */
export const parseProcStat = (stat: string): Option.Option<ProcStat> => {
  const close = stat.lastIndexOf(")")
  if (close < 0) return Option.none()
  // The two fields wanted are cut out where they are, not the line split into its fifty: every
  // live session's stat line is read once per scan.
  let state = ""
  let start = ""
  let at = close + 1
  for (let field = 0; field <= 19; field++) {
    while (at < stat.length && isBlank(stat.charCodeAt(at))) at++
    if (at === stat.length) break
    const from = at
    while (at < stat.length && !isBlank(stat.charCodeAt(at))) at++
    if (field === 0) state = stat.slice(from, at)
    else if (field === 19) start = stat.slice(from, at)
  }
  if (state === "") return Option.none()
  return Option.some({
    exited: state === "Z" || state === "X",
    stopped: state === "T" || state === "t",
    startTime: /^\d+$/.test(start) ? Option.some(start) : Option.none()
  })
}

/** The kernel separates the fields with single spaces and ends the line with a newline; any white space is taken as a separator. */
const isBlank = (code: number): boolean => code === 32 || (code >= 9 && code <= 13)

/** What `ps` says of a process: whether it has exited (a zombie), and its start time as Claude Code spells it. */
export interface PsEntry {
  readonly exited: boolean
  /** A state starting with `T`: stopped. */
  readonly stopped: boolean
  readonly lstart: string
}

/**
 * `ps -o pid=,stat=,lstart=` output as pid → entry, the lstart with its white space collapsed to
 * single spaces (`Tue Dec  1 …` pads the day), which is how `procStart` is compared word by word.
 * A state starting with `Z` is a zombie. Lines that are not `<pid> <state> <words…>` are skipped.
 */
export const parsePs = (output: string): Map<number, PsEntry> => {
  const entries = new Map<number, PsEntry>()
  for (const line of output.split("\n")) {
    const match = /^\s*(\d+)\s+(\S+)\s+(\S.*?)\s*$/.exec(line)
    if (match === null) continue
    const pid = Number(match[1])
    if (isProcessId(pid)) entries.set(pid, { exited: match[2]!.startsWith("Z"), stopped: match[2]!.startsWith("T"), lstart: match[3]!.split(/\s+/).join(" ") })
  }
  return entries
}

/**
 * Where a file of `/proc/<pid>` is read (`stat`, `cmdline`, `environ`): procfs reports a size of 0
 * for them, so `readFileSync` would allocate a 64 KiB buffer for each, several per session. One
 * buffer, reused and doubled when a file fills it (an environment can be large), and only the bytes
 * read are decoded. procfs gives a read as much of the file as it has room for: a read that returns
 * less than its room has reached the end, and reading on would only return 0.
 */
let procBuffer = Buffer.alloc(16 * 1024)

const readProcFile = (file: string, encoding: "latin1" | "utf8"): string => {
  const fd = fs.openSync(file, "r")
  try {
    let length = 0
    for (;;) {
      if (length === procBuffer.length) {
        const larger = Buffer.alloc(procBuffer.length * 2)
        procBuffer.copy(larger, 0, 0, length)
        procBuffer = larger
      }
      const room = procBuffer.length - length
      const n = fs.readSync(fd, procBuffer, length, room, null)
      length += n
      if (n < room) break
    }
    return procBuffer.toString(encoding, 0, length)
  } finally {
    fs.closeSync(fd)
  }
}

/** A stat line: some fifty numbers and the command's name, read as bytes (`parseProcStat` looks past the name). */
const readProcStat = (pid: number): string => readProcFile(`/proc/${pid}/stat`, "latin1")

/**
 * Linux states, read one stat file at a time (synchronous reads of procfs are memory copies). Every
 * pid that `kill(pid, 0)` found is read, start time asked or not: a zombie passes `kill(pid, 0)` but
 * runs nothing, and only its state says so. A stat file that is missing while `kill(pid, 0)` still
 * succeeds is a process procfs hides from us (`hidepid`): alive, hidden, start unknown.
 */
const linuxStates = (alive: ReadonlyMap<number, Signalled>, startTimeOf: ReadonlySet<number>): ReadonlyMap<number, ProcessState> =>
  withoutStackTraces(() => {
    const states = new Map<number, ProcessState>()
    for (const [pid, answer] of alive) {
      if (answer === false) {
        states.set(pid, dead)
        continue
      }
      try {
        const stat = parseProcStat(readProcStat(pid))
        if (Option.isSome(stat) && stat.value.exited) states.set(pid, dead)
        else {
          const startTime = startTimeOf.has(pid) ? Option.flatMap(stat, (s) => s.startTime) : Option.none()
          states.set(pid, aliveWith(startTime, answer, Option.isSome(stat) && stat.value.stopped ? { stopped: true, hidden: false } : notSeen))
        }
      } catch (error) {
        const code = errorCode(error)
        const missing = code === "ENOENT" || code === "ESRCH"
        states.set(pid, missing && !signalZero(pid) ? dead : aliveWith(Option.none(), answer, missing ? hiddenFromUs : notSeen))
      }
    }
    return states
  })

/** Claude Code runs `ps` under these, so its `procStart` is in UTC and English. */
const psEnvironment = (): NodeJS.ProcessEnv => ({ ...process.env, TZ: "UTC", LC_ALL: "C" })

/**
 * One `ps` for all the pids. `ps` may exit non-zero when some pid is gone yet still print the others,
 * so its output is used whatever the exit status; a failure to run it at all yields no start times.
 */
const runPs = (pids: ReadonlyArray<number>): Effect.Effect<string> =>
  // Imported where it is used: only macOS runs `ps`, and `node:child_process` brings `net`, `dgram`
  // and the streams, which nothing else here needs.
  Effect.flatMap(Effect.promise(() => import("node:child_process")), (childProcess) => runPsWith(childProcess, pids))

const runPsWith = (childProcess: typeof ChildProcess, pids: ReadonlyArray<number>): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const child = childProcess.execFile(
      "ps",
      ["-o", "pid=,stat=,lstart=", "-p", pids.join(",")],
      { env: psEnvironment(), encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (_error, stdout) => resume(Effect.succeed(typeof stdout === "string" ? stdout : ""))
    )
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

/**
 * macOS states: one batched `ps` for every pid `kill(pid, 0)` found (a zombie passes it, and only
 * `ps` says it exited); a pid missing from its output is checked for liveness again.
 */
const psStates = (
  alive: ReadonlyMap<number, Signalled>,
  startTimeOf: ReadonlySet<number>
): Effect.Effect<ReadonlyMap<number, ProcessState>> => {
  const wanted = [...alive].filter(([, answer]) => answer !== false).map(([pid]) => pid)
  const seen = wanted.length === 0 ? Effect.succeed(new Map<number, PsEntry>()) : Effect.map(runPs(wanted), parsePs)
  return Effect.map(seen, (seen) =>
    withoutStackTraces(() => {
      const states = new Map<number, ProcessState>()
      for (const [pid, answer] of alive) {
        const entry = seen.get(pid)
        if (answer === false || entry?.exited === true) states.set(pid, dead)
        else if (entry === undefined) states.set(pid, signalZero(pid) ? aliveWith(Option.none(), answer) : dead)
        else {
          const startTime = startTimeOf.has(pid) ? Option.some(entry.lstart) : Option.none()
          states.set(pid, aliveWith(startTime, answer, entry.stopped ? { stopped: true, hidden: false } : notSeen))
        }
      }
      return states
    }))
}

/** Why a file of `/proc/<pid>` could not be read, in words. */
const procFailure = (what: string, error: unknown): string => {
  switch (errorCode(error)) {
    case "ENOENT":
    case "ESRCH":
      return "the process has exited"
    case "EACCES":
    case "EPERM":
      return `permission denied: ${what} of another user's process, or of one that forbids it, cannot be read`
    default:
      return error instanceof Error ? error.message : String(error)
  }
}

const procRead = <A>(what: string, read: () => Observed<A>): Observed<A> => {
  try {
    return read()
  } catch (error) {
    return unreadable(procFailure(what, error))
  }
}

/** NUL-separated words; the NUL after the last one is a terminator, not an empty word. */
export const splitNul = (text: string): ReadonlyArray<string> => {
  if (text.length === 0) return []
  const words = text.split("\0")
  return text.endsWith("\0") ? words.slice(0, -1) : words
}

/** `cmdline` and `environ`, as the process's text. */
const readProcText = (file: string): string => readProcFile(file, "utf8")

/**
 * Linux: `/proc/<pid>/cmdline`, `environ` and `cwd`. The environment is the block the process was
 * started with; the kernel lets only the process's own user (and root) read it.
 */
const linuxEvidence = (pid: number, parts: ReadonlyArray<EvidencePart> | undefined): ProcessEvidence =>
  withoutStackTraces(() => ({
    arguments: asked(parts, "arguments", () =>
      procRead("the arguments", () => {
        const words = splitNul(readProcText(`/proc/${pid}/cmdline`))
        return words.length === 0 ? unreadable("the process shows no arguments: it has exited, or is a kernel thread") : read(words)
      })),
    environment: asked(parts, "environment", () => procRead("the environment", () => read(parseEnviron(readProcText(`/proc/${pid}/environ`))))),
    workingDirectory: asked(parts, "workingDirectory", () =>
      procRead("the working directory", () => {
        const target = fs.readlinkSync(`/proc/${pid}/cwd`)
        return target.endsWith(" (deleted)") ? unreadable("its working directory has been deleted") : read(target)
      })),
    mountNamespace: asked(parts, "mountNamespace", () =>
      procRead("the mount namespace", () => {
        const id = fs.readlinkSync(`/proc/${pid}/ns/mnt`)
        return read({ id, ours: id === ownMountNamespace(), root: `/proc/${pid}/root` })
      })),
    // `status` is readable for every process `/proc` shows, another user's included.
    user: asked(parts, "user", () =>
      procRead("the user", () => {
        const uids = /^Uid:\s+\d+\s+(\d+)/m.exec(readProcText(`/proc/${pid}/status`))
        return uids === null ? unreadable("its status names no user: it has exited") : read(Number(uids[1]))
      }))
  }))

/** A part of the evidence, read only when asked for (everything when no part is named). */
const asked = <A>(parts: ReadonlyArray<EvidencePart> | undefined, part: EvidencePart, read: () => Observed<A>): Observed<A> =>
  asks(parts, part) ? read() : notAskedFor

/** Ours does not change while we run. */
let ownMount: string | undefined
const ownMountNamespace = (): string => (ownMount ??= fs.readlinkSync("/proc/self/ns/mnt"))

/**
 * Options Claude Code reads its settings from. `ps` joins a process's arguments with spaces, so
 * its text splits back into the real words only when no space sat inside one; a split is trusted
 * only when none of these appears anywhere in the text, so that no value of theirs can be misread.
 */
const settingsOptions = ["--settings", "--setting-sources", "--restricted", "--managed-settings", "--project-config-root"]

/** `ps -o command=`'s text as words, or unreadable when a split could misread a settings option. */
export const psArguments = (text: string): Observed<ReadonlyArray<string>> => {
  const trimmed = text.trim()
  if (trimmed === "") return unreadable("ps shows no command for the process: it has exited")
  const named = settingsOptions.find((option) => trimmed.includes(option))
  return named === undefined
    ? read(trimmed.split(/ +/))
    : unreadable(`ps joins the arguments with spaces, so the value of ${named} cannot be told apart from the words around it`)
}

const runPsCommand = (pid: number): Effect.Effect<string> =>
  Effect.flatMap(Effect.promise(() => import("node:child_process")), (childProcess) =>
    Effect.async<string>((resume) => {
      const child = childProcess.execFile(
        "ps",
        ["-o", "command=", "-p", String(pid)],
        { env: psEnvironment(), encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 30_000 },
        (_error, stdout) => resume(Effect.succeed(typeof stdout === "string" ? stdout : ""))
      )
      return Effect.sync(() => {
        child.kill("SIGKILL")
      })
    }))

/** macOS: the arguments from `ps`; the environment and the working directory are not read there. */
const psEvidence = (pid: number, parts: ReadonlyArray<EvidencePart> | undefined): Effect.Effect<ProcessEvidence> =>
  Effect.map(asks(parts, "arguments") ? runPsCommand(pid) : Effect.succeed(undefined), (text) => ({
    arguments: text === undefined ? notAskedFor : psArguments(text),
    environment: unreadable("macOS does not show another process's environment apart from its arguments"),
    workingDirectory: unreadable("the working directory of another process is not read on macOS"),
    user: unreadable("the user of another process is not read on macOS")
  }))

const evidenceUnavailable = (reason: string): ProcessEvidence => ({
  arguments: unreadable(reason),
  environment: unreadable(reason),
  workingDirectory: unreadable(reason),
  user: unreadable(reason)
})

const livenessOnly = (alive: ReadonlyMap<number, Signalled>): ReadonlyMap<number, ProcessState> =>
  new Map([...alive].map(([pid, answer]) => [pid, answer === false ? dead : aliveWith(Option.none(), answer)]))

/**
 * `linux:<machine id>:<pid namespace>`, the spelling Claude Code writes as `pidDomain`. Without a
 * machine id there is no domain to compare, and the check it feeds is skipped.
 */
const linuxPidDomain = (): Option.Option<string> => {
  try {
    const machineId = fs.readFileSync("/etc/machine-id", "utf8").trim()
    const namespace = fs.readlinkSync("/proc/self/ns/pid")
    return machineId.length > 0 && namespace.length > 0 ? Option.some(`linux:${machineId}:${namespace}`) : Option.none()
  } catch {
    return Option.none()
  }
}

/**
 * The probe for this OS. `platform` picks how start times are read; it defaults to the running
 * platform and exists so that the macOS `ps` path can be exercised with a real `ps` on Linux.
 */
export const makeNode = (platform: NodeJS.Platform = process.platform): ProcessProbe => {
  // Neither the machine id nor our own pid namespace changes while we run.
  let domain: Option.Option<string> | undefined
  const trustProc = procTrustedOnce()
  let ours: boolean | undefined
  // Without it, no process's state, start time or evidence can be read: `kill(pid, 0)` alone answers.
  const ownProc = () => (ours ??= procIsOurs())
  const listing = (count: number): ReadonlySet<number> | null => platform === "linux" && count > listingThreshold ? processListing(trustProc) : null
  const statesOf = (alive: ReadonlyMap<number, Signalled>, startTimeOf: ReadonlySet<number>) => {
    switch (platform) {
      case "linux":
        return Effect.succeed(ownProc() ? linuxStates(alive, startTimeOf) : livenessOnly(alive))
      case "darwin":
        return psStates(alive, startTimeOf)
      default:
        return Effect.succeed(livenessOnly(alive))
    }
  }
  const signal = (pids: Iterable<number>) => Effect.sync(() => probeLiveness(pids, listing))
  let self: ProcessIdentity | undefined
  return makeProcessProbe({
    self: Effect.suspend(() => {
      if (self !== undefined) return Effect.succeed(self)
      const pid = process.pid
      return Effect.map(Effect.flatMap(signal([pid]), (alive) => statesOf(alive, new Set([pid]))), (states) => {
        const state = states.get(pid)
        self = { pid, startTime: state?._tag === "Alive" ? state.startTime : Option.none() }
        return self
      })
    }),
    pidDomain: Effect.sync(() => (domain ??= platform === "linux" ? linuxPidDomain() : Option.none())),
    evidence: (pid, parts) =>
      Effect.suspend(() => {
        if (!isProcessId(pid)) return Effect.succeed(evidenceUnavailable(`${pid} is not a process id`))
        switch (platform) {
          case "linux":
            return Effect.sync(() => (ownProc() ? linuxEvidence(pid, parts) : evidenceUnavailable(procOfAnotherNamespace)))
          case "darwin":
            return psEvidence(pid, parts)
          default:
            return Effect.succeed(evidenceUnavailable(`this platform (${platform}) does not show another process's arguments or environment`))
        }
      }),
    processes: Effect.sync(() => (platform === "linux" && ownProc() ? listedProcesses() : [])),
    signal,
    // The effective uid, which decides what this process may signal and whose files it writes.
    user: Effect.sync(() => (typeof process.geteuid === "function" ? Option.some(process.geteuid()) : Option.none())),
    states: (alive, startTimeOf) => Effect.suspend(() => statesOf(alive, startTimeOf))
  })
}

export { signalZero }

export const layer: Layer.Layer<ProcessProbe> = Layer.sync(ProcessProbe, () => makeNode())
