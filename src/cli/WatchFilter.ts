/**
 * `watch --name`, `--session`, `--status`: which events a filtered watch prints.
 *
 * An event is printed when its session matches the filter before or after it: an `appeared` or a
 * `gone` by the session it carries, a `changed` by either side. So a session that comes to match
 * is first seen in the `changed` that brings it in, and one that stops matching is last seen in the
 * `changed` that takes it out, showing what it became; nothing more is printed of it until it
 * matches again. No `gone` is made up for it: `gone` says that a session ended, and a filtered
 * watch must not tell a script that a session still running has ended.
 */
import { normalizeName } from "../domain/Names.js"
import type { Session } from "../domain/Session.js"
import type { SessionEvent } from "../domain/SessionEvent.js"
import type { WatchFilter } from "./Invocation.js"

/** Whether the filter asks for anything: an empty one prints every event. */
export const filters = (filter: WatchFilter): boolean => filter.name !== undefined || filter.sessionId !== undefined || filter.statuses.length > 0

/** Whether `session` matches every criterion given. */
export const sessionMatches = (filter: WatchFilter) => {
  const name = filter.name === undefined ? undefined : normalizeName(filter.name)
  return (session: Session): boolean =>
    (name === undefined || normalizeName(session.name) === name) &&
    (filter.sessionId === undefined || session.sessionId === filter.sessionId) &&
    (filter.statuses.length === 0 || (session.status !== null && filter.statuses.includes(session.status)))
}

/** Whether the event is printed: its session matches before or after it. */
export const eventMatches = (filter: WatchFilter) => {
  const matches = sessionMatches(filter)
  return (event: SessionEvent): boolean => matches(event.session) || (event._tag === "changed" && matches(event.previous))
}
