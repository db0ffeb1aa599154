/**
 * Reads and updates `crossSessionInbound` in the user settings file.
 *
 * Claude Code rewrites this file itself (temp file + rename) and reloads it into running sessions,
 * so another writer is the normal case: a setting of the user's silently lost is the worst bug this
 * service can have. Every update therefore compares the bytes it started from with the bytes on
 * disk just before its rename, and edits only its own member of the document. Claude Code takes no
 * lock, so the lock here only serializes this project's writers (so that of several updates guarded
 * by one revision exactly one wins); the comparison is what protects everybody else's keys.
 */
import type { PlatformError } from "@effect/platform/Error"
import { randomBytes, bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Context, Effect, Either, Layer, Option, type Scope } from "effect"
import * as path from "node:path"
import { ChangedDuringWrite, InvalidJson, InvalidSettings } from "../domain/Errors.js"
import { sameStartTime } from "../domain/Record.js"
import { entryTypeWords } from "../domain/Verdict.js"
import {
  applyChange,
  decodeDocument,
  type DocumentProblem,
  emptyRevision,
  encodeDocument,
  type InboundPolicy,
  makeSettingsView,
  maxSettingsBytes,
  type PolicyChange,
  policyOf,
  revisionOf,
  type SettingsDocument,
  type SettingsView,
  verifyChange
} from "../domain/Settings.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { type EntryType, Files } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"

export type ReadError = InvalidJson | InvalidSettings | PlatformError
export type UpdateError = ChangedDuringWrite | InvalidJson | InvalidSettings | PlatformError

export interface Settings {
  /**
   * The user file's value. A missing or 0-byte file reads as `{}`. Links are followed: reading
   * through a link (a dotfiles checkout, say) is what Claude Code does too, and changes nothing.
   */
  readonly read: Effect.Effect<SettingsView, ReadError>
  /**
   * Sets the key or removes it (`Reset`), keeping every other byte of the document. With an
   * expected revision, any other bytes on disk fail the update (`ChangedDuringWrite`); without
   * one, another writer's change is merged by redoing the edit on its bytes.
   */
  readonly update: (change: PolicyChange, expectedRevision?: string) => Effect.Effect<SettingsView, UpdateError>
}

export const Settings = Context.GenericTag<Settings>("claude-peers/Settings")

export { maxSettingsBytes }
/** How long a live holder of the lock is waited for before the update gives up. */
export const lockWaitMillis = 2000
/** How often a held lock is looked at again while waiting. */
export const lockPollMillis = 20
/** Without an expected revision, how many times another writer's change is merged before giving up. */
export const maxMergeRetries = 5

/** The lock that serializes this project's writers, beside the settings file. */
export const lockFileOf = (settingsFile: string): string =>
  path.join(path.dirname(settingsFile), `.${path.basename(settingsFile)}.claude-peers.lock`)

/**
 * Every temporary file of this project beside the settings file. The name cannot collide with
 * Claude Code's own `settings.json.tmp.<pid>`, and carries the pid so that one left by a killed
 * process can be recognized and removed.
 */
export const tempFileOf = (settingsFile: string, pid: number, nonce: string): string =>
  path.join(path.dirname(settingsFile), `.${path.basename(settingsFile)}.claude-peers-${pid}-${nonce}.tmp`)

const tempFilePattern = (settingsFile: string): RegExp =>
  new RegExp(`^\\.${path.basename(settingsFile).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.claude-peers-([1-9][0-9]*)-[0-9a-f]+\\.tmp$`)

const newFileMode = 0o600
const newDirectoryMode = 0o700
/** A lock holds `<pid> <start time>\n`; anything longer is not one of ours. */
const maxLockBytes = 4096


const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"
const isAlreadyExists = (error: PlatformError): boolean =>
  error._tag === "SystemError" && error.reason === "AlreadyExists"

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((byte, i) => byte === b[i])

const nonce = Effect.sync(() => bytesToHex(randomBytes(8)))

/** The file's bytes as they were read, or null when it is absent; `mode` is its permission bits. */
interface OnDisk {
  readonly bytes: Uint8Array | null
  readonly mode: number | null
}

const revisionOfOnDisk = (onDisk: OnDisk): string => (onDisk.bytes === null ? emptyRevision : revisionOf(onDisk.bytes))

