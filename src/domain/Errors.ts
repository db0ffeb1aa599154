/**
 * Failures a caller can act on. Each is a `Schema.TaggedError` whose fields are its evidence (which
 * session, which competing records, which revisions) and whose `reason` is the contract's reason code,
 * a field of the schema; the `message` a person reads is derived from them, as `@effect/platform`'s
 * `SystemError` derives its own. Encoding an error with its schema is what `--json` prints, so the
 * evidence never has a second, hand-written shape. I/O failures stay `PlatformError`s (reason `io`).
 */
import * as Schema from "effect/Schema"
import { messageProblemSentence } from "./Message.js"
import { Prediction, Receipt } from "./SendOutcome.js"
import { VerdictName } from "./Verdict.js"

/** What was asked for: a session id or a name (the other is null). */
export const SessionQuery = Schema.Struct({
  sessionId: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String)
})
export type SessionQuery = typeof SessionQuery.Type

const asked = (query: SessionQuery): string => query.sessionId !== null ? `session id ${quote(query.sessionId)}` : `name ${quote(query.name ?? "")}`

/** A value from outside, quoted for a sentence and cut short: a message never reprints a long input. */
export const quote = (text: string, max = 80): string => JSON.stringify(text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** At most this many files or records are named in a message; the evidence fields hold all of them. */
const namedInMessage = 5

const listed = <A>(items: ReadonlyArray<A>, show: (item: A) => string, separator: string): string =>
  items.slice(0, namedInMessage).map(show).join(separator) +
  (items.length > namedInMessage ? `${separator}and ${items.length - namedInMessage} more` : "")

const baseName = (file: string): string => file.slice(file.lastIndexOf("/") + 1)

/** A registry file that carried the asked id or name, and why it does not answer. */
export const NotLiveReason = Schema.Struct({
  file: Schema.String,
  verdict: VerdictName,
  detail: Schema.String
})
export type NotLiveReason = typeof NotLiveReason.Type

export class NotLive extends Schema.TaggedError<NotLive>("claude-peers/NotLive")("NotLive", {
  reason: Schema.tag("not_live"),
  query: SessionQuery,
  /** One entry per registry file that carried the id or name; empty when none did. */
  reasons: Schema.Array(NotLiveReason)
}) {
  override get message(): string {
    const why = this.reasons.length === 0
      ? "no registry file carries it"
      : listed(this.reasons, (r) => `${baseName(r.file)}: ${r.detail}`, "; ")
    return `no live session has ${asked(this.query)}: ${why}`
  }
}

/** A live record competing for an id or a name: what a caller needs to tell the sessions apart. */
export const Candidate = Schema.Struct({
  pid: Schema.Int,
  sessionId: Schema.String,
  name: Schema.String,
  socketPath: Schema.NullOr(Schema.String),
  kind: Schema.NullOr(Schema.String),
  jobId: Schema.NullOr(Schema.String),
  /** The Claude home the record is in: present when several homes are read. */
  home: Schema.optionalWith(Schema.String, { exact: true })
})
export type Candidate = typeof Candidate.Type

/** ` in homes A and B`, when the candidates are in more than one Claude home; else nothing. */
const inHomes = (candidates: ReadonlyArray<Candidate>): string => {
  const homes = [...new Set(candidates.flatMap((c) => (c.home === undefined ? [] : [c.home])))]
  return homes.length > 1 ? ` in the Claude homes ${listed(homes, (home) => quote(home), " and ")}` : ""
}

export class IdentityMismatch extends Schema.TaggedError<IdentityMismatch>("claude-peers/IdentityMismatch")(
  "IdentityMismatch",
  {
    reason: Schema.tag("identity_mismatch"),
    query: SessionQuery,
    /**
     * What is shared: the asked id or name itself (`query`: more than one live record carries it), or
     * the found session's other half of its identity (`sessionId` or `name`, carried by another live record).
     */
    shared: Schema.Literal("query", "sessionId", "name"),
    /** Every live record competing, sorted by pid; the first is the one the query found when `shared` is not `query`. */
    candidates: Schema.Array(Candidate)
  }
) {
  override get message(): string {
    const pids = (records: ReadonlyArray<Candidate>) => listed(records, (c) => String(c.pid), ", ")
    if (this.shared === "query") {
      return `${asked(this.query)} belongs to ${this.candidates.length} live sessions (pids ${pids(this.candidates)}${
        inHomes(this.candidates)
      }): refusing to pick one`
    }
    const [found, ...rivals] = this.candidates
    const carriers = `live pid${rivals.length > 1 ? "s" : ""} ${pids(rivals)}${inHomes(this.candidates)}`
    if (this.shared === "sessionId") {
      return `${asked(this.query)} resolves to pid ${found?.pid}, but its session id ${
        quote(found?.sessionId ?? "")
      } is also carried by ${carriers}: refusing to pick one`
    }
    return `${asked(this.query)} resolves to pid ${found?.pid}, but its name ${
      quote(found?.name ?? "")
    } is also the name of ${carriers} (names compared as Claude Code compares them), so a message sent by name could reach another session. The session itself is unambiguous by its id: resolve it with --allow-shared-name (library: allowSharedName), and address it by its socket`
  }
}

export class ChangedDuringWrite extends Schema.TaggedError<ChangedDuringWrite>("claude-peers/ChangedDuringWrite")(
  "ChangedDuringWrite",
  {
    reason: Schema.tag("changed_during_write"),
    path: Schema.String,
    /**
     * - `revision`: the file is not at the revision the caller expected;
     * - `overtaken`: another writer changed it between this update's read and its rename;
     * - `lock_held`: another claude-peers writer held the lock for the whole wait.
     */
    conflict: Schema.Literal("revision", "overtaken", "lock_held"),
    /** The revision the caller expected, or null when it gave none. */
    expectedRevision: Schema.NullOr(Schema.String),
    /** The revision of the bytes seen on disk, or null when they were not read (a held lock) or are gone. */
    actualRevision: Schema.NullOr(Schema.String),
    /** How many times the update redid its edit on another writer's bytes before giving up (`overtaken`). */
    attempts: Schema.Int,
    /**
     * The lock and what it says of its holder (`lock_held`), else null. `stopped` is present, and
     * true, when the holder is a stopped process (state `T`: a signal or a debugger stopped it), which
     * holds the lock until it is continued or ends.
     */
    lock: Schema.NullOr(Schema.Struct({ path: Schema.String, holder: Schema.String, stopped: Schema.optional(Schema.Literal(true)) }))
  }
) {
  override get message(): string {
    const again = "Nothing was written; read it again and decide on the new revision."
    switch (this.conflict) {
      case "revision":
        return `${this.path} is at revision ${
          this.actualRevision ?? "(none)"
        }, not the expected ${this.expectedRevision}: it changed since it was read. ${again}`
      case "overtaken":
        return this.expectedRevision !== null
          ? `${this.path} changed while it was being written (now at revision ${this.actualRevision ?? "unknown"}, expected ${this.expectedRevision}). ${again}`
          : `${this.path} kept changing while it was being written (${this.attempts} attempts, each overtaken by another writer). Nothing was written; try again.`
      case "lock_held":
        if (this.lock?.stopped === true) {
          return `${this.path} is locked by a claude-peers process that is stopped (${this.lock.holder}, lock ${this.lock.path}): it holds the lock until it is continued (kill -CONT) or ends. Nothing was written; continue or end it, then try again.`
        }
        return `${this.path} is being updated by another claude-peers process (${this.lock?.holder ?? "unknown holder"}, lock ${
          this.lock?.path ?? "?"
        }), still after the whole wait. Nothing was written; try again.`
    }
  }
}

/** Why a settings file is refused, as the contract names it. */
export const SettingsProblem = Schema.Literal("symlink", "not_a_file", "too_large", "not_an_object", "invalid_value", "too_deep")
export type SettingsProblem = typeof SettingsProblem.Type

/** Whether the refusal came from a read (`settings get`) or an update, which has then written nothing. */
const During = Schema.Literal("read", "update")

export class InvalidSettings extends Schema.TaggedError<InvalidSettings>("claude-peers/InvalidSettings")("InvalidSettings", {
  reason: Schema.tag("invalid_settings"),
  path: Schema.String,
  problem: SettingsProblem,
  /**
   * What exactly is wrong, in a few words: the entry type (`a FIFO`), the size, the depth, the value
   * (`crossSessionInbound is "maybe", not one of …`).
   */
  detail: Schema.String,
  during: During,
  /** For a settings file that is a symbolic link: the path it points to (resolved against the link's directory). */
  linkTarget: Schema.optional(Schema.String)
}) {
  override get message(): string {
    const written = this.during === "update" ? " Nothing was written." : ""
    switch (this.problem) {
      case "symlink":
        if (this.linkTarget === undefined) {
          return `${this.path} is a symbolic link. It is not updated: the rename would replace the link with a file and cut it off from where it points. Update the file it points to, or replace the link with a file.${written}`
        }
        if (this.detail !== `a symbolic link to ${this.linkTarget}`) return `${this.path} is ${this.detail}. It is not updated.${written}`
        return `${this.path} is a symbolic link to ${this.linkTarget}. It is not updated: the rename would replace the link with a file and cut it off from where it points. To update ${this.linkTarget} through the link, as Claude Code writes, run \`claude-peers settings set|reset --through-link\` (the library's \`throughLink\` option), or update that file directly.${written}`
      case "not_a_file":
        if (this.linkTarget !== undefined) return `${this.path} is ${this.detail}, not a settings file. It is not updated.${written}`
        return `${this.path} is not a regular file but ${this.detail}, so it was not read.${written}`
      case "too_large":
      case "too_deep":
      case "not_an_object":
        return `${this.path} is not a valid settings file: ${this.detail}.${written}`
      case "invalid_value":
        return `${this.path} is not a valid settings file: ${this.detail}. Claude Code treats an unrecognized value as at least "hold"; \`claude-peers settings set\` or \`reset\` repairs it.${written}`
    }
  }
}

export class InvalidJson extends Schema.TaggedError<InvalidJson>("claude-peers/InvalidJson")("InvalidJson", {
  reason: Schema.tag("invalid_json"),
  path: Schema.String,
  /** What the JSON parser said, or why the bytes are not UTF-8 JSON at all. */
  detail: Schema.String,
  during: During,
  /** For a settings file that is a symbolic link: the path it points to (resolved against the link's directory). */
  linkTarget: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `${this.path} is not valid JSON: ${this.detail}.${this.during === "update" ? " Nothing was written." : ""}`
  }
}

export class NotAddressable extends Schema.TaggedError<NotAddressable>("claude-peers/NotAddressable")("NotAddressable", {
  reason: Schema.tag("not_addressable"),
  query: SessionQuery,
  /** The live session that answers the query, and that nothing of this user can deliver to. */
  session: Candidate,
  /**
   * Why: `no_socket`, its inbox did not start; `other_user`, its process is another user's, whose
   * socket this user cannot connect to. Absent in errors made before it existed: `no_socket`.
   */
  because: Schema.optionalWith(Schema.Literal("no_socket", "other_user"), { default: () => "no_socket" as const })
}) {
  override get message(): string {
    return this.because === "other_user"
      ? `${
        asked(this.query)
      } is live (pid ${this.session.pid}) but its process is another user's: its socket is in that user's private runtime directory, which this user cannot connect to (Claude Code's own reader does not list it)`
      : `${
        asked(this.query)
      } is live (pid ${this.session.pid}) but has no messaging socket: its inbox did not start (Claude Code's --restricted, or messaging switched off), so nothing can deliver to it`
  }
}

/**
 * An error of these classes (or `@effect/platform`'s, also Schema classes) encoded by its own
 * schema: the class is the schema, so its evidence has no second, hand-written shape. The command's
 * `--json` errors print it.
 */
export const encodeError = (error: { readonly constructor: unknown }): Record<string, unknown> =>
  Schema.encodeSync(error.constructor as Schema.Schema<unknown, Record<string, unknown>>)(error)

/** What a send or a wait was about: the live session it resolved, as a refusal names it. */
const Receiver = Candidate

export { Prediction, Receipt } from "./SendOutcome.js"

export class InboundRefused extends Schema.TaggedError<InboundRefused>("claude-peers/InboundRefused")("InboundRefused", {
  reason: Schema.tag("inbound_refused"),
  query: SessionQuery,
  session: Receiver,
  predicted: Prediction
}) {
  override get message(): string {
    return `pid ${this.session.pid} (${
      quote(this.session.name)
    }) refuses messages from other sessions (its inbound policy in effect is "refuse", decided by ${this.predicted.decidedBy}): nothing was relayed`
  }
}

export class WouldBeHeld extends Schema.TaggedError<WouldBeHeld>("claude-peers/WouldBeHeld")("WouldBeHeld", {
  reason: Schema.tag("would_be_held"),
  query: SessionQuery,
  session: Receiver,
  predicted: Prediction
}) {
  override get message(): string {
    return `pid ${this.session.pid} (${
      quote(this.session.name)
    }) would hold a message from another session for its user's approval (decided by ${this.predicted.decidedBy}), and a held message may expire unseen: nothing was relayed. Send with --allow-hold (library: allowHold) to have it held`
  }
}

/** Why a relayed message is not known to have reached the session, as the contract names it. */
export const DeliveryCause = Schema.Literal(
  "relay_not_found",
  "no_send_tool",
  "timed_out",
  "relay_failed",
  "endpoint_refused",
  "target_changed",
  "target_stopped",
  "interrupted"
)
export type DeliveryCause = typeof DeliveryCause.Type

/** What the relay process did, where one ran. */
export const RelayRun = Schema.Struct({
  /** The relay's executable as it was started. */
  executable: Schema.String,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(Schema.String),
  /** The last line the relay wrote to stderr, terminal-safe and cut short; null when it wrote none. */
  lastStderrLine: Schema.NullOr(Schema.String)
})
export type RelayRun = typeof RelayRun.Type

export class DeliveryFailed extends Schema.TaggedError<DeliveryFailed>("claude-peers/DeliveryFailed")("DeliveryFailed", {
  reason: Schema.tag("delivery_failed"),
  cause: DeliveryCause,
  /** What happened, in a few words (what was looked for, what the endpoint saw, what the receipt said). */
  detail: Schema.String,
  /** The session the message was meant for, when it was resolved. */
  session: Schema.NullOr(Receiver),
  /** The relay's run, when one was started. */
  relay: Schema.NullOr(RelayRun),
  /**
   * The receipt, when the relay returned one and the send still failed (`target_changed`): kept as
   * evidence of what Claude Code reported, never taken for a delivery. The message was relayed then
   * (`sendResult` stays null: the receipt is that evidence), and the sentence says so.
   */
  receipt: Schema.optionalWith(Schema.NullOr(Receipt), { default: () => null }),
  /** The receiver's policy as predicted before relaying, when the send got that far. */
  predicted: Schema.optionalWith(Schema.NullOr(Prediction), { default: () => null }),
  /**
   * `SendMessage`'s result when Claude Code had reported the message in the session's inbox before
   * the send failed (a timeout, a relay that exited, a notice not understood): the message is there,
   * held or not, and sending it again would deliver it twice. Null when it was not reported sent.
   */
  sendResult: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
}) {
  override get message(): string {
    const to = this.session === null ? "" : ` to pid ${this.session.pid} (${quote(this.session.name)})`
    const sent = this.sendResult !== null
      ? "; SendMessage had reported it in the session's inbox, so sending it again would deliver it twice"
      : this.receipt !== null && this.receipt.outcome !== "refused"
      ? `; SendMessage had reported it ${this.receipt.outcome} at the session's socket, so it is in the inbox of whichever session was there`
      : ""
    return `the message${to} is not known to have been delivered (${this.cause}): ${this.detail}${sent}`
  }
}

/** Why a message cannot be sent as it is: what Claude Code would not accept, decided before anything runs. */
export const MessageProblem = Schema.Literal("empty", "too_long", "not_utf8")
export type MessageProblem = typeof MessageProblem.Type

export class InvalidMessage extends Schema.TaggedError<InvalidMessage>("claude-peers/InvalidMessage")("InvalidMessage", {
  reason: Schema.tag("invalid_message"),
  problem: MessageProblem,
  /** The message's length in UTF-16 code units, as Claude Code counts it. */
  length: Schema.Int,
  /** The longest message accepted. */
  limit: Schema.Int
}) {
  override get message(): string {
    return messageProblemSentence(this.problem, this.length, this.limit)
  }
}

/** The states `wait` can wait for. */
export const WaitState = Schema.Literal("idle", "busy", "waiting", "gone")
export type WaitState = typeof WaitState.Type

export class TimedOut extends Schema.TaggedError<TimedOut>("claude-peers/TimedOut")("TimedOut", {
  reason: Schema.tag("timed_out"),
  query: SessionQuery,
  until: Schema.Array(WaitState),
  timeoutMillis: Schema.Number,
  /** The session as last seen, still in none of the states. */
  session: Receiver
}) {
  override get message(): string {
    return `pid ${this.session.pid} (${quote(this.session.name)}) did not become ${this.until.join(" or ")} within ${this.timeoutMillis} ms`
  }
}

export class Ended extends Schema.TaggedError<Ended>("claude-peers/Ended")("Ended", {
  reason: Schema.tag("ended"),
  query: SessionQuery,
  until: Schema.Array(WaitState),
  session: Receiver,
  /** The verdict that ended the session (`dead`, `removed`, `pid_reused`, …). */
  verdict: Schema.String
}) {
  override get message(): string {
    return `pid ${this.session.pid} (${quote(this.session.name)}) ended (${this.verdict}) before it became ${this.until.join(" or ")}`
  }
}
