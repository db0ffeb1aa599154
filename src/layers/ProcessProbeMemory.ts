/**
 * A process table the test controls, behind the same `ProcessProbe` rules as the Node layer: one
 * liveness check per distinct pid, a start time read only for the alive pids in `startTimeOf`, and
 * a process that dies between the two reported `Dead`. The same conformance suite runs against both,
 * so a test written against this table holds against the OS.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { type Liveness, type ProcessIdentity, ProcessProbe, type ProcessState } from "../services/ProcessProbe.js"

export interface MemoryProcessesOptions {
  /** "This process", the one the program runs as (a lock of ours names it). Default pid 424242, a fresh start time. */
  readonly self?: { readonly pid?: number; readonly startTime?: string }
}

export interface MemoryProcesses {
  readonly probe: ProcessProbe
  /** The process the program runs as: alive in the table from the start, as any running program is on the OS. */
  readonly self: { readonly pid: number; readonly startTime: string }
  /**
   * Starts a process. Pids are allocated from 1000 upward when not given; the start time defaults
   * to a fresh decimal string, distinct per process. Spawning on a live pid is a test bug and
   * throws: use `reuse` for a pid taken over by a new process.
   */
  spawn(options?: { readonly pid?: number; readonly startTime?: string }): { pid: number; startTime: string }
  /** The process exits and is reaped: no process has the pid any more. */
  kill(pid: number): void
  /**
   * The process exits but its parent does not reap it: `kill(pid, 0)` still succeeds, as for any
   * zombie, yet nothing runs; the probe must report it `Dead`. `kill` reaps it.
   */
  exitUnreaped(pid: number): void
  /** The pid now belongs to a new live process with a new start time, which is returned. */
  reuse(pid: number, startTime?: string): string
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
  unreadable: boolean
  dieDuringCheck: boolean
  /** Exited, not reaped. */
  zombie: boolean
}

/** As on the OS: 0 and negatives address process groups, and no process has such a pid. */
const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid >= 1 && pid <= 2147483647

const dead: ProcessState = { _tag: "Dead" }
const aliveWith = (startTime: Option.Option<string>): ProcessState => ({ _tag: "Alive", startTime })

export const defaultSelfPid = 424242

export const makeMemoryProcesses = (options: MemoryProcessesOptions = {}): MemoryProcesses => {
  const table = new Map<number, Entry>()
  let nextPid = 1000
  let nextStartTime = 100001
  let pidDomain: Option.Option<string> = Option.some("linux:memory:pid:[1]")
  let kills = 0
  let startTimeReads = 0

  const freshStartTime = (): string => String(nextStartTime++)

  const checkPid = (pid: number): void => {
    if (!isProcessId(pid)) throw new RangeError(`not a process id: ${pid}`)
  }

  const signalZero = (pid: number): boolean => {
    kills++
    return table.has(pid)
  }

  type StartTimeRead = { readonly _tag: "Read"; readonly startTime: string } | { readonly _tag: "Gone" } | {
    readonly _tag: "Unreadable"
  }

  const readStartTime = (pid: number): StartTimeRead => {
    startTimeReads++
    const entry = table.get(pid)
    if (entry === undefined) return { _tag: "Gone" }
    return entry.unreadable ? { _tag: "Unreadable" } : { _tag: "Read", startTime: entry.startTime }
  }

  const livenessPass = (pids: Iterable<number>): Map<number, boolean> => {
    const alive = new Map<number, boolean>()
    for (const pid of pids) {
      if (!alive.has(pid)) alive.set(pid, isProcessId(pid) && signalZero(pid))
    }
    // The liveness pass is over: processes marked to die during this check die now, before any
    // start time is read.
    for (const [pid, isAlive] of alive) {
      const entry = table.get(pid)
      if (isAlive && entry?.dieDuringCheck === true) table.delete(pid)
    }
    return alive
  }

  const check = (pids: Iterable<number>, startTimeOf: ReadonlySet<number>): ReadonlyMap<number, ProcessState> =>
    statesOf(livenessPass(pids), startTimeOf)

  const checkLiveness = (pids: Iterable<number>): Liveness => {
    const alive = livenessPass(pids)
    return {
      isAlive: (pid) => alive.get(pid) === true,
      states: (pids, startTimeOf) =>
        Effect.sync(() => {
          const asked = new Map<number, boolean>()
          for (const pid of pids) asked.set(pid, alive.get(pid) === true)
          return statesOf(asked, startTimeOf)
        })
    }
  }

  const statesOf = (alive: ReadonlyMap<number, boolean>, startTimeOf: ReadonlySet<number>): ReadonlyMap<number, ProcessState> => {
    const states = new Map<number, ProcessState>()
    for (const [pid, isAlive] of alive) {
      if (!isAlive || table.get(pid)?.zombie === true) states.set(pid, dead)
      else if (!startTimeOf.has(pid)) states.set(pid, aliveWith(Option.none()))
      else {
        const read = readStartTime(pid)
        switch (read._tag) {
          case "Read":
            states.set(pid, aliveWith(Option.some(read.startTime)))
            break
          case "Unreadable":
            states.set(pid, aliveWith(Option.none()))
            break
          case "Gone":
            states.set(pid, signalZero(pid) ? aliveWith(Option.none()) : dead)
            break
        }
      }
    }
    return states
  }

  const selfPid = options.self?.pid ?? defaultSelfPid
  checkPid(selfPid)
  const self = { pid: selfPid, startTime: options.self?.startTime ?? freshStartTime() }
  table.set(self.pid, { startTime: self.startTime, unreadable: false, dieDuringCheck: false, zombie: false })

  const probe: ProcessProbe = {
    // As on the OS, this process's start time is read when it is asked for, so a test that makes it
    // unreadable sees a holder without one.
    self: Effect.sync((): ProcessIdentity => {
      const read = readStartTime(self.pid)
      return { pid: self.pid, startTime: read._tag === "Read" ? Option.some(read.startTime) : Option.none() }
    }),
    pidDomain: Effect.sync(() => pidDomain),
    check: (pids, startTimeOf) => Effect.sync(() => check(pids, startTimeOf)),
    checkLiveness: (pids) => Effect.sync(() => checkLiveness(pids))
  }

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
      table.set(pid, { startTime, unreadable: false, dieDuringCheck: false, zombie: false })
      return { pid, startTime }
    },
    kill(pid) {
      table.delete(pid)
    },
    exitUnreaped(pid) {
      const entry = table.get(pid)
      if (entry === undefined) throw new Error(`pid ${pid} is not a live process`)
      entry.zombie = true
    },
    reuse(pid, startTime) {
      checkPid(pid)
      const fresh = startTime ?? freshStartTime()
      table.set(pid, { startTime: fresh, unreadable: false, dieDuringCheck: false, zombie: false })
      return fresh
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

export const layer = (processes: MemoryProcesses): Layer.Layer<ProcessProbe> =>
  Layer.succeed(ProcessProbe, processes.probe)
