/**
 * The lock that serializes this project's writers of one settings file,
 * `.settings.json.claude-peers.lock` beside it, created exclusively and holding
 * `<pid> <start time>[ <pid domain>]\n`.
 *
 * Claude Code takes no lock, so this one protects nobody's keys (the compare-before-rename does
 * that); it makes several updates guarded by one revision end with exactly one winner, and keeps
 * this project's writers from overtaking each other for nothing. Two rules earn their place here:
 * - A lock is broken only when its holder is provably gone: dead, its pid reused, or, for a lock
 *   that names no holder this machine can check (garbage, a bare pid, an empty file left by a writer
 *   killed between create and write, a holder in another pid domain), once it has stayed unchanged
 *   for longer than any live writer holds one. A live holder is waited for, never broken.
 * - A lock path that is not a regular file (a directory, a FIFO, a link) is not ours: it is never
 *   opened and never removed, and the update fails naming it.
 */
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { ChangedDuringWrite } from "../domain/Errors.js"
import { sameStartTime } from "../domain/Record.js"
import { entryTypeWords } from "../domain/VerdictWords.js"
import { type Files, type FileVersion, sameBytes, sameVersion } from "./Files.js"
import type { ProcessProbe } from "./ProcessProbe.js"
import * as Timing from "./Timing.js"

/** The lock beside a settings file. */
export const lockFileOf = (settingsFile: string): string => path.join(path.dirname(settingsFile), `.${path.basename(settingsFile)}.claude-peers.lock`)

/**
 * A temporary file of this project beside the settings file. The name cannot collide with Claude
 * Code's own `settings.json.tmp.<pid>`, and carries the pid so that one left by a killed process can
 * be recognized and removed.
 */
export const tempFileOf = (settingsFile: string, pid: number, nonce: string): string =>
  path.join(path.dirname(settingsFile), `.${path.basename(settingsFile)}.claude-peers-${pid}-${nonce}.tmp`)

export const tempFilePattern = (settingsFile: string): RegExp =>
  new RegExp(`^\\.${path.basename(settingsFile).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.claude-peers-([1-9][0-9]*)-[0-9a-z]+\\.tmp$`)

/**
 * A nonce for a temporary file's name. It needs no randomness: the create is exclusive, so a name
 * already taken fails and the next nonce is tried; the time keeps leftovers of an earlier process
 * with the same pid out of the way.
 */
export const makeNonces = () => {
  let counter = 0
  return Effect.sync(() => `${Date.now().toString(36)}${(counter++).toString(36)}`)
}

const newFileMode = 0o600
/**
 * A lock of this project holds a pid, a start time and a pid domain: anything longer is not one.
 * Such a lock is compared by its bytes; a longer one, which may be of any size, by its version (its
 * entry, size, times and first bytes), so that what is read of a lock stays bounded.
 */
const maxLockBytes = 4096

type LockHolder =
  | { readonly _tag: "Process"; readonly pid: number; readonly startTime: string | null; readonly pidDomain: string | null }
  | { readonly _tag: "Unknown" }

/** The spelling of an unknown start time, for a holder that could not read its own. */
const unknownStartTime = "-"

/**
 * `<pid> <start time>[ <pid domain>]\n`. The start time may hold spaces (macOS spells it as a date),
 * so a trailing word is the pid domain only when it has the domain's form (`linux:…`).
 */
export const parseLock = (bytes: Uint8Array): LockHolder => {
  if (bytes.length > maxLockBytes) return { _tag: "Unknown" }
  const match = /^([1-9][0-9]{0,9}) ([^\n]+)\n$/.exec(new TextDecoder().decode(bytes))
  if (match === null || Number(match[1]) > 2147483647) return { _tag: "Unknown" }
  const words = match[2]!.trim().split(/\s+/)
  const pidDomain = words.length > 1 && /^linux:\S+$/.test(words[words.length - 1]!) ? words.pop()! : null
  const startTime = words.join(" ")
  if (startTime.length === 0) return { _tag: "Unknown" }
  return { _tag: "Process", pid: Number(match[1]), startTime: startTime === unknownStartTime ? null : startTime, pidDomain }
}

export const lockText = (pid: number, startTime: Option.Option<string>, pidDomain: Option.Option<string>): string =>
  `${pid} ${Option.getOrElse(startTime, () => unknownStartTime)}${Option.match(pidDomain, { onNone: () => "", onSome: (d) => ` ${d}` })}\n`

/** A lock as it was seen: its bytes, or, for one longer than any lock of ours, its version. */
type SeenLock =
  | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }
  | { readonly _tag: "Version"; readonly version: FileVersion }

