/**
 * What `watch` reports between two reads of the registry: the events that lead from the sessions
 * tracked so far to what the new read says. See `Watch.ts` for the rules these implement.
 */
import * as Equal from "effect/Equal"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Session } from "../domain/Session.js"
import { appeared, changed, gone, type SessionEvent } from "../domain/SessionEvent.js"
import type { RegistryEntry, VerdictName } from "../domain/Verdict.js"
import type { ProcessState } from "./ProcessProbe.js"
import { type AddressScope, provenStartOf, withAddresses } from "./RegistryScan.js"

/** Verdicts that a write in progress or a removal in progress can produce: worth one more look. */
const inconclusive: ReadonlySet<VerdictName> = new Set(["malformed", "unreadable"])

interface Tracked {
  readonly session: Session
  /** The last read found the file inconclusive; one more such reading ends the session. */
  readonly doubted: boolean
  /** What the probe said of the pid just before the read that found the session live; undefined when it was not probed. */
  readonly process: ProcessState | undefined
  /** The start time of the session's process: the one that proved its record, else the probe's before the read. */
  readonly startTime: string | undefined
}

/** The live sessions of the last read, by file. */
export type Tracking = ReadonlyMap<string, Tracked>

export const emptyTracking: Tracking = new Map()

const sameSession = Schema.equivalence(Session)

const startTimeOf = (state: ProcessState | undefined): string | undefined =>
  state !== undefined && state._tag === "Alive" ? Option.getOrUndefined(state.startTime) : undefined

/**
 * Whether a session read now is the process tracked before: the same `startedAtMs` when both
 * records carry one, and the same start time of the process when both are known (the one that
 * proved each record, else the probe's before each read). A process that took the pid may write
 * the same `startedAt` (a resumed conversation); its start time is its own. Only a proof of another
 * process counts: what is missing or unreadable proves nothing.
 */
const sameProcess = (now: Session, startedNow: string | undefined, before: Tracked): boolean => {
  const a = now.startedAtMs
  const b = before.session.startedAtMs
  if (a !== null && b !== null && a !== b) return false
  return startedNow === undefined || before.startTime === undefined || startedNow === before.startTime
}

/** Stopping or continuing a process changes its session (`stopped`) without touching its file. */
const sameState = (a: ProcessState, b: ProcessState): boolean =>
  a._tag === "Dead"
    ? b._tag === "Dead"
    : b._tag === "Alive" && Equal.equals(a.startTime, b.startTime) && a.stopped === b.stopped && a.otherUser === b.otherUser &&
      a.hidden === b.hidden

/**
 * One read: the events that lead from the sessions tracked so far to what `entries` say, sorted
 * by pid (a `gone` before the `appeared` of the same pid), and what to track from now on.
 * `processes` is what the probe said of the tracked pids just before the read.
 *
 * With `scope`, the read covered only those files (a change notification names the file that
 * changed): a tracked session whose file is outside it stays as it was, and the addresses are
 * worked out again over every live session, read now or kept, since one name that appears,
 * changes or goes can change another session's address (two live sessions sharing a name are
 * addressed by socket). Without `scope`, `entries` are the whole registry.
 */
export const diffRegistry = (
  before: Tracking,
  entries: ReadonlyArray<RegistryEntry>,
  processes: ReadonlyMap<number, ProcessState> = new Map(),
  scope?: ReadonlySet<string>,
  addressScope: AddressScope = { names: true }
): readonly [Tracking, ReadonlyArray<SessionEvent>] => {
  const after = new Map<string, Tracked>()
  const events: Array<SessionEvent> = []
  const now = new Map(entries.map((entry) => [entry.file, entry]))
  const kept: Array<string> = []
  for (const [file, tracked] of before) {
    if (scope !== undefined && !scope.has(file)) {
      after.set(file, tracked)
      kept.push(file)
      continue
    }
    const verdict = now.get(file)?.verdict
    if (verdict === undefined) events.push(gone(tracked.session, "removed"))
    else if (verdict._tag === "live") continue
    else if (inconclusive.has(verdict._tag) && !tracked.doubted) after.set(file, { ...tracked, doubted: true })
    else events.push(gone(tracked.session, verdict._tag))
  }
  const read = entries.flatMap((entry) => (entry.verdict._tag === "live" ? [entry.verdict.session] : []))
  // A read's addresses were worked out over the live sessions it read: again, over every session
  // still reported live. A partial read did not read the kept ones; and a session held through an
  // inconclusive read is still live, so its name is still shared: handing that name to another
  // session as its address, for a moment, could send a message to the held one.
  const held = [...after.values()].flatMap((tracked) => (tracked.doubted ? [tracked.session] : []))
  const sessions = scope === undefined && held.length === 0
    ? read
    : readdress(read, kept.flatMap((file) => (after.get(file)!.doubted ? [] : [after.get(file)!.session])), held, addressScope)
  for (const [i, session] of sessions.entries()) {
    if (i >= read.length) {
      // A kept or held session whose address the read changed (a session that appeared shares its
      // name, or the one that shared it is gone): only its address differs, and a held session
      // stays held.
      const tracked = after.get(session.file)!
      if (!sameSession(session, tracked.session)) {
        after.set(session.file, { ...tracked, session })
        events.push(changed(session, tracked.session))
      }
      continue
    }
    const tracked = before.get(session.file)
    const process = processes.get(session.pid)
    // `read[i]` is the session as the scan proved it; `session` may be a copy with its address.
    const startTime = provenStartOf(read[i]!) ?? startTimeOf(process)
    after.set(session.file, { session, doubted: false, process, startTime })
    if (tracked === undefined) events.push(appeared(session))
    else if (!sameProcess(session, startTime, tracked)) events.push(gone(tracked.session, "pid_reused"), appeared(session))
    else if (!sameSession(session, tracked.session)) events.push(changed(session, tracked.session))
  }
  // Array.prototype.sort is stable: a pid's `gone` stays before its `appeared`.
  events.sort((a, b) => a.session.pid - b.session.pid)
  return [after, events]
}

/** The sessions just read, then the kept ones, then the held ones, each with its address over all of them. */
const readdress = (
  read: ReadonlyArray<Session>,
  kept: ReadonlyArray<Session>,
  held: ReadonlyArray<Session>,
  scope: AddressScope
): ReadonlyArray<Session> => withAddresses([...read, ...kept, ...held], scope)

/** Whether the probe's answers leave every tracked session as the last read found it. */
export const unchangedSince = (tracking: Tracking, processes: ReadonlyMap<number, ProcessState>): boolean =>
  [...tracking.values()].every(({ doubted, process, session }) => {
    const current = processes.get(session.pid)
    return !doubted && process !== undefined && current !== undefined && sameState(process, current)
  })
