/**
 * A process table the test controls, behind the same `ProcessProbe` rules as the Node layer: one
 * liveness check per distinct pid, a start time read only for the alive pids in `startTimeOf`, and
 * a process that dies between the two reported `Dead`. The same conformance suite runs against both,
 * so a test written against this table holds against the OS.
 */
import { Effect, Layer, Option } from "effect"
import { type Liveness, ProcessProbe, type ProcessState } from "../services/ProcessProbe.js"

export interface MemoryProcesses {
  readonly probe: ProcessProbe
  /**
   * Starts a process. Pids are allocated from 1000 upward when not given; the start time defaults
   * to a fresh decimal string, distinct per process. Spawning on a live pid is a test bug and
   * throws: use `reuse` for a pid taken over by a new process.
   */
  spawn(options?: { readonly pid?: number; readonly startTime?: string }): { pid: number; startTime: string }
  kill(pid: number): void
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
}

/** As on the OS: 0 and negatives address process groups, and no process has such a pid. */
const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid >= 1 && pid <= 2147483647

const dead: ProcessState = { _tag: "Dead" }
const aliveWith = (startTime: Option.Option<string>): ProcessState => ({ _tag: "Alive", startTime })

export const makeMemoryProcesses = (): MemoryProcesses => {
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
      if (!isAlive) states.set(pid, dead)
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

  const probe: ProcessProbe = {
    pidDomain: Effect.sync(() => pidDomain),
    check: (pids, startTimeOf) => Effect.sync(() => check(pids, startTimeOf)),
    checkLiveness: (pids) => Effect.sync(() => checkLiveness(pids))
  }

  return {
    probe,
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
      table.set(pid, { startTime, unreadable: false, dieDuringCheck: false })
      return { pid, startTime }
    },
    kill(pid) {
      table.delete(pid)
    },
    reuse(pid, startTime) {
      checkPid(pid)
      const fresh = startTime ?? freshStartTime()
      table.set(pid, { startTime: fresh, unreadable: false, dieDuringCheck: false })
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

export const layerMemory = (processes: MemoryProcesses): Layer.Layer<ProcessProbe> =>
  Layer.succeed(ProcessProbe, processes.probe)
