import { Schema } from "effect"
import { Status } from "./Status.js"

/**
 * A live Claude Code session, in our spelling. Absent values are `null` so that `--json` always
 * prints every key; the vendor spelling is known only to `Record.ts`.
 */
export const Session = Schema.Struct({
  pid: Schema.Int,
  sessionId: Schema.String,
  name: Schema.String,
  cwd: Schema.NullOr(Schema.String),
  socketPath: Schema.String,
  status: Schema.NullOr(Status),
  rawStatus: Schema.NullOr(Schema.String),
  statusUpdatedAtMs: Schema.NullOr(Schema.Number),
  updatedAtMs: Schema.NullOr(Schema.Number),
  startedAtMs: Schema.NullOr(Schema.Number),
  kind: Schema.NullOr(Schema.String),
  waitingFor: Schema.NullOr(Schema.String),
  jobId: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  tmux: Schema.NullOr(Schema.String),
  /** The registry file the session was read from. */
  file: Schema.String
})
export type Session = typeof Session.Type
