/**
 * Reads and updates `crossSessionInbound` in the user settings file.
 *
 * Claude Code rewrites this file itself (temp file + rename) and reloads it into running sessions,
 * so another writer is the normal case: a setting of the user's silently lost is the worst bug this
 * service can have. Every update therefore compares the bytes it started from with the bytes on
 * disk just before its rename, and edits only its own member of the document.
 */
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as path from "node:path"
import { ChangedDuringWrite, InvalidJson, InvalidSettings } from "../domain/Errors.js"
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
import { entryTypeWords } from "../domain/VerdictWords.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { absentIfNotFound, type EntryType, type ExtendedAttributes, type FileInfo, Files, noExtendedAttributes, type Owner } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"
import { makeLock, makeNonces, tempFileOf, tempFilePattern } from "./SettingsLock.js"
import { Timing } from "./Timing.js"

export type ReadError = InvalidJson | InvalidSettings | PlatformError
export type UpdateError = ChangedDuringWrite | InvalidJson | InvalidSettings | PlatformError

export interface UpdateOptions {
  /**
   * The revision the caller read (`SettingsView.revision`): any other bytes on disk fail the update
   * with `ChangedDuringWrite`, where without it another writer's change is merged.
   */
  readonly expectRevision?: string | undefined
  /**
   * When the settings file is a symbolic link, update the file it points to, as Claude Code writes
   * through one: one hop only (the target must be a regular file, or the update is refused), with
   * the lock and the temporary file beside the target. Without it a link is refused, naming its target.
   */
  readonly throughLink?: boolean | undefined
}

export interface Settings {
  /**
   * The user file's value. A missing or 0-byte file reads as `{}`. Links are followed: reading
   * through a link (a dotfiles checkout, say) is what Claude Code does too, and changes nothing.
   */
  readonly read: Effect.Effect<SettingsView, ReadError>
  /**
   * Sets the key or removes it (`Reset`), keeping every other byte of the document. With
   * `expectRevision`, any other bytes on disk fail the update (`ChangedDuringWrite`); without it,
   * another writer's change is merged by redoing the edit on its bytes.
   */
  readonly update: (change: PolicyChange, options?: UpdateOptions) => Effect.Effect<SettingsView, UpdateError>
}

export const Settings = Context.GenericTag<Settings>("claude-peers/Settings")

export { maxSettingsBytes }
/** Without an expected revision, how many times another writer's change is merged before giving up. */
export const maxMergeRetries = 5

const newFileMode = 0o600
const newDirectoryMode = 0o700

/** A `SystemError` of the file port with this reason (no other failure here carries that tag). */
const hasReason = (reason: string) => (error: unknown): boolean => Predicate.isTagged(error, "SystemError") && (error as SystemError).reason === reason

/** The file's bytes as they were read, or null when it is absent; `mode` is its permission bits, `owner` its owner. */
interface OnDisk {
  readonly bytes: Uint8Array | null
  readonly mode: number | null
  readonly owner: Owner | null
}

const absent: OnDisk = { bytes: null, mode: null, owner: null }

const ownerOf = (info: FileInfo): Owner => ({ uid: info.uid, gid: info.gid })

const errnoIn = (error: PlatformError): string => (error._tag === "SystemError" ? /^E[A-Z]+/.exec(error.description ?? "")?.[0] : undefined) ?? "not permitted"

/** The port's refusal to give a file away (see `Files.writeNewFile`), told apart from a directory's permission bits. */
const isOwnerRefusal = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "PermissionDenied" && error.syscall === "fchown"

const revisionOfOnDisk = (onDisk: OnDisk): string => (onDisk.bytes === null ? emptyRevision : revisionOf(onDisk.bytes))

/** What steps 3 to 5 decide about the bytes on disk. */
type Plan =
  | { readonly _tag: "Unchanged"; readonly view: SettingsView }
  | { readonly _tag: "Write"; readonly document: SettingsDocument; readonly text: string }