type LockHolder =
  | { readonly _tag: "Process"; readonly pid: number; readonly startTime: string | null }
  | { readonly _tag: "Unknown" }

/** `<pid> <start time>\n`, where the start time may hold spaces (macOS spells it as a date). */
const parseLock = (bytes: Uint8Array): LockHolder => {
  const text = new TextDecoder().decode(bytes)
  const match = /^([1-9][0-9]{0,9})(?: ([^\n]*))?\n$/.exec(text)
  if (match === null) return { _tag: "Unknown" }
  const pid = Number(match[1])
  if (pid > 2147483647) return { _tag: "Unknown" }
  const startTime = match[2]?.trim() ?? ""
  return { _tag: "Process", pid, startTime: startTime.length > 0 ? startTime : null }
}

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const file = home.settingsFile
  const directory = path.dirname(file)
  const lockFile = lockFileOf(file)

  const documentError = (problem: DocumentProblem, forUpdate: boolean) => {
    const tail = forUpdate ? " Nothing was written." : ""
    return problem._tag === "InvalidJson"
      ? new InvalidJson({ path: file, message: `${file} is not valid JSON: ${problem.reason}.${tail}` })
      : new InvalidSettings({ path: file, message: `${file} is not a valid settings file: ${problem.reason}.${tail}` })
  }

  const notRegular = (type: EntryType, forUpdate: boolean) =>
    new InvalidSettings({
      path: file,
      message: type === "SymbolicLink" && forUpdate
        ? `${file} is a symbolic link. It is not updated: the rename would replace the link with a file and cut it off from where it points. Update the file it points to, or replace the link with a file. Nothing was written.`
        : `${file} is not a regular file but ${entryTypeWords[type]}, so it was not read.${forUpdate ? " Nothing was written." : ""}`
    })

  const tooLarge = (size: number, forUpdate: boolean) =>
    new InvalidSettings({
      path: file,
      message: `${file} is larger than 1 MiB (${size} bytes), so it was not read.${forUpdate ? " Nothing was written." : ""}`
    })

  const decodeOrFail = (bytes: Uint8Array | null, forUpdate: boolean) =>
    Either.match(decodeDocument(bytes ?? new Uint8Array(0)), {
      onLeft: (problem) => Effect.fail(documentError(problem, forUpdate)),
      onRight: (document) => Effect.succeed(document)
    })

  // A FIFO is judged by a stat and never opened: an open could block, or steal another reader's
  // data. `readBounded` checks the opened descriptor again, for a FIFO swapped in after the stat.
  const read: Settings["read"] = Effect.gen(function*() {
    const info = yield* files.stat(file).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone)
    )
    let bytes: Uint8Array | null = null
    if (Option.isSome(info)) {
      if (info.value.type !== "File") return yield* notRegular(info.value.type, false)
      if (info.value.size > maxSettingsBytes) return yield* tooLarge(info.value.size, false)
      const outcome = yield* files.readBounded(file, { maxBytes: maxSettingsBytes, followLinks: true }).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isNotFound, () => Effect.succeedNone)
      )
      if (Option.isSome(outcome)) {
        const result = outcome.value
        if (result._tag === "NotRegular") return yield* notRegular(result.type, false)
        if (result._tag === "TooLarge") return yield* tooLarge(result.size, false)
        bytes = result.bytes
      }
    }
    const document = yield* decodeOrFail(bytes, false)
    const policy = yield* Either.match(policyOf(document), {
      onLeft: (problem) =>
        Effect.fail(
          new InvalidSettings({
            path: file,
            message:
              `${file} is not a valid settings file: ${problem.reason}. Claude Code treats an unrecognized value as at least "hold"; \`claude-peers settings set\` or \`reset\` repairs it.`
          })
        ),
      onRight: (policy) => Effect.succeed(policy)
    })
    return makeSettingsView(file, revisionOfOnDisk({ bytes, mode: null }), policy)
  }).pipe(Effect.withSpan("Settings.read"))

  /**
   * Step 1: the settings path without following a final link. A link is refused because the
   * rename would replace it; a FIFO, device or directory because it is not a settings file.
   */
  const readForUpdate: Effect.Effect<OnDisk, InvalidSettings | PlatformError> = Effect.gen(function*() {
    const info = yield* files.lstat(file).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone)
    )
    if (Option.isNone(info)) return { bytes: null, mode: null }
    if (info.value.type !== "File") return yield* notRegular(info.value.type, true)
    if (info.value.size > maxSettingsBytes) return yield* tooLarge(info.value.size, true)
    const outcome = yield* files.readBounded(file, { maxBytes: maxSettingsBytes, followLinks: false }).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone),
      // A link swapped in after the lstat fails the no-follow open; say so, not "bad resource".
      Effect.catchIf(
        (error) => error._tag === "SystemError" && error.reason === "BadResource",
        (error) =>
          files.lstat(file).pipe(
            Effect.orElseFail(() => error),
            Effect.flatMap((now): Effect.Effect<never, InvalidSettings | PlatformError> =>
              now.type === "SymbolicLink" ? Effect.fail(notRegular(now.type, true)) : Effect.fail(error)
            )
          )
      )
    )
    if (Option.isNone(outcome)) return { bytes: null, mode: null }
    const result = outcome.value
    if (result._tag === "NotRegular") return yield* notRegular(result.type, true)
    if (result._tag === "TooLarge") return yield* tooLarge(result.size, true)
    return { bytes: result.bytes, mode: info.value.mode }
  })

  /** What steps 3 to 5 decide about the bytes on disk. */
  type Plan =
    | { readonly _tag: "Unchanged"; readonly view: SettingsView }
    | { readonly _tag: "Write"; readonly document: SettingsDocument; readonly text: string }

  const plan = (
    onDisk: OnDisk,
    change: PolicyChange,
    expectedRevision: string | undefined
  ): Effect.Effect<Plan, ChangedDuringWrite | InvalidJson | InvalidSettings> =>
    Effect.gen(function*() {
      const revision = revisionOfOnDisk(onDisk)
      // Step 3: the caller decided on other bytes than these.
      if (expectedRevision !== undefined && revision !== expectedRevision) {
        return yield* new ChangedDuringWrite({
          path: file,
          expectedRevision,
          observedRevision: revision,
          message:
            `${file} is at revision ${revision}, not the expected ${expectedRevision}: it changed since it was read. Nothing was written; read it again and decide on the new revision.`
        })
      }
      // Step 4: an invalid existing value is repaired, since the caller asked for a value; a
      // document that is not JSON or not an object is the user's to fix, and is left alone.
      const document = yield* decodeOrFail(onDisk.bytes, true)
      const text = yield* Either.mapLeft(applyChange(document, change), (problem) => documentError(problem, true))
      // Step 5: nothing to change, nothing written (not even the same bytes: a rename would still
      // wake every Claude Code session that watches the file, and race its writers for nothing).
      if (text === null) {
        const policy = Either.getOrNull(policyOf(document))
        return { _tag: "Unchanged", view: makeSettingsView(file, revision, policy) }
      }
      return { _tag: "Write", document, text }
    })

  const ownLockBytes = Effect.gen(function*() {
    const pid = process.pid
    const state = (yield* probe.check([pid], new Set([pid]))).get(pid)
    const startTime = state?._tag === "Alive" ? Option.getOrNull(state.startTime) : null
    return encodeDocument(startTime === null ? `${pid}\n` : `${pid} ${startTime}\n`)
  })

  type LockState =
    | { readonly _tag: "Acquired" }
    | { readonly _tag: "Vanished" }
    | { readonly _tag: "Held"; readonly bytes: Uint8Array | null }

  const readLock: Effect.Effect<LockState, PlatformError> = files.readBounded(lockFile, {
    maxBytes: maxLockBytes,
    followLinks: false
  }).pipe(
    Effect.map((result): LockState => ({ _tag: "Held", bytes: result._tag === "Read" ? result.bytes : null })),
    Effect.catchIf(isNotFound, () => Effect.succeed<LockState>({ _tag: "Vanished" }))
  )

  /**
   * One attempt at the lock. The release is registered in the same uninterruptible step as the
   * create, so an interruption can never leave a lock of ours behind; a lock that could not be
   * removed names this pid, which is dead by the time anybody looks, and is broken then.
   */
  const tryLock = (own: Uint8Array): Effect.Effect<LockState, PlatformError, Scope.Scope> =>
    Effect.acquireRelease(
      files.writeNewFile(lockFile, own, newFileMode).pipe(
        Effect.as<LockState>({ _tag: "Acquired" }),
        Effect.catchIf(isAlreadyExists, () => readLock)
      ),
      (state) => (state._tag === "Acquired" ? Effect.ignore(files.removeFile(lockFile)) : Effect.void)
    )

  /**
   * Breaks a stale lock by renaming a lock of ours over it, but only while it still holds the
   * stale bytes. A plain remove-then-create would let two writers that both saw the stale lock
   * remove each other's fresh one and both go ahead.
   */
  const takeOver = (own: Uint8Array, stale: Uint8Array): Effect.Effect<LockState, PlatformError, Scope.Scope> =>
    Effect.flatMap(nonce, (id) => {
      const temp = tempFileOf(file, process.pid, id)
      return Effect.acquireRelease(
        files.writeNewFile(temp, own, newFileMode).pipe(
          Effect.zipRight(files.replaceIfUnchanged(temp, lockFile, stale, maxLockBytes)),
          Effect.map((outcome): LockState =>
            outcome._tag === "Replaced" ? { _tag: "Acquired" } : { _tag: "Held", bytes: null }
          ),
          Effect.ensuring(Effect.ignore(files.removeFile(temp)))
        ),
        (state) => (state._tag === "Acquired" ? Effect.ignore(files.removeFile(lockFile)) : Effect.void)
      )
    })

  const lockHeld = (expectedRevision: string | undefined, holder: string) =>
    new ChangedDuringWrite({
      path: file,
      expectedRevision: expectedRevision ?? null,
      observedRevision: null,
      message:
        `${file} is being updated by another claude-peers process (${holder}, lock ${lockFile}), still after ${
          lockWaitMillis / 1000
        } s. Nothing was written; try again.`
    })

  /**
   * Step 2. A holder that is dead, or whose pid now belongs to another process, is gone for good:
   * its lock is broken. A live holder is waited for up to 2 s; the wait starts again when the lock
   * changes hands, since writers are then making progress (twenty updates started at once must
   * all get their turn, not fail behind each other). A lock whose content is not a holder's pid
   * was left by a writer killed between creating the file and writing it (a live writer does both
   * in one call): it is broken once it has stayed the same for the whole wait.
   */
  const acquireLock = (expectedRevision: string | undefined) =>
    Effect.gen(function*() {
      const own = yield* ownLockBytes
      let seen: Uint8Array | null = null
      let deadline = (yield* Clock.currentTimeMillis) + lockWaitMillis
      for (;;) {
        const state = yield* tryLock(own)
        if (state._tag === "Acquired") return
        // Let go between the create and the read: try again at once.
        if (state._tag === "Vanished") continue
        const now = yield* Clock.currentTimeMillis
        if (state.bytes !== null && (seen === null || !sameBytes(seen, state.bytes))) {
          seen = state.bytes
          deadline = now + lockWaitMillis
        }
        let holderWords = "a holder that cannot be identified"
        if (state.bytes !== null) {
          const holder = parseLock(state.bytes)
          if (holder._tag === "Process") {
            const alive = (yield* probe.check([holder.pid], new Set([holder.pid]))).get(holder.pid)
            const stale = alive === undefined || alive._tag === "Dead" ||
              (holder.startTime !== null && Option.isSome(alive.startTime) &&
                !sameStartTime(holder.startTime, alive.startTime.value))
            if (stale && (yield* takeOver(own, state.bytes))._tag === "Acquired") return
            holderWords = `pid ${holder.pid}`
          } else if (now >= deadline && (yield* takeOver(own, state.bytes))._tag === "Acquired") {
            return
          }
        }
        if (now >= deadline) return yield* lockHeld(expectedRevision, holderWords)
        yield* Effect.sleep(lockPollMillis)
      }
    })

  /**
   * Temporary files of this project whose writer is dead (killed before it could clean up). Only
   * a lock holder sweeps, and every live writer holds the lock while its temporary file exists, so
   * nothing a live writer needs is removed. Best effort: a leftover is clutter, not a wrong value.
   */
  const sweepTempFiles = Effect.gen(function*() {
    const pattern = tempFilePattern(file)
    const entries = yield* files.readDirectory(directory)
    const leftovers = entries.flatMap((entry) => {
      const match = pattern.exec(entry.name)
      return match === null ? [] : [{ name: entry.name, pid: Number(match[1]) }]
    })
    if (leftovers.length === 0) return
    const states = yield* probe.check(leftovers.map((leftover) => leftover.pid), new Set())
    yield* Effect.forEach(
      leftovers.filter((leftover) => states.get(leftover.pid)?._tag === "Dead"),
      (leftover) => files.removeFile(path.join(directory, leftover.name)),
      { discard: true }
    )
  }).pipe(Effect.ignore)

  /**
   * Steps 6 and 7: a temporary file with the old permission bits, then the compare-and-rename.
   * The temporary file's removal is registered before it exists, so no failure or interruption
   * leaves it behind; after the rename it is gone and the removal finds nothing.
   */
  const writeReplacing = (onDisk: OnDisk, text: string) =>
    Effect.scoped(
      Effect.gen(function*() {
        const temp = tempFileOf(file, process.pid, yield* nonce)
        yield* Effect.addFinalizer(() => Effect.ignore(files.removeFile(temp)))
        const bytes = encodeDocument(text)
        yield* files.writeNewFile(temp, bytes, onDisk.mode ?? newFileMode)
        const outcome = yield* files.replaceIfUnchanged(temp, file, onDisk.bytes, maxSettingsBytes)
        if (outcome._tag === "Replaced") {
          // Without it a power cut can undo the rename. When it fails the new value is in place
          // but not known to be durable, and the caller hears the I/O error rather than success.
          yield* files.syncDirectory(directory)
          return { _tag: "Replaced", bytes } as const
        }
        return { _tag: "Changed", observed: outcome.bytes } as const
      })
    )

  const update = Effect.fn("Settings.update")(function*(change: PolicyChange, expectedRevision?: string) {
    // Steps 1, 3, 4 and 5 once without the lock: a refusal or a value already in place needs no
    // lock, and waiting for another writer to answer "nothing to do" would help nobody.
    const first = yield* readForUpdate
    const early = yield* plan(first, change, expectedRevision)
    if (early._tag === "Unchanged") return early.view
    if (first.bytes === null) yield* files.makeDirectory(directory, newDirectoryMode)

    return yield* Effect.scoped(Effect.gen(function*() {
      yield* acquireLock(expectedRevision)
      yield* sweepTempFiles
      // Under the lock, every step runs again on the bytes now on disk: another writer may have
      // changed them while this one waited.
      for (let merges = 0;; merges++) {
        const onDisk = yield* readForUpdate
        const next = yield* plan(onDisk, change, expectedRevision)
        if (next._tag === "Unchanged") return next.view
        const verified = verifyChange(next.document, next.text, change)
        if (Either.isLeft(verified)) return yield* Effect.die(new Error(`refusing to write ${file}: ${verified.left}`))
        const written = yield* writeReplacing(onDisk, next.text)
        if (written._tag === "Replaced") {
          return makeSettingsView(file, revisionOf(written.bytes), policyAfter(change))
        }
        const observedRevision = written.observed === null ? null : revisionOf(written.observed)
        // With an expected revision the caller decided on the first bytes only; without one, the
        // caller asked only for this key, so the edit is redone on the other writer's document
        // (read again from step 1: it may now be a link, or have other permission bits) and
        // every key that writer added survives.
        if (expectedRevision !== undefined || merges >= maxMergeRetries) {
          return yield* new ChangedDuringWrite({
            path: file,
            expectedRevision: expectedRevision ?? null,
            observedRevision,
            message: expectedRevision !== undefined
              ? `${file} changed while it was being written (now at revision ${
                observedRevision ?? "unknown"
              }, expected ${expectedRevision}). Nothing was written; read it again and decide on the new revision.`
              : `${file} kept changing while it was being written (${
                maxMergeRetries + 1
              } attempts, each overtaken by another writer). Nothing was written; try again.`
          })
        }
      }
    }))
  })

  return Settings.of({ read, update })
})

const policyAfter = (change: PolicyChange): InboundPolicy | null => (change._tag === "Set" ? change.value : null)

/** Requires the file port, the process probe (for the lock's holder) and the Claude home. */
export const layer: Layer.Layer<Settings, never, Files | ProcessProbe | ClaudeHome> = Layer.effect(Settings, make)
