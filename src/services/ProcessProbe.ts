/**
 * Asks the OS about processes. A registry file is never proof of a live session (the files outlive
 * a crash, and pids are reused), so every "live" answer goes through this port.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Observed, unreadable } from "../domain/Observed.js"

export type { Observed }

export type ProcessState =
  | { readonly _tag: "Dead" }
  /**
   * `kill(pid, 0)` succeeded or failed with EPERM. `startTime` is the process's start time as
   * Claude Code's `procStart` spells it (Linux: field 22 of `/proc/<pid>/stat`; macOS:
   * `ps -o lstart=` under `TZ=UTC LC_ALL=C`), or none when it cannot be read here.
   */
  | {
    readonly _tag: "Alive"
    readonly startTime: Option.Option<string>
    /**
     * Stopped by a signal or a tracer (Linux state `T` or `t`, macOS `ps` state `T`): it runs no
     * code until continued, so a message sent to it is not read meanwhile.
     */
    readonly stopped: boolean
    /** `kill(pid, 0)` failed with EPERM: another user's process, which this one may not signal. */
    readonly otherUser: boolean
    /**
     * Alive, yet `/proc` shows nothing of it (`hidepid`): another user's process, whose state and
     * start time cannot be read.
     */
    readonly hidden: boolean
  }

/**
 * What one `kill(pid, 0)` answered: `true` it succeeded, `"denied"` it failed with EPERM (a live
 * process of another user), `false` the pid is dead (ESRCH, or not a process id).
 */
export type Signalled = boolean | "denied"

/** Whether a `kill(pid, 0)` answer is a live process (EPERM included). */
export const signalledAlive = (answer: Signalled | undefined): boolean => answer === true || answer === "denied"

/** What one liveness pass found. Start times are read from it later, without signalling any pid again. */
export interface Liveness {
  /** Whether the pass found the pid alive (`kill(pid, 0)` succeeded or failed with EPERM). */
  readonly isAlive: (pid: number) => boolean
  /**
   * The state of each of `pids`, which the pass checked: `Dead` when the pass found it dead, else
   * alive, with a start time read now for those in `startTimeOf`. As in `check`, a pid whose start
   * time cannot be read because it died meanwhile is `Dead`, never alive with an unknown start.
   */
  readonly states: (
    pids: Iterable<number>,
    startTimeOf: ReadonlySet<number>
  ) => Effect.Effect<ReadonlyMap<number, ProcessState>>
}

/** A process as a lock names its holder: its pid and, where this OS can read it, its start time. */
export interface ProcessIdentity {
  readonly pid: number
  /** As `ProcessState`'s `startTime`: Claude Code's `procStart` spelling, or none where it cannot be read. */
  readonly startTime: Option.Option<string>
}

/**
 * What this machine shows of how a process runs: its arguments, its environment and its working
 * directory. Each is read or not, with the reason (another user's environment is not readable; a
 * platform without `/proc` shows less). Nothing here is proof of identity: a caller that needs the
 * evidence to belong to a given process checks that process again after reading it.
 */
export interface ProcessEvidence {
  /** The argument vector, program first (Linux `/proc/<pid>/cmdline` split on NUL). */
  readonly arguments: Observed<ReadonlyArray<string>>
  /**
   * The environment the process was started with (Linux `/proc/<pid>/environ`; a name given twice
   * answers its first value, as `getenv` does). Changes the process made to itself later are not in it.
   */
  readonly environment: Observed<ReadonlyMap<string, string>>
  /** Where the process runs now (Linux: the target of `/proc/<pid>/cwd`). */
  readonly workingDirectory: Observed<string>
  /**
   * The mount namespace it runs in. A process in another one (a container, `unshare --mount`)
   * reads other files at the same paths: its `/etc/claude-code/…` and its project are not ours.
   * Absent where the platform has no mount namespaces: the process sees the files we see.
   */
  readonly mountNamespace?: Observed<MountNamespace> | undefined
  /**
   * The user it runs as, its effective uid (Linux: the second `Uid:` field of `/proc/<pid>/status`):
   * Claude Code takes a repository as the session's own only when that user owns it. Absent from a
   * layer that does not read it: then it is not known.
   */
  readonly user?: Observed<number> | undefined
}

/** A process's mount namespace, seen from this one. */
export interface MountNamespace {
  /** Linux: the target of `/proc/<pid>/ns/mnt`, `mnt:[<inode>]`. */
  readonly id: string
  /** Whether it is this process's own: then its paths name the files we read at them. */
  readonly ours: boolean
  /** Where its `/` is reached from here (Linux `/proc/<pid>/root`): prefixed to its paths, they name its files. */
  readonly root: string
}

/** The parts of `ProcessEvidence` a caller may ask for alone. */
export type EvidencePart = "arguments" | "environment" | "workingDirectory" | "mountNamespace" | "user"

/** Whether `parts` asks for `part` (no parts named: all of them). */
export const asks = (parts: ReadonlyArray<EvidencePart> | undefined, part: EvidencePart): boolean => parts === undefined || parts.includes(part)

/** What a part not asked for reads as. */
export const notAskedFor: Observed<never> = unreadable("not asked for")

/**
 * `evidence` with only `parts` read, the rest not asked for; all of it without `parts`. A platform
 * without mount namespaces still shows none.
 */
export const onlyParts = (evidence: ProcessEvidence, parts: ReadonlyArray<EvidencePart> | undefined): ProcessEvidence => ({
  arguments: asks(parts, "arguments") ? evidence.arguments : notAskedFor,
  environment: asks(parts, "environment") ? evidence.environment : notAskedFor,
  workingDirectory: asks(parts, "workingDirectory") ? evidence.workingDirectory : notAskedFor,
  mountNamespace: evidence.mountNamespace === undefined || asks(parts, "mountNamespace") ? evidence.mountNamespace : notAskedFor,
  user: evidence.user === undefined || asks(parts, "user") ? evidence.user : notAskedFor
})

