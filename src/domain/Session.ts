import * as Schema from "effect/Schema"
import { Status } from "./Status.js"

/**
 * Why a live session has no `address`: `no_socket`, its inbox did not start (`--restricted`);
 * `other_user`, its process is another user's (`kill(pid, 0)` answers EPERM), whose socket sits in
 * that user's private runtime directory, so no sender of this user can connect to it.
 */
export const Unaddressable = Schema.Literal("no_socket", "other_user")
export type Unaddressable = typeof Unaddressable.Type

/**
 * A live Claude Code session, in our spelling. Absent values are `null` so that `--json` always
 * prints every key; the vendor spelling is known only to `Record.ts`.
 */
export const Session = Schema.Struct({
  pid: Schema.Int,
  sessionId: Schema.String,
  name: Schema.String,
  /**
   * What a sender hands Claude Code's `SendMessage` to reach exactly this session (`Address.ts`
   * decides it): its `name` when that name reaches it alone, else `uds:<socketPath>`, which no other
   * process can hold; null when nothing can deliver to it (`unaddressable` says why).
   */
  address: Schema.NullOr(Schema.String),
  cwd: Schema.NullOr(Schema.String),
  /** The session's inbox; null when it did not start (`--restricted`): the session runs but cannot receive messages. */
  socketPath: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Status),
  rawStatus: Schema.NullOr(Schema.String),
  statusUpdatedAtMs: Schema.NullOr(Schema.Number),
  updatedAtMs: Schema.NullOr(Schema.Number),
  startedAtMs: Schema.NullOr(Schema.Number),
  kind: Schema.NullOr(Schema.String),
  /** Claude Code's own `entrypoint`: `sdk-cli` for a `claude -p` run, which registers like an interactive session. */
  entrypoint: Schema.NullOr(Schema.String),
  /** Claude Code's own `nameSource`: `derived`, `user`, `collision`, `peer`, … */
  nameSource: Schema.NullOr(Schema.String),
  waitingFor: Schema.NullOr(Schema.String),
  jobId: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  tmux: Schema.NullOr(Schema.String),
  /** The registry file the session was read from. */
  file: Schema.String,
  /**
   * Its process is stopped (SIGSTOP, a debugger: state `T`/`t`): it is still the session, and
   * resolves, but reads no message until continued.
   */
  stopped: Schema.Boolean,
  /** Why `address` is null; null when it is not. */
  unaddressable: Schema.NullOr(Unaddressable),
  /**
   * The transcript Claude Code writes for the session (`<home>/projects/<cwd made a directory
   * name>/<sessionId>.jsonl`), or null when it is not there. Looked up by `resolve` and `inspect`
   * only (a stat per session); absent from `list`.
   */
  transcriptPath: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  /** The transcript's last write (epoch ms): the activity signal when a status is latched. Null with no transcript. */
  transcriptUpdatedAtMs: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  /** The Claude home the session registered in: present when the program reads several homes. */
  home: Schema.optionalWith(Schema.String, { exact: true })
})
export type Session = typeof Session.Type

/**
 * A session as `Session`'s encoding spells it (every key, in the schema's order), without building
 * the schema's encoder: `list --json` prints nothing else, and runs many times a minute. Every
 * field's encoding is the identity, so this is a projection; a property test holds it to the schema.
 */
export const sessionJson = (s: Session): Session => ({
  pid: s.pid,
  sessionId: s.sessionId,
  name: s.name,
  address: s.address,
  cwd: s.cwd,
  socketPath: s.socketPath,
  status: s.status,
  rawStatus: s.rawStatus,
  statusUpdatedAtMs: s.statusUpdatedAtMs,
  updatedAtMs: s.updatedAtMs,
  startedAtMs: s.startedAtMs,
  kind: s.kind,
  entrypoint: s.entrypoint,
  nameSource: s.nameSource,
  waitingFor: s.waitingFor,
  jobId: s.jobId,
  version: s.version,
  tmux: s.tmux,
  file: s.file,
  stopped: s.stopped,
  unaddressable: s.unaddressable,
  ...(s.transcriptPath === undefined ? {} : { transcriptPath: s.transcriptPath }),
  ...(s.transcriptUpdatedAtMs === undefined ? {} : { transcriptUpdatedAtMs: s.transcriptUpdatedAtMs }),
  ...(s.home === undefined ? {} : { home: s.home })
})
