/**
 * A process table the test controls, behind the same `ProcessProbe` rules as the Node layer: one
 * liveness check per distinct pid, a start time read only for the alive pids in `startTimeOf`, and
 * a process that dies between the two reported `Dead`. The same conformance suite runs against both,
 * so a test written against this table holds against the OS.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Observed, read, unreadable } from "../domain/Observed.js"
import {
  make as makeProcessProbe,
  type MountNamespace,
  onlyParts,
  type ProcessEvidence,
  type ProcessIdentity,
  ProcessProbe,
  type ProcessState,
  type Signalled
} from "../services/ProcessProbe.js"

/** One part of a process's evidence as a test stages it: the value, or `Observed` (an `unreadable(reason)`). */
export type Staged<A> = A | Observed<A>

/** What a test stages of how a process runs; a part left out keeps its default. */
export interface StagedEvidence {
  readonly arguments?: Staged<ReadonlyArray<string>>
  readonly environment?: Staged<ReadonlyMap<string, string> | Readonly<Record<string, string>>>
  readonly workingDirectory?: Staged<string>
  /** Another mount namespace: its files are staged under `root`. Left out, the process shares ours. */
  readonly mountNamespace?: Staged<MountNamespace>
  /** Its effective uid as `/proc` shows it; left out, the uid it was spawned with. */
  readonly user?: Staged<number>
}

export interface MemoryProcessesOptions {
  /** "This process", the one the program runs as (a lock of ours names it). Default pid 424242, a fresh start time. */
  readonly self?: { readonly pid?: number; readonly startTime?: string }
  /**
   * The user the program runs as (default uid 1000, as the memory tree's default user; uid 0 is
   * root, which may signal every process). A process of another uid answers `kill(pid, 0)` with
   * EPERM for anyone else.
   */
  readonly user?: { readonly uid: number } | undefined
}

/** How a test starts a process: its pid, start time, owner and evidence; each left out takes its default. */
export type SpawnOptions = { readonly pid?: number; readonly startTime?: string; readonly uid?: number } & StagedEvidence

export interface MemoryProcesses {
  readonly probe: ProcessProbe
  /** The process the program runs as: alive in the table from the start, as any running program is on the OS. */
  readonly self: { readonly pid: number; readonly startTime: string }
  /**
   * Starts a process. Pids are allocated from 1000 upward when not given; the start time defaults
   * to a fresh decimal string, distinct per process. Spawning on a live pid is a test bug and
   * throws: use `reuse` for a pid taken over by a new process.
   */
  spawn(options?: SpawnOptions): { pid: number; startTime: string }
  /**
   * What the process shows of how it runs. A spawned process shows, until staged otherwise, the
   * arguments `sleep 3600`, an empty environment and the working directory `/`.
   */
  stage(pid: number, evidence: StagedEvidence): void
  /**
   * Runs `hook` once, just before the next read of this pid's evidence: the pid dies or is reused
   * between a registry scan and the read, and the caller must not take the new process's evidence
   * for the session's.
   */
  onNextEvidence(pid: number, hook: () => void): void
  /** SIGSTOP: the process stays alive and runs nothing until `resume` (its state reads `T`). */
  stop(pid: number): void
  /** SIGCONT: a stopped process runs again. */
  resume(pid: number): void
  /**
   * `/proc` mounted with `hidepid=2`: a process of another uid than the program's is invisible to it
   * (no state, no start time), while `kill(pid, 0)` still finds it (EPERM). Root sees everything.
   */
  setHidePid(on?: boolean): void
  /** The process exits and is reaped: no process has the pid any more. */
  kill(pid: number): void
  /**
   * The process exits but its parent does not reap it: `kill(pid, 0)` still succeeds, as for any
   * zombie, yet nothing runs; the probe must report it `Dead`. `kill` reaps it.
   */
  exitUnreaped(pid: number): void
  /** The pid now belongs to a new live process with a new start time (of `uid`, default the program's user), which is returned. */
  reuse(pid: number, startTime?: string, uid?: number): string
  /** Alive, but its start time cannot be read (as an unreadable stat file or a failed `ps`). */
  setStartTimeUnreadable(pid: number, unreadable?: boolean): void
  /**
   * In the next check the process answers its liveness check, then dies before its start time is
   * read: the probe must report it `Dead`. When its start time is not asked it is reported alive
   * and is dead after the check.
   */
  dieDuringCheck(pid: number): void
  /** `null` for a machine whose domain cannot be computed. Default `linux:memory:pid:[1]`. */
  setPidDomain(domain: string | null): void
  isAlive(pid: number): boolean
  startTimeOf(pid: number): string | undefined
  /** Counters since creation: liveness checks (re-checks included) and start-time reads attempted. */
  readonly stats: { readonly kills: number; readonly startTimeReads: number }
}

interface Entry {
  readonly startTime: string
  readonly uid: number
  stopped: boolean
  evidence: ProcessEvidence
  unreadable: boolean
  dieDuringCheck: boolean
  /** Exited, not reaped. */
  zombie: boolean
}

