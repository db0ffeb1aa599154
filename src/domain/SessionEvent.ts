/**
 * What `watch` reports: a session appeared, changed, or is gone. Tagged by `_tag`, as every union
 * of the library (verdicts, errors), so that `Match.tag` and `_tag` checks work; the schema encodes
 * the tag under the contract's `type` key, so that `--json` is the schema's encoding and nothing else.
 */
import * as Schema from "effect/Schema"
import { Session } from "./Session.js"
import type { VerdictName } from "./Verdict.js"

/**
 * Why a session is gone: the verdict its file now gets (`dead`, `parked`, `pid_reused`,
 * `malformed`, `spare`, …), or `removed` when the file is no longer there.
 */
export const GoneVerdict = Schema.Literal(
  "removed",
  "not_a_record",
  "not_a_file",
  "too_large",
  "unreadable",
  "malformed",
  "invalid_pid",
  "pid_mismatch",
  "no_name",
  "empty_session_id",
  "parked",
  "spare",
  "foreign_owner",
  "other_pid_domain",
  "dead",
  "pid_reused"
)
export type GoneVerdict = typeof GoneVerdict.Type

// Every verdict but `live` ends a session, and nothing else does: this stops compiling when a
// verdict is added to the union and not here.
type Ending = Exclude<VerdictName, "live"> | "removed"
const everyVerdictEnds: [Ending] extends [GoneVerdict] ? [GoneVerdict] extends [Ending] ? true : never : never = true
void everyVerdictEnds

/** The `_tag` of an event, encoded as the contract's `type`. */
const tag = <T extends string>(value: T) => Schema.propertySignature(Schema.Literal(value)).pipe(Schema.fromKey("type"))

export const Appeared = Schema.Struct({
  _tag: tag("appeared"),
  session: Session
})

export const Changed = Schema.Struct({
  _tag: tag("changed"),
  session: Session,
  previous: Session
})

export const Gone = Schema.Struct({
  _tag: tag("gone"),
  /** The session as it was last seen live. */
  session: Session,
  verdict: GoneVerdict
})

export const SessionEvent = Schema.Union(Appeared, Changed, Gone)
export type SessionEvent = typeof SessionEvent.Type

export const appeared = (session: Session): SessionEvent => ({ _tag: "appeared", session })
export const changed = (session: Session, previous: Session): SessionEvent => ({ _tag: "changed", session, previous })
export const gone = (session: Session, verdict: GoneVerdict): SessionEvent => ({ _tag: "gone", session, verdict })
