/**
 * How a refusal names a session and what was asked for: the fields of a live session that tell it
 * from its rivals (with its Claude home where several are read), and the query as its evidence.
 */
import type { Candidate, SessionQuery } from "./Errors.js"
import type { Session } from "./Session.js"

/** A session as a refusal's evidence names it. */
export const candidateOf = (s: Session): Candidate => ({
  pid: s.pid,
  sessionId: s.sessionId,
  name: s.name,
  socketPath: s.socketPath,
  kind: s.kind,
  jobId: s.jobId,
  ...(s.home === undefined ? {} : { home: s.home })
})

/** A query by session id or by name, as a refusal's evidence carries it (the other one null). */
export const queryOf = (
  query: { readonly sessionId: string; readonly name?: undefined } | { readonly name: string; readonly sessionId?: undefined }
): SessionQuery => query.sessionId !== undefined ? { sessionId: query.sessionId, name: null } : { sessionId: null, name: query.name }