/** As on the OS: 0 and negatives address process groups, and no process has such a pid. */
const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid >= 1 && pid <= 2147483647

const isObserved = <A>(value: Staged<A>): value is Observed<A> =>
  typeof value === "object" && value !== null && "_tag" in value &&
  ((value as { _tag: unknown })._tag === "Read" || (value as { _tag: unknown })._tag === "Unreadable")

const observed = <A>(value: Staged<A>): Observed<A> => (isObserved(value) ? value : read(value))

/** Any map, not only a `Map`: the Node probe's environment is a map of its own. A record's values are strings, never a `get`. */
const isMap = (value: ReadonlyMap<string, string> | Readonly<Record<string, string>>): value is ReadonlyMap<string, string> =>
  value instanceof Map || typeof (value as { readonly get?: unknown }).get === "function"

const environmentOf = (
  value: Staged<ReadonlyMap<string, string> | Readonly<Record<string, string>>>
): Observed<ReadonlyMap<string, string>> => {
  const staged = observed(value)
  if (staged._tag === "Unreadable") return staged
  return read(isMap(staged.value) ? staged.value : new Map(Object.entries(staged.value)))
}

const defaultEvidence: ProcessEvidence = {
  arguments: read(["sleep", "3600"]),
  environment: read(new Map()),
  workingDirectory: read("/")
}

const withStaged = (evidence: ProcessEvidence, staged: StagedEvidence): ProcessEvidence => ({
  arguments: staged.arguments === undefined ? evidence.arguments : observed(staged.arguments),
  environment: staged.environment === undefined ? evidence.environment : environmentOf(staged.environment),
  workingDirectory: staged.workingDirectory === undefined ? evidence.workingDirectory : observed(staged.workingDirectory),
  mountNamespace: staged.mountNamespace === undefined ? evidence.mountNamespace : observed(staged.mountNamespace),
  user: staged.user === undefined ? evidence.user : observed(staged.user)
})

const exited: ProcessEvidence = {
  arguments: unreadable("the process has exited"),
  environment: unreadable("the process has exited"),
  workingDirectory: unreadable("the process has exited"),
  user: unreadable("the process has exited")
}

const dead: ProcessState = { _tag: "Dead" }

export const defaultSelfPid = 424242