const sameLock = (a: SeenLock, b: SeenLock): boolean =>
  a._tag === "Bytes" ? b._tag === "Bytes" && sameBytes(a.bytes, b.bytes) : b._tag === "Version" && sameVersion(a.version, b.version)

type LockState =
  | { readonly _tag: "Acquired" }
  | { readonly _tag: "Vanished" }
  | { readonly _tag: "Held"; readonly lock: SeenLock }

/**
 * `Clock.currentTimeNanos`: monotonic on the default clock (`process.hrtime`), and driven by
 * `TestClock.adjust` in tests, where `currentTimeMillis` is the wall clock.
 */
const monotonicMillis: Effect.Effect<number> = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos / 1_000_000n))

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"
const isAlreadyExists = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "AlreadyExists"

export interface LockContext {
  readonly files: Files
  readonly probe: ProcessProbe
  readonly timings: Timing.Timings
  readonly settingsFile: string
  readonly nonce: Effect.Effect<string>
}

export const makeLock = ({ files, nonce, probe, settingsFile, timings }: LockContext) => {
  const lockFile = lockFileOf(settingsFile)

  const notALock = (type: keyof typeof entryTypeWords) =>
    Effect.fail(
      new SystemError({
        reason: "BadResource",
        module: "FileSystem",
        method: "lockSettings",
        pathOrDescriptor: lockFile,
        description: `the settings lock path is ${entryTypeWords[type]}, not a lock file of claude-peers; it was left alone (remove it to update the settings)`
      })
    )

  /** The lock's bytes without opening anything that is not a regular file. */
  const readLock: Effect.Effect<LockState, PlatformError> = Effect.gen(function*() {
    const info = yield* files.lstat(lockFile).pipe(Effect.map(Option.some), Effect.catchIf(isNotFound, () => Effect.succeedNone))
    if (Option.isNone(info)) return { _tag: "Vanished" }
    if (info.value.type !== "File") return yield* notALock(info.value.type)
    const read = yield* files.readBounded(lockFile, { maxBytes: maxLockBytes, followLinks: false }).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone)
    )
    if (Option.isNone(read)) return { _tag: "Vanished" }
    if (read.value._tag === "NotRegular") return yield* notALock(read.value.type)
    if (read.value._tag === "Read") return { _tag: "Held", lock: { _tag: "Bytes", bytes: read.value.bytes } }
    const current = yield* files.current(lockFile, maxLockBytes)
    if (!current.present) return { _tag: "Vanished" }
    // Swapped for something that is not a regular file since the read.
    if (current.version === null) return yield* notALock("Unknown")
    if (current.bytes !== null) return { _tag: "Held", lock: { _tag: "Bytes", bytes: current.bytes } }
    return { _tag: "Held", lock: { _tag: "Version", version: current.version } }
  })

  /**
   * Lets go of the lock, if it is still ours: a writer that could not check us (another pid domain)
   * may have broken it while we held it, and its lock is not ours to remove.
   */
  const release = (own: Uint8Array) =>
    files.readBounded(lockFile, { maxBytes: maxLockBytes, followLinks: false }).pipe(
      Effect.flatMap((read) => read._tag === "Read" && sameBytes(read.bytes, own) ? files.removeFile(lockFile) : Effect.void),
      Effect.ignore
    )

  /**
   * One attempt at the lock. The release is registered in the same uninterruptible step as the
   * create, so an interruption can never leave a lock of ours behind; a lock that could not be
   * removed names this process, which is dead by the time anybody looks, and is broken then.
   */
  const tryLock = (own: Uint8Array): Effect.Effect<LockState, PlatformError, Scope.Scope> =>
    Effect.acquireRelease(
      files.writeNewFile(lockFile, own, newFileMode).pipe(
        Effect.as<LockState>({ _tag: "Acquired" }),
        Effect.catchIf(isAlreadyExists, () => readLock)
      ),
      (state) => (state._tag === "Acquired" ? release(own) : Effect.void)
    )

  /**
   * Breaks a stale lock by renaming a lock of ours over it, but only while it is still the lock seen
   * (the same bytes, or the same version). A plain remove-then-create would let two writers that
   * both saw the stale lock remove each other's fresh one and both go ahead.
   */
  const takeOver = (own: Uint8Array, stale: SeenLock, selfPid: number): Effect.Effect<"Acquired" | "Lost", PlatformError, Scope.Scope> =>
    Effect.flatMap(nonce, (id) => {
      const temp = tempFileOf(settingsFile, selfPid, id)
      const replace = stale._tag === "Bytes"
        ? files.replaceIfUnchanged(temp, lockFile, stale.bytes, maxLockBytes)
        : files.replaceIfSameVersion(temp, lockFile, stale.version, maxLockBytes)
      return Effect.acquireRelease(
        files.writeNewFile(temp, own, newFileMode).pipe(
          Effect.zipRight(replace),
          Effect.map((outcome) => (outcome._tag === "Replaced" ? "Acquired" as const : "Lost" as const)),
          Effect.ensuring(Effect.ignore(files.removeFile(temp)))
        ),
        (outcome) => (outcome === "Acquired" ? release(own) : Effect.void)
      )
    })

  /**
   * What the probe says of a holder of this machine: provably gone (dead, a zombie included, or its
   * pid now another process's), stopped (it holds the lock until it is continued), or running.
   */
  const holderState = (pid: number, startTime: string | null) =>
    Effect.map(probe.check([pid], new Set([pid])), (states): "gone" | "stopped" | "running" => {
      const state = states.get(pid)
      if (
        state === undefined || state._tag === "Dead" ||
        (startTime !== null && Option.isSome(state.startTime) && !sameStartTime(startTime, state.startTime.value))
      ) return "gone"
      return state.stopped === true ? "stopped" : "running"
    })

  /**
   * What to do about a lock held by somebody else: break it now, wait on, or, once waited long
   * enough, give up (a live holder, said to be stopped when it is) or break it (a holder nobody can
   * check here). A stopped holder is still waited for: it may be continued, and breaking its lock
   * would let it write over this update once it is.
   */
  const judge = (holder: LockHolder, here: Option.Option<string>, unchangedFor: number) =>
    Effect.gen(function*() {
      const waited = (limit: Duration.Duration) => unchangedFor >= Duration.toMillis(limit)
      if (holder._tag === "Unknown") return waited(timings.lockWait) ? "break" : "wait"
      const foreign = holder.pidDomain !== null && Option.isSome(here) && holder.pidDomain !== here.value
      if (foreign) return waited(timings.foreignLockWait) ? "break" : "wait"
      const state = yield* holderState(holder.pid, holder.startTime)
      if (state === "gone") return "break"
      if (!waited(timings.lockWait)) return "wait"
      return state === "stopped" ? "give up, stopped" : "give up"
    })

  const lockHeld = (expectedRevision: string | null, holder: string, stopped: boolean) =>
    Effect.fail(
      new ChangedDuringWrite({
        path: settingsFile,
        conflict: "lock_held",
        expectedRevision,
        actualRevision: null,
        attempts: 0,
        lock: stopped ? { path: lockFile, holder, stopped } : { path: lockFile, holder }
      })
    )

  const holderWords = (holder: LockHolder): string =>
    holder._tag === "Unknown" ? "a lock that names no holder" : `pid ${holder.pid}${holder.pidDomain === null ? "" : ` in ${holder.pidDomain}`}`

  /**
   * Takes the lock for the rest of the scope. The wait starts again whenever the lock changes hands,
   * since writers are then making progress: twenty updates started at once must all get their turn,
   * not fail behind each other.
   */
  const acquire = (expectedRevision: string | null): Effect.Effect<void, ChangedDuringWrite | PlatformError, Scope.Scope> =>
    Effect.gen(function*() {
      const self = yield* probe.self
      const here = yield* probe.pidDomain
      const own = new TextEncoder().encode(lockText(self.pid, self.startTime, here))
      let seen: SeenLock | null = null
      // Every wait here is measured on the monotonic clock: a wall clock stepped back by an NTP
      // correction or by hand must not stretch the wait, nor one stepped forward cut it short.
      let changedAt = yield* monotonicMillis
      for (;;) {
        const state = yield* tryLock(own)
        if (state._tag === "Acquired") return
        // Let go between the create and the read: try again at once.
        if (state._tag === "Vanished") continue
        const now = yield* monotonicMillis
        if (seen === null || !sameLock(seen, state.lock)) {
          seen = state.lock
          changedAt = now
        }
        const holder: LockHolder = state.lock._tag === "Bytes" ? parseLock(state.lock.bytes) : { _tag: "Unknown" }
        const decision = yield* judge(holder, here, now - changedAt)
        if (decision === "break" && (yield* takeOver(own, state.lock, self.pid)) === "Acquired") return
        if (decision === "give up" || decision === "give up, stopped") {
          return yield* lockHeld(expectedRevision, holderWords(holder), decision === "give up, stopped")
        }
        yield* Timing.sleep(timings.lockPoll, `the settings lock ${lockFile}, held by ${holderWords(holder)}`)
      }
    })

  return { lockFile, acquire }
}