/** A process as `ProcessProbe.processes` lists it. */
export interface ListedProcess {
  readonly pid: number
  /** As `ProcessEvidence.arguments`. */
  readonly arguments: Observed<ReadonlyArray<string>>
}

export interface ProcessProbe {
  /**
   * This process. It belongs to the port, not to `process.pid`, so that a memory process table can
   * say who "we" are: a lock of ours must be recognized as held by a live process in memory exactly
   * as it is on the OS.
   */
  readonly self: Effect.Effect<ProcessIdentity>
  /**
   * This machine's pid domain (`linux:<machine-id>:<target of /proc/self/ns/pid>`), or none when it
   * cannot be computed (not Linux, no machine id): then the domain check is skipped.
   */
  readonly pidDomain: Effect.Effect<Option.Option<string>>
  /**
   * One `kill(pid, 0)` per distinct pid, and a start time read only for the pids in `startTimeOf`
   * that are alive (batched into one `ps` call on macOS). A pid whose start time cannot be read
   * because it died meanwhile is `Dead`, never alive with an unknown start.
   */
  readonly check: (
    pids: Iterable<number>,
    startTimeOf: ReadonlySet<number>
  ) => Effect.Effect<ReadonlyMap<number, ProcessState>>
  /**
   * `check` in two steps: one `kill(pid, 0)` per distinct pid now, start times later from the
   * result. A caller can then skip all its work for the dead pids (the registry's `list` reads no
   * file whose pid is dead: such a record cannot be live) and still read start times only for the
   * records that passed every other check.
   */
  readonly checkLiveness: (pids: Iterable<number>) => Effect.Effect<Liveness>
  /**
   * The process's arguments, environment, working directory and mount namespace, each read or
   * unreadable with a reason; never a failure. With `parts`, only those are read and the rest are
   * `notAskedFor`: a home is found from the arguments and the environment, two files of `/proc`
   * rather than four. A layer may read and answer more than it is asked (one that ignores `parts`
   * answers everything); a caller relies only on the parts it asked for.
   */
  readonly evidence: (pid: number, parts?: ReadonlyArray<EvidencePart>) => Effect.Effect<ProcessEvidence>
  /**
   * The user this process runs as (its effective uid), or none where the platform has none
   * (Windows). A record file is the reader's own when this user owns it.
   */
  readonly user: Effect.Effect<Option.Option<number>>
  /**
   * Every process this machine lists to this one (Linux: the numeric entries of `/proc`) with its
   * arguments, for finding the Claude homes of the sessions that run: the arguments tell which
   * processes to read the `evidence` of. Empty where the platform shows no other process's
   * environment (macOS), since a process's home is known only from it. Never a failure.
   */
  readonly processes: Effect.Effect<ReadonlyArray<ListedProcess>>
}

export const ProcessProbe = Context.GenericTag<ProcessProbe>("claude-peers/ProcessProbe")

/** What a layer implements; `make` derives `check` and `checkLiveness` from it. */
export interface ProcessProbePrimitives extends Pick<ProcessProbe, "self" | "pidDomain" | "evidence" | "processes"> {
  /**
   * One `kill(pid, 0)` per distinct pid, none for what is not a process id (dead): what each
   * answered, keyed in first-seen order. Only ESRCH means dead; EPERM is another user's live
   * process (`"denied"`; a layer that answers `true` for it loses only the `otherUser` flag).
   */
  readonly signal: (pids: Iterable<number>) => Effect.Effect<ReadonlyMap<number, Signalled>>
  /** The user this process runs as; none when left out. */
  readonly user?: Effect.Effect<Option.Option<number>>
  /**
   * The state of each pid of `alive`, as that pass found it: `Dead` when it was found dead, or has
   * exited since without being reaped (a zombie); else alive, with a start time read now for those
   * in `startTimeOf`, and `otherUser` when its answer was `"denied"`. A pid whose start time cannot
   * be read because it died meanwhile is `Dead`.
   */
  readonly states: (
    alive: ReadonlyMap<number, Signalled>,
    startTimeOf: ReadonlySet<number>
  ) => Effect.Effect<ReadonlyMap<number, ProcessState>>
}

/**
 * The probe from a layer's primitives: `check` is one pass of `signal` and its `states`, and a
 * `Liveness` answers for the pids it is asked about, a pid its pass did not check being dead.
 */
export const make = ({ signal, states, user, ...primitives }: ProcessProbePrimitives): ProcessProbe => ({
  ...primitives,
  user: user ?? Effect.succeed(Option.none()),
  check: (pids, startTimeOf) => Effect.flatMap(signal(pids), (alive) => states(alive, startTimeOf)),
  checkLiveness: (pids) =>
    Effect.map(signal(pids), (answers): Liveness => {
      // Only the live answers are kept: a pass holds its liveness for a whole scan, and most pids
      // of a large registry are dead.
      const alive = new Map<number, Signalled>()
      for (const [pid, answer] of answers) if (signalledAlive(answer)) alive.set(pid, answer)
      return {
        isAlive: (pid) => signalledAlive(alive.get(pid)),
        states: (pids, startTimeOf) =>
          Effect.suspend(() => {
            const asked = new Map<number, Signalled>()
            for (const pid of pids) asked.set(pid, alive.get(pid) ?? false)
            return states(asked, startTimeOf)
          })
      }
    })
})
