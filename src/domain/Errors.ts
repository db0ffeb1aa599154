/**
 * Failures a caller can act on. Each carries the evidence needed to act (which session, which
 * pids, which revisions) and a sentence a person can read; being Schemas, `--json` encodes them
 * without a second hand-written shape. I/O failures stay `PlatformError`s with their path.
 */
import { Schema } from "effect"

export class NotLive extends Schema.TaggedError<NotLive>()("NotLive", {
  /** The session id or name that was asked for. */
  query: Schema.Struct({ sessionId: Schema.NullOr(Schema.String), name: Schema.NullOr(Schema.String) }),
  /** Why no live record answers: one line per registry file that carried the id or name. */
  reasons: Schema.Array(Schema.Struct({ file: Schema.String, verdict: Schema.String, detail: Schema.String })),
  message: Schema.String
}) {
  readonly reason = "not_live" as const
}

export class IdentityMismatch extends Schema.TaggedError<IdentityMismatch>()("IdentityMismatch", {
  query: Schema.Struct({ sessionId: Schema.NullOr(Schema.String), name: Schema.NullOr(Schema.String) }),
  /** Every live pid that competes for the id or the name. */
  pids: Schema.Array(Schema.Number),
  message: Schema.String
}) {
  readonly reason = "identity_mismatch" as const
}

export class ChangedDuringWrite extends Schema.TaggedError<ChangedDuringWrite>()("ChangedDuringWrite", {
  path: Schema.String,
  /** The revision the caller expected, or null when the caller gave none. */
  expectedRevision: Schema.NullOr(Schema.String),
  /** The revision of the bytes seen on disk, or null when it could not be read (a held lock). */
  observedRevision: Schema.NullOr(Schema.String),
  message: Schema.String
}) {
  readonly reason = "changed_during_write" as const
}

export class InvalidSettings extends Schema.TaggedError<InvalidSettings>()("InvalidSettings", {
  path: Schema.String,
  message: Schema.String
}) {
  readonly reason = "invalid_settings" as const
}

export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", {
  path: Schema.String,
  message: Schema.String
}) {
  readonly reason = "invalid_json" as const
}
