/**
 * What `watch` reports between two reads of the registry: the events that lead from the sessions
 * tracked so far to what the new read says. See `Watch.ts` for the rules these implement.
 */
import * as Equal from "effect/Equal"
import * as Schema from "effect/Schema"
import { Session } from "../domain/Session.js"
import { appeared, changed, gone, type SessionEvent } from "../domain/SessionEvent.js"
import type { RegistryEntry, VerdictName } from "../domain/Verdict.js"
import type { ProcessState } from "./ProcessProbe.js"

/** Verdicts that a write in progress or a removal in progress can produce: worth one more look. */
const inconclusive: ReadonlySet<VerdictName> = new Set(["malformed", "unreadable"])

interface Tracked {
  readonly session: Session
  /** The last read found the file inconclusive; one more such reading ends the session. */
  readonly doubted: boolean
  /** What the probe said of the pid just before the read that found the session live; undefined when it was not probed. */
  readonly process: ProcessState | undefined
}

/** The live sessions of the last read, by file. */
export type Tracking = ReadonlyMap<string, Tracked>

export const emptyTracking: Tracking = new Map()

const sameSession = Schema.equivalence(Session)

const sameProcess = (a: Session, b: Session): boolean => a.startedAtMs === null || b.startedAtMs === null || a.startedAtMs === b.startedAtMs

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
 */
export const diffRegistry = (
  before: Tracking,
  entries: ReadonlyArray<RegistryEntry>,
  processes: ReadonlyMap<number, ProcessState> = new Map()
): readonly [Tracking, ReadonlyArray<SessionEvent>] => {
  const after = new Map<string, Tracked>()
  const events: Array<SessionEvent> = []
  const now = new Map(entries.map((entry) => [entry.file, entry]))
  for (const [file, tracked] of before) {
    const verdict = now.get(file)?.verdict
    if (verdict === undefined) events.push(gone(tracked.session, "removed"))
    else if (verdict._tag === "live") continue
    else if (inconclusive.has(verdict._tag) && !tracked.doubted) after.set(file, { ...tracked, doubted: true })
    else events.push(gone(tracked.session, verdict._tag))
  }
  for (const entry of entries) {
    if (entry.verdict._tag !== "live") continue
    const session = entry.verdict.session
    const previous = before.get(entry.file)?.session
    after.set(entry.file, { session, doubted: false, process: processes.get(session.pid) })
    if (previous === undefined) events.push(appeared(session))
    else if (!sameProcess(session, previous)) events.push(gone(previous, "pid_reused"), appeared(session))
    else if (!sameSession(session, previous)) events.push(changed(session, previous))
  }
  // Array.prototype.sort is stable: a pid's `gone` stays before its `appeared`.
  events.sort((a, b) => a.session.pid - b.session.pid)
  return [after, events]
}

/** Whether the probe's answers leave every tracked session as the last read found it. */
export const unchangedSince = (tracking: Tracking, processes: ReadonlyMap<number, ProcessState>): boolean =>
  [...tracking.values()].every(({ doubted, process, session }) => {
    const current = processes.get(session.pid)
    return !doubted && process !== undefined && current !== undefined && sameState(process, current)
  })