type During = "read" | "update"

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const timings = yield* Timing
  // A settings file nobody wrote is an answer (`statIfExists`), so that no failure is built for it.
  const { lstatIfExists, statIfExists } = files
  const nonce = makeNonces()
  const writers = new Map<string, ReturnType<typeof writerOf>>()
  const writerAt = (file: string) => {
    let writer = writers.get(file)
    if (writer === undefined) writers.set(file, writer = writerOf(file))
    return writer
  }

  /**
   * Everything that reads or writes one file: the settings path itself, or the target of its link
   * for an update through it (`throughLink`), whose lock and temporary files are beside the target.
   */
  const writerOf = (file: string) => {
    const directory = path.dirname(file)
    const lock = makeLock({ files, probe, timings, settingsFile: file, nonce })

    const documentError = (problem: DocumentProblem, during: During) =>
      Effect.fail(
        problem._tag === "InvalidJson"
          ? new InvalidJson({ path: file, detail: problem.reason, during })
          : new InvalidSettings({ path: file, problem: problem.problem, detail: problem.reason, during })
      )

    const orDocumentError = <A>(result: Either.Either<A, DocumentProblem>, during: During): Effect.Effect<A, InvalidJson | InvalidSettings> =>
      Either.isLeft(result) ? documentError(result.left, during) : Effect.succeed(result.right)

    const notRegular = (type: EntryType, during: During) =>
      Effect.fail(
        type === "SymbolicLink" && during === "update"
          ? new InvalidSettings({ path: file, problem: "symlink", detail: entryTypeWords[type], during })
          : new InvalidSettings({ path: file, problem: "not_a_file", detail: entryTypeWords[type], during })
      )

    const tooLarge = (size: number, during: During) =>
      Effect.fail(
        new InvalidSettings({
          path: file,
          problem: "too_large",
          detail: `it is ${size} bytes, more than the 1 MiB (${maxSettingsBytes} bytes) a settings file may have, so it was not read`,
          during
        })
      )

    const decodeOrFail = (bytes: Uint8Array | null, during: During) => orDocumentError(decodeDocument(bytes ?? new Uint8Array(0)), during)

    // A FIFO is judged by a stat and never opened: an open could block, or steal another reader's
    // data. `readBounded` checks the opened descriptor again, for a FIFO swapped in after the stat.
    const readBytes = Effect.gen(function*() {
      const info = yield* statIfExists(file)
      if (Option.isNone(info)) return null
      if (info.value.type !== "File") return yield* notRegular(info.value.type, "read")
      if (info.value.size > maxSettingsBytes) return yield* tooLarge(info.value.size, "read")
      const outcome = yield* absentIfNotFound(files.readBounded(file, { maxBytes: maxSettingsBytes, followLinks: true }))
      if (Option.isNone(outcome)) return null
      const result = outcome.value
      if (result._tag === "NotRegular") return yield* notRegular(result.type, "read")
      if (result._tag === "TooLarge") return yield* tooLarge(result.size, "read")
      return result.bytes
    })

    const read: Settings["read"] = Effect.gen(function*() {
      const bytes = yield* readBytes
      const document = yield* decodeOrFail(bytes, "read")
      const policy = yield* orDocumentError(policyOf(document), "read")
      return makeSettingsView(file, revisionOfOnDisk({ ...absent, bytes }), policy)
    }).pipe(Effect.withSpan("Settings.read"))

    /** A link swapped in after the lstat fails the no-follow open: say so, not "bad resource". */
    const linkSwappedIn = (error: PlatformError): Effect.Effect<never, InvalidSettings | PlatformError> =>
      Effect.flatMap(
        Effect.orElseFail(files.lstat(file), () => error),
        (now) => now.type === "SymbolicLink" ? notRegular(now.type, "update") : Effect.fail<InvalidSettings | PlatformError>(error)
      )

    /**
     * Step 1: the settings path without following a final link. A link is refused because the
     * rename would replace it; a FIFO, device or directory because it is not a settings file.
     */
    const readForUpdate: Effect.Effect<OnDisk, InvalidSettings | PlatformError> = Effect.gen(function*() {
      const info = yield* lstatIfExists(file)
      if (Option.isNone(info)) return absent
      if (info.value.type !== "File") return yield* notRegular(info.value.type, "update")
      if (info.value.size > maxSettingsBytes) return yield* tooLarge(info.value.size, "update")
      const outcome = yield* absentIfNotFound(files.readBounded(file, { maxBytes: maxSettingsBytes, followLinks: false })).pipe(
        Effect.catchIf(hasReason("BadResource"), (error) => linkSwappedIn(error))
      )
      if (Option.isNone(outcome)) return absent
      const result = outcome.value
      if (result._tag === "NotRegular") return yield* notRegular(result.type, "update")
      if (result._tag === "TooLarge") return yield* tooLarge(result.size, "update")
      return { bytes: result.bytes, mode: info.value.mode, owner: ownerOf(info.value) }
    })

    const plan = (onDisk: OnDisk, change: PolicyChange, expectedRevision: string | null): Effect.Effect<Plan, UpdateError> =>
      Effect.gen(function*() {
        const revision = revisionOfOnDisk(onDisk)
        // Step 3: the caller decided on other bytes than these.
        if (expectedRevision !== null && revision !== expectedRevision) {
          return yield* new ChangedDuringWrite({
            path: file,
            conflict: "revision",
            expectedRevision,
            actualRevision: revision,
            attempts: 0,
            lock: null
          })
        }
        // Step 4: an invalid existing value is repaired, since the caller asked for a value; a
        // document that is not JSON or not an object is the user's to fix, and is left alone.
        const document = yield* decodeOrFail(onDisk.bytes, "update")
        const text = yield* orDocumentError(applyChange(document, change), "update")
        // Step 5: nothing to change, nothing written (not even the same bytes: a rename would still
        // wake every Claude Code session that watches the file, and race its writers for nothing).
        if (text === null) return { _tag: "Unchanged", view: makeSettingsView(file, revision, Either.getOrNull(policyOf(document))) }
        return { _tag: "Write", document, text }
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
     * Whom the file must belong to after the update: its owner before it, and a new file its
     * directory's (the nearest existing one when the directory is still to be created). A user's
     * settings file that root updated must stay readable by that user's Claude Code.
     */
    const ownerOfDirectory = (at: string): Effect.Effect<Owner, PlatformError> =>
      files.stat(at).pipe(
        Effect.map(ownerOf),
        Effect.catchIf(
          (error) => hasReason("NotFound")(error) && path.dirname(at) !== at,
          () => ownerOfDirectory(path.dirname(at))
        )
      )

    /**
     * A temporary file that could not be given the existing settings file's owner: the update is
     * refused, and says why, naming the settings file rather than a temporary one. Other failures pass
     * as they are.
     */
    const ownerNotKept = (owner: Owner) => (error: PlatformError): PlatformError =>
      !isOwnerRefusal(error) ? error : new SystemError({
        reason: "PermissionDenied",
        module: "FileSystem",
        method: "update",
        pathOrDescriptor: file,
        syscall: "fchown",
        description: `the settings file must keep its owner (uid ${owner.uid}, gid ${owner.gid}), and this process may not give a file that owner (${
          errnoIn(error)
        }); nothing was written`
      })

    /**
     * What is created for a new file gets its directory's owner where this process may give it (root
     * may; a user may give only its own). Where it may not, it stays this process's own, as anything a
     * program creates does: a user's first `settings set` under `/tmp` must not fail because root owns
     * `/tmp`. Only an existing file's owner is a promise that refuses the update when it cannot be kept.
     */
    const givenIfPermitted = <A>(owner: Owner, create: (owner?: Owner) => Effect.Effect<A, PlatformError>) =>
      create(owner).pipe(Effect.catchIf(isOwnerRefusal, () => create()))

    /**
     * Steps 6 and 7: a temporary file with the old permission bits and owner, then the
     * compare-and-rename. The temporary file's removal is registered before it exists, so no failure
     * or interruption leaves it behind; after the rename it is gone and the removal finds nothing.
     */
    const writeReplacing = (onDisk: OnDisk, text: string, attributes: ExtendedAttributes) =>
      Effect.scoped(
        Effect.gen(function*() {
          const self = yield* probe.self
          const temp = tempFileOf(file, self.pid, yield* nonce)
          yield* Effect.addFinalizer(() => Effect.ignore(files.removeFile(temp)))
          const bytes = encodeDocument(text)
          const mode = onDisk.mode ?? newFileMode
          yield* onDisk.owner === null
            ? givenIfPermitted(yield* ownerOfDirectory(directory), (owner) => files.writeNewFile(temp, bytes, mode, owner))
            : files.writeNewFile(temp, bytes, mode, onDisk.owner, attributes).pipe(Effect.mapError(ownerNotKept(onDisk.owner)))
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

    /**
     * Steps 3 to 7 under the lock, on the bytes now on disk: another writer may have changed them
     * while this one waited. With an expected revision the caller decided on the first bytes only;
     * without one, the caller asked only for this key, so the edit is redone on the other writer's
     * document (read again from step 1: it may now be a link, or have other permission bits) and every
     * key that writer added survives.
     */
    const updateLocked = (change: PolicyChange, expectedRevision: string | null) =>
      Effect.gen(function*() {
        for (let attempts = 1;; attempts++) {
          const onDisk = yield* readForUpdate
          const next = yield* plan(onDisk, change, expectedRevision)
          if (next._tag === "Unchanged") return next.view
          const verified = verifyChange(next.document, next.text, change)
          if (Either.isLeft(verified)) return yield* Effect.die(new Error(`refusing to write ${file}: ${verified.left}`))
          // The ACL and extended attributes of the file this attempt replaces, read under the lock.
          const attributes = onDisk.bytes === null ? noExtendedAttributes : yield* files.extendedAttributes(file)
          const written = yield* writeReplacing(onDisk, next.text, attributes)
          if (written._tag === "Replaced") return makeSettingsView(file, revisionOf(written.bytes), policyAfter(change))
          if (expectedRevision !== null || attempts > maxMergeRetries) {
            const actualRevision = written.observed === null ? null : revisionOf(written.observed)
            return yield* new ChangedDuringWrite({ path: file, conflict: "overtaken", expectedRevision, actualRevision, attempts, lock: null })
          }
        }
      })

    /** Steps 1 to 8 on this file, which is the settings file or the target of its link. */
    const updateFile = (change: PolicyChange, expected: string | null) =>
      Effect.gen(function*() {
        // Steps 1, 3, 4 and 5 once without the lock: a refusal or a value already in place needs no
        // lock, and waiting for another writer to answer "nothing to do" would help nobody.
        const first = yield* readForUpdate
        const early = yield* plan(first, change, expected)
        if (early._tag === "Unchanged") return early.view
        // The directories created for a new file belong to whoever owns the nearest one that exists.
        if (first.bytes === null) {
          yield* givenIfPermitted(yield* ownerOfDirectory(directory), (owner) => files.makeDirectory(directory, newDirectoryMode, owner))
        }
        return yield* Effect.scoped(
          Effect.gen(function*() {
            yield* lock.acquire(expected)
            yield* sweepTempFiles
            return yield* updateLocked(change, expected)
          })
        )
      })

    return { read, updateFile }
  }

  const settingsFile = home.settingsFile

  /** Whom the nearest existing entry at or above `at` belongs to (links followed). */
  const ownerOfNearest = (at: string): Effect.Effect<Owner, PlatformError> =>
    files.stat(at).pipe(
      Effect.map(ownerOf),
      Effect.catchIf(
        (error) => (hasReason("NotFound")(error) || hasReason("BadResource")(error)) && path.dirname(at) !== at,
        () => ownerOfNearest(path.dirname(at))
      )
    )

  const foreignLink = (link: string, linkOwner: Owner, target: string, targetOwner: Owner, self: Owner): PlatformError =>
    new SystemError({
      reason: "PermissionDenied",
      module: "FileSystem",
      method: "update",
      pathOrDescriptor: link,
      syscall: "readlink",
      description:
        `${link} is a symbolic link of uid ${linkOwner.uid} to ${target}, which belongs to uid ${targetOwner.uid}: an update by uid ${self.uid} does not follow another user's link out of that user's own files; nothing was written`
    })

  /**
   * Every link on the way to `file` (its directories', and its own), as the update would follow
   * them. A link that belongs to another user than this process (root's excepted: root made the
   * system's own) is followed only to what that user owns: root updating a user's home must not be
   * led by that user's `.claude` link into a directory only root may write, and no user's link may
   * aim another user's update at a third party's file.
   */
  const refuseForeignLinks = (file: string): Effect.Effect<void, PlatformError> =>
    Effect.gen(function*() {
      const self = yield* files.runsAs
      if (Option.isNone(self)) return
      const absolute = path.resolve(file)
      const { root } = path.parse(absolute)
      const componentsOf = (at: string) => at.slice(path.parse(at).root.length).split(path.sep).filter((part) => part !== "")
      let pending = componentsOf(absolute)
      let at = root
      // As the kernel's own limit on links in one path: past it the update fails on its own (ELOOP).
      for (let hops = 0; pending.length > 0 && hops <= 40;) {
        const next = path.join(at, pending.shift()!)
        const info = yield* lstatIfExists(next)
        // Nothing more to follow: what is missing is created, by this update, under what was checked.
        if (Option.isNone(info)) return
        if (info.value.type !== "SymbolicLink") {
          at = next
          continue
        }
        hops++
        const target = path.resolve(at, yield* files.readLink(next))
        const linkOwner = ownerOf(info.value)
        if (linkOwner.uid !== self.value.uid && linkOwner.uid !== 0) {
          const targetOwner = yield* ownerOfNearest(target)
          if (targetOwner.uid !== linkOwner.uid) return yield* Effect.fail(foreignLink(next, linkOwner, target, targetOwner, self.value))
        }
        pending = [...componentsOf(target), ...pending]
        at = path.parse(target).root
      }
    })

  /**
   * The file an update writes: the settings path, or, when it is a link and the caller asked to
   * write through it, the link's target (one hop, as Claude Code writes). A link is otherwise
   * refused, naming its target so that the caller can choose.
   */
  const linkTargetFor = (file: string, throughLink: boolean): Effect.Effect<string | null, InvalidSettings | PlatformError> =>
    Effect.gen(function*() {
      const info = yield* lstatIfExists(file)
      if (Option.isNone(info) || info.value.type !== "SymbolicLink") return null
      const target = path.resolve(path.dirname(file), yield* files.readLink(file))
      const refuse = (problem: "symlink" | "not_a_file", detail: string) =>
        Effect.fail(new InvalidSettings({ path: file, problem, detail, during: "update", linkTarget: target }))
      if (!throughLink) return yield* refuse("symlink", `a symbolic link to ${target}`)
      const led = yield* lstatIfExists(target)
      if (Option.isNone(led)) return yield* refuse("symlink", `a symbolic link to ${target}, which does not exist`)
      if (led.value.type === "SymbolicLink") {
        return yield* refuse("symlink", `a symbolic link to ${target}, itself a link: an update follows one link only, as Claude Code writes`)
      }
      if (led.value.type !== "File") return yield* refuse("not_a_file", `a symbolic link to ${target}, which is ${entryTypeWords[led.value.type]}`)
      return target
    })
  const read: Settings["read"] = writerAt(settingsFile).read

  const update = Effect.fn("Settings.update")(function*(change: PolicyChange, options: UpdateOptions = {}) {
    // A caller of the former signature (`update(change, revision)`, from JavaScript or through `any`)
    // still gets its revision checked, never an unchecked write.
    const expected = (typeof options === "string" ? options : options.expectRevision) ?? null
    const throughLink = typeof options === "object" && options.throughLink === true
    const target = yield* linkTargetFor(settingsFile, throughLink)
    yield* refuseForeignLinks(settingsFile)
    return yield* writerAt(target ?? settingsFile).updateFile(change, expected)
  })

  return Settings.of({ read, update })
})

const policyAfter = (change: PolicyChange): InboundPolicy | null => (change._tag === "Set" ? change.value : null)

/** Requires the file port, the process probe (for the lock's holder) and the Claude home. */
export const layer: Layer.Layer<Settings, never, Files | ProcessProbe | ClaudeHome> = Layer.effect(Settings, make)