export const makeMemoryProcesses = (options: MemoryProcessesOptions = {}): MemoryProcesses => {
  const table = new Map<number, Entry>()
  let nextPid = 1000
  let nextStartTime = 100001
  let pidDomain: Option.Option<string> = Option.some("linux:memory:pid:[1]")
  const uid = options.user?.uid ?? 1000
  let hidePid = false
  let kills = 0
  let startTimeReads = 0
  const evidenceHooks = new Map<number, () => void>()

  const freshStartTime = (): string => String(nextStartTime++)

  const checkPid = (pid: number): void => {
    if (!isProcessId(pid)) throw new RangeError(`not a process id: ${pid}`)
  }

  const signalZero = (pid: number): Signalled => {
    kills++
    const entry = table.get(pid)
    return entry === undefined ? false : uid === 0 || entry.uid === uid ? true : "denied"
  }

  /** Whether `/proc` hides the process from the program: `hidepid`, another uid, and the program is not root. */
  const hiddenFromUs = (entry: Entry): boolean => hidePid && uid !== 0 && entry.uid !== uid

  const aliveWith = (entry: Entry | undefined, startTime: Option.Option<string>, answer: Signalled): ProcessState => {
    const hidden = entry !== undefined && hiddenFromUs(entry)
    return { _tag: "Alive", startTime, stopped: !hidden && entry?.stopped === true, otherUser: answer === "denied", hidden }
  }

  type StartTimeRead = { readonly _tag: "Read"; readonly startTime: string } | { readonly _tag: "Gone" } | {
    readonly _tag: "Unreadable"
  }

  const readStartTime = (pid: number): StartTimeRead => {
    startTimeReads++
    const entry = table.get(pid)
    if (entry === undefined) return { _tag: "Gone" }
    return entry.unreadable || hiddenFromUs(entry) ? { _tag: "Unreadable" } : { _tag: "Read", startTime: entry.startTime }
  }

  const livenessPass = (pids: Iterable<number>): Map<number, Signalled> => {
    const alive = new Map<number, Signalled>()
    for (const pid of pids) {
      if (!alive.has(pid)) alive.set(pid, isProcessId(pid) && signalZero(pid))
    }
    // The liveness pass is over: processes marked to die during this check die now, before any
    // start time is read.
    for (const [pid, answer] of alive) {
      const entry = table.get(pid)
      if (answer !== false && entry?.dieDuringCheck === true) table.delete(pid)
    }
    return alive
  }

  const statesOf = (alive: ReadonlyMap<number, Signalled>, startTimeOf: ReadonlySet<number>): ReadonlyMap<number, ProcessState> => {
    const states = new Map<number, ProcessState>()
    for (const [pid, answer] of alive) {
      const entry = table.get(pid)
      // A zombie's state is readable only where /proc shows it; a hidden one stays alive.
      if (answer === false || (entry?.zombie === true && !hiddenFromUs(entry))) states.set(pid, dead)
      else if (!startTimeOf.has(pid)) states.set(pid, aliveWith(entry, Option.none(), answer))
      else {
        const read = readStartTime(pid)
        switch (read._tag) {
          case "Read":
            states.set(pid, aliveWith(entry, Option.some(read.startTime), answer))
            break
          case "Unreadable":
            states.set(pid, aliveWith(entry, Option.none(), answer))
            break
          case "Gone": {
            const again = signalZero(pid)
            states.set(pid, again !== false ? aliveWith(undefined, Option.none(), answer) : dead)
            break
          }
        }
      }
    }
    return states
  }

  const fresh = (startTime: string, evidence: ProcessEvidence, owner: number): Entry => ({
    startTime,
    uid: owner,
    stopped: false,
    evidence,
    unreadable: false,
    dieDuringCheck: false,
    zombie: false
  })

  const existing = (pid: number): Entry => {
    const entry = table.get(pid)
    if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
    return entry
  }

  const selfPid = options.self?.pid ?? defaultSelfPid
  checkPid(selfPid)
  const self = { pid: selfPid, startTime: options.self?.startTime ?? freshStartTime() }
  table.set(self.pid, fresh(self.startTime, defaultEvidence, uid))

  const probe: ProcessProbe = makeProcessProbe({
    // As on the OS, this process's start time is read when it is asked for, so a test that makes it
    // unreadable sees a holder without one.
    self: Effect.sync((): ProcessIdentity => {
      const read = readStartTime(self.pid)
      return { pid: self.pid, startTime: read._tag === "Read" ? Option.some(read.startTime) : Option.none() }
    }),
    pidDomain: Effect.sync(() => pidDomain),
    signal: (pids) => Effect.sync(() => livenessPass(pids)),
    user: Effect.sync(() => Option.some(uid)),
    states: (alive, startTimeOf) => Effect.sync(() => statesOf(alive, startTimeOf)),
    processes: Effect.sync(() => [...table].flatMap(([pid, entry]) => (entry.zombie ? [] : [{ pid, arguments: entry.evidence.arguments }]))),
    evidence: (pid, parts) =>
      Effect.sync(() => {
        const hook = evidenceHooks.get(pid)
        evidenceHooks.delete(pid)
        hook?.()
        const entry = table.get(pid)
        const evidence = entry === undefined || entry.zombie ? exited : { ...entry.evidence, user: entry.evidence.user ?? read(entry.uid) }
        return onlyParts(evidence, parts)
      })
  })

  return {
    probe,
    self,
    spawn(options) {
      let pid = options?.pid
      if (pid === undefined) {
        while (table.has(nextPid)) nextPid++
        pid = nextPid++
      } else {
        checkPid(pid)
        if (table.has(pid)) throw new Error(`pid ${pid} is already a live process; use reuse(${pid})`)
      }
      const startTime = options?.startTime ?? freshStartTime()
      const evidence = withStaged(defaultEvidence, options ?? {})
      table.set(pid, fresh(startTime, evidence, options?.uid ?? uid))
      return { pid, startTime }
    },
    onNextEvidence(pid, hook) {
      evidenceHooks.set(pid, hook)
    },
    stage(pid, evidence) {
      const entry = table.get(pid)
      if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
      entry.evidence = withStaged(entry.evidence, evidence)
    },
    stop(pid) {
      existing(pid).stopped = true
    },
    resume(pid) {
      existing(pid).stopped = false
    },
    setHidePid(on = true) {
      hidePid = on
    },
    kill(pid) {
      table.delete(pid)
    },
    exitUnreaped(pid) {
      const entry = table.get(pid)
      if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
      entry.zombie = true
    },
    reuse(pid, startTime, owner) {
      checkPid(pid)
      const reused = startTime ?? freshStartTime()
      table.set(pid, fresh(reused, defaultEvidence, owner ?? uid))
      return reused
    },
    setStartTimeUnreadable(pid, unreadable = true) {
      const entry = table.get(pid)
      if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
      entry.unreadable = unreadable
    },
    dieDuringCheck(pid) {
      const entry = table.get(pid)
      if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
      entry.dieDuringCheck = true
    },
    setPidDomain(domain) {
      pidDomain = Option.fromNullable(domain)
    },
    isAlive: (pid) => table.has(pid),
    startTimeOf: (pid) => table.get(pid)?.startTime,
    get stats() {
      return { kills, startTimeReads }
    }
  }
}

export const layer = (processes: MemoryProcesses): Layer.Layer<ProcessProbe> => Layer.succeed(ProcessProbe, processes.probe)
