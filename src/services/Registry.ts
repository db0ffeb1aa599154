/**
 * The session registry: which Claude Code sessions really run, and which one a session id or a name
 * addresses. A registry file is not a live session: files outlive a crash (SIGKILL leaves them) and
 * pids are reused, so "live" is only ever the answer of a process check made now, against the start
 * time the record carries. Nothing here writes: the files and the sessions' sockets are Claude Code's.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as path from "node:path"
import { IdentityMismatch, NotAddressable, NotLive } from "../domain/Errors.js"
import { normalizeName } from "../domain/Names.js"
import type { Session } from "../domain/Session.js"
import { candidateOf, queryOf } from "../domain/SessionIdentity.js"
import type { RegistryEntry } from "../domain/Verdict.js"
import { describeVerdict } from "../domain/VerdictWords.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { ClaudeHomes } from "./ClaudeHomes.js"
import { Files } from "./Files.js"
import { ProcessProbe } from "./ProcessProbe.js"
import { type AddressScope, keepProvenStart, liveSessions, makeScan, type ProvenStarts, sameProvenSession } from "./RegistryScan.js"
import { Timing } from "./Timing.js"
import { withTranscript } from "./Transcripts.js"

/** Which session to resolve: by session id, or by its registry name (the cross-session address). */
export type ResolveQuery =
  | { readonly sessionId: string; readonly name?: undefined }
  | { readonly name: string; readonly sessionId?: undefined }

export interface ResolveOptions {
  /**
   * Resolve a session id whose session's name is shared with another live session (a derived name
   * that collided, jobs all named `(backgrounded)`). The session is still unambiguous by its id and
   * its socket; its `address` is then `uds:<socketPath>`. Without it, such a name is a refusal,
   * because a sender addressing by name could reach the other session.
   */
  readonly allowSharedName?: boolean
  /**
   * Resolve a session whose process is another user's (`unaddressable: "other_user"`) instead of
   * refusing it with `NotAddressable`: for a caller that reads about the session (its policy), not
   * one that delivers to it.
   */
  readonly allowOtherUser?: boolean
  /**
   * Resolve a session that nothing can deliver to (no socket, another user's process) instead of
   * refusing it with `NotAddressable`: for a caller that follows the session (`wait`), not one that
   * delivers to it.
   */
  readonly allowUnaddressable?: boolean
}

export type ResolveError = NotLive | IdentityMismatch | NotAddressable | PlatformError

/**
 * A directory of the registry that does not exist: the Claude home itself (a mistyped home, a
 * machine where Claude Code never ran), or only its `sessions` directory (no session has started
 * there yet). Either way the registry is empty, and neither is an error.
 */
export interface MissingDirectory {
  readonly directory: "home" | "sessions"
  readonly path: string
}

export interface Registry {
  /** Every `*.json` entry of the registry directory with its verdict, sorted by file. */
  readonly inspect: Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError>
  /**
   * The session with its transcript's fields (`transcriptPath`, `transcriptUpdatedAtMs`), looked up
   * in its home (a stat, and for a long directory a listing): what `resolve` adds, and `inspect`'s
   * caller asks for. `list` and `inspect` leave them out, so that a watch does not take a transcript
   * write for a change of the session.
   */
  readonly transcript: (session: Session) => Effect.Effect<Session>
  /** The live sessions, sorted by pid. */
  readonly list: Effect.Effect<ReadonlyArray<Session>, PlatformError>
  /**
   * Those of `sessions` (as `list` gave them) that are still the same live records, sorted by pid:
   * each one's record file read again and its process asked again, and no other file of the
   * registry read. Same means the same pid and session id, the same start time where both records
   * proved one, and a process that is still the one its record names. How a caller that read something of a session's processes after `list` (its
   * arguments, its environment) learns that what it read was that session's. Each comes as its
   * record says now, with its socket form for `address` (`uds:<socket>`; null as `list` has it): only
   * a read of every live record can tell that a name reaches one session alone. Each record is read
   * where `list` found it; over one home, a session whose record is not in that home's registry is
   * left out.
   */
  readonly recheck: (sessions: ReadonlyArray<Session>) => Effect.Effect<ReadonlyArray<Session>, PlatformError>
  /**
   * Those of `sessions` whose processes are still the ones their records named when `list` found
   * them, sorted by pid: what a caller that read something of the processes after `list` needs to
   * know that it read each session's own, as `recheck`, for less. A session that this registry's
   * `list` gave, proven by its record's start time, is confirmed by its process alone (its start
   * time read again, no file read) and comes as given; one whose start time cannot be read now is
   * left out, since nothing then shows the process is the one proven; one whose process's user
   * changed, and any session this registry did not prove (a record without a start time, a session
   * made or copied by the caller), is rechecked, and comes as `recheck` gives it. What the
   * same process wrote meanwhile is not seen, since no record is read: another session id after
   * `/clear`, a window's record parked as its session moved to a background job, a record removed
   * as the session ends. For a caller of `list`, that is a list read a moment later.
   */
  readonly confirm: (sessions: ReadonlyArray<Session>) => Effect.Effect<ReadonlyArray<Session>, PlatformError>
  /**
   * Re-reads the registry and returns the one live session that answers to the query, with its
   * transcript, or refuses:
   * `NotLive` when none does (saying why, from the files that carried the id or name);
   * `IdentityMismatch` when the id or the name belongs to more than one live record, because
   * delivering into the wrong session is worse than not delivering; `NotAddressable` when the one
   * session has no socket. Names are compared under Claude Code's normalization.
   */
  readonly resolve: (query: ResolveQuery, options?: ResolveOptions) => Effect.Effect<Session, ResolveError>
  /**
   * Which directory of the registry does not exist, if one does not: how to tell a Claude home
   * that does not exist from one without sessions when `list` or `inspect` is empty (over several
   * named homes, the first such; none with `all`, whose homes were found, not typed). Asked
   * separately (a stat or two), so that the usual answer costs nothing more; a directory that
   * cannot be looked at (permissions) is not taken for absent.
   */
  readonly missingDirectory: Effect.Effect<Option.Option<MissingDirectory>>
}

export const Registry = Context.GenericTag<Registry>("claude-peers/Registry")

/** Whether a record carries what was asked: the same session id, or a name equal under normalization. */
const carries = (query: ResolveQuery) => {
  if (query.sessionId !== undefined) return (sessionId: string | null, _name: string | null) => sessionId === query.sessionId
  const wanted = normalizeName(query.name)
  return (_sessionId: string | null, name: string | null) => name !== null && normalizeName(name) === wanted
}

/**
 * The one live session the query names, from the live sessions alone: every answer but "none" is
 * decided by them. The id is the conversation and the name its address; both must point at this one
 * process, or a message could land in another session.
 */
const pick = (
  live: ReadonlyArray<Session>,
  query: ResolveQuery,
  options: ResolveOptions
): Effect.Effect<Session, IdentityMismatch | NotAddressable> | undefined => {
  const matches = live.filter((s) => carries(query)(s.sessionId, s.name))
  if (matches.length === 0) return undefined
  const evidence = queryOf(query)
  if (matches.length > 1) {
    return Effect.fail(new IdentityMismatch({ query: evidence, shared: "query", candidates: matches.map(candidateOf) }))
  }
  const session = matches[0]!
  const shares = (what: "name" | "sessionId") =>
    live.filter((s) => s !== session && (what === "name" ? normalizeName(s.name) === normalizeName(session.name) : s.sessionId === session.sessionId))
  const sharedName = query.sessionId !== undefined && options.allowSharedName !== true ? shares("name") : []
  const sharedId = query.name !== undefined ? shares("sessionId") : []
  const rivals = sharedName.length > 0
    ? { shared: "name" as const, rivals: sharedName }
    : sharedId.length > 0
    ? { shared: "sessionId" as const, rivals: sharedId }
    : undefined
  if (rivals !== undefined) {
    const candidates = [session, ...rivals.rivals.sort((a, b) => a.pid - b.pid)].map(candidateOf)
    return Effect.fail(new IdentityMismatch({ query: evidence, shared: rivals.shared, candidates }))
  }
  if (
    session.unaddressable !== null && options.allowUnaddressable !== true &&
    !(session.unaddressable === "other_user" && options.allowOtherUser === true)
  ) {
    return Effect.fail(new NotAddressable({ query: evidence, session: candidateOf(session), because: session.unaddressable }))
  }
  return Effect.succeed(session)
}

/** A live entry's session with its transcript; any other entry as it is. */
const entryWithTranscript = (files: Files, home: string) => (entry: RegistryEntry): Effect.Effect<RegistryEntry> =>
  entry.verdict._tag === "live"
    ? Effect.map(withTranscript(files, home)(entry.verdict.session), (session) => ({ ...entry, verdict: { _tag: "live" as const, session } }))
    : Effect.succeed(entry)

/**
 * The registry's answers from a scan of every entry it reads: `scan(onlyLivePids)` as `makeScan`'s,
 * over one home or several, `rescan` reading only the given sessions' files, and `transcripts`
 * adding each live session's.
 */
const answers = (
  scan: (onlyLivePids: boolean) => Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError>,
  rescan: (sessions: ReadonlyArray<Session>) => Effect.Effect<ReadonlyArray<RegistryEntry>, PlatformError>,
  transcripts: (entry: RegistryEntry) => Effect.Effect<RegistryEntry>,
  missingDirectory: Effect.Effect<Option.Option<MissingDirectory>>,
  probe: ProcessProbe,
  proven: ProvenStarts
): Registry => {
  const inspect = scan(false).pipe(Effect.withSpan("Registry.inspect"))

  const list = scan(true).pipe(Effect.map(liveSessions), Effect.withSpan("Registry.list"))

  const recheck = (sessions: ReadonlyArray<Session>) =>
    Effect.map(rescan(sessions), (entries) => {
      const given = new Map(sessions.map((s) => [s.file, s]))
      return liveSessions(entries).flatMap((now) => {
        const was = given.get(now.file)
        if (was === undefined || !sameProvenSession(was, now)) return []
        // Only the sessions read again decided `now.address`: a name they do not share may be
        // shared with one that was not read again, or that started since `list`.
        return [now.address === null ? now : { ...now, address: `uds:${now.socketPath}` }]
      })
    }).pipe(Effect.withSpan("Registry.recheck"))

  const confirm = (sessions: ReadonlyArray<Session>) =>
    Effect.gen(function*() {
      const given = [...new Map(sessions.map((s) => [s.file, s])).values()]
      const known = given.flatMap((session) => {
        const proof = proven.get(session)
        return proof === undefined ? [] : [{ session, proof }]
      })
      const pids = known.map(({ session }) => session.pid)
      const states = yield* probe.check(pids, new Set(pids))
      const confirmed: Array<Session> = []
      const unsure = given.filter((s) => !proven.has(s))
      for (const { proof, session } of known) {
        const state = states.get(session.pid)
        if (state === undefined || state._tag === "Dead") continue
        // Read as the scan read it, so spelled alike: equal, or another process at the pid. One that
        // cannot be read proves nothing here (the scan, which has no start time to keep, lets such a
        // process pass); a process whose user changed is for a full recheck to judge.
        if (state.otherUser !== proof.otherUser) unsure.push(session)
        else if (Option.isSome(state.startTime) && state.startTime.value === proof.startTime) confirmed.push(session)
      }
      const rechecked = unsure.length === 0 ? [] : yield* recheck(unsure)
      return [...confirmed, ...rechecked].sort((a, b) => a.pid - b.pid)
    }).pipe(Effect.withSpan("Registry.confirm"))

  /** Why nothing live answers: the files that carried the id or name, with their verdicts. */
  const notLive = (query: ResolveQuery) =>
    Effect.flatMap(scan(false), (entries) => {
      const carried = carries(query)
      const reasons = entries
        .filter((e) => e.verdict._tag !== "live" && carried(e.sessionId, e.name))
        .map((e) => ({ file: e.file, verdict: e.verdict._tag, detail: describeVerdict(e.verdict) }))
      return Effect.fail(new NotLive({ query: queryOf(query), reasons }))
    })

  const resolve = Effect.fn("Registry.resolve")(function*(query: ResolveQuery, options: ResolveOptions = {}) {
    // The live records decide every answer but "none", so only a refusal reads the stale files, for its reasons.
    const entries = yield* scan(true)
    const picked = pick(liveSessions(entries), query, options)
    const session = yield* (picked ?? notLive(query))
    const entry = entries.find((e) => e.verdict._tag === "live" && e.verdict.session === session)!
    const found = yield* transcripts(entry)
    return found.verdict._tag === "live" ? found.verdict.session : session
  })

  const transcript = (session: Session) =>
    Effect.map(
      transcripts({
        file: session.file,
        verdict: { _tag: "live", session },
        pid: session.pid,
        sessionId: session.sessionId,
        name: session.name,
        ...(session.home === undefined ? {} : { home: session.home })
      }),
      (entry) => (entry.verdict._tag === "live" ? entry.verdict.session : session)
    )

  return Registry.of({ inspect, list, recheck, confirm, resolve, transcript, missingDirectory })
}

const absentThrough = (files: Files) => (path: string) =>
  Effect.match(files.stat(path), {
    onFailure: (error) => error._tag === "SystemError" && error.reason === "NotFound",
    onSuccess: () => false
  })

const missingIn = (files: Files, home: ClaudeHome): Effect.Effect<Option.Option<MissingDirectory>> =>
  Effect.gen(function*() {
    const absent = absentThrough(files)
    if (yield* absent(home.root)) return Option.some<MissingDirectory>({ directory: "home", path: home.root })
    if (yield* absent(home.sessionsDirectory)) return Option.some<MissingDirectory>({ directory: "sessions", path: home.sessionsDirectory })
    return Option.none()
  }).pipe(Effect.withSpan("Registry.missingDirectory"))

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const home = yield* ClaudeHome
  const timings = yield* Timing
  const scope: AddressScope = { names: home.sendersHome }
  const proven: ProvenStarts = new WeakMap()
  const scan = makeScan(files, probe, home.sessionsDirectory, timings, scope, proven)
  const rescan = (sessions: ReadonlyArray<Session>) => scan(true, sessions.map((s) => s.file))
  return answers(scan, rescan, entryWithTranscript(files, home.root), missingIn(files, home), probe, proven)
})

/**
 * The registry over several Claude homes (`ClaudeHomes`): each home scanned as one registry, the
 * answers together. When the program asked for several homes, every entry and live session carries
 * its `home`, and every address is the socket (a name is an address only within its own home); an
 * id or a name that live sessions carry in two homes is refused as within one home.
 */
export const makeHomes = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const homes = yield* ClaudeHomes
  const timings = yield* Timing
  const scope: AddressScope = { names: !homes.several }
  const scans = new Map<string, ReturnType<typeof makeScan>>()
  const proven: ProvenStarts = new WeakMap()
  const scanIn = (sessionsDirectory: string) => {
    let scan = scans.get(sessionsDirectory)
    if (scan === undefined) scans.set(sessionsDirectory, scan = makeScan(files, probe, sessionsDirectory, timings, scope, proven))
    return scan
  }
  const scanOf = (home: ClaudeHome) => scanIn(home.sessionsDirectory)
  const labelled = (root: string) => (entry: RegistryEntry): RegistryEntry => {
    if (!homes.several) return entry
    if (entry.verdict._tag !== "live") return { ...entry, home: root }
    const session = keepProvenStart(entry.verdict.session, { ...entry.verdict.session, home: root })
    // The labelled session is the one `list` gives: it carries what proved the scan's.
    const proof = proven.get(entry.verdict.session)
    if (proof !== undefined) proven.set(session, proof)
    return { ...entry, verdict: { _tag: "live" as const, session }, home: root }
  }
  const scan = (onlyLivePids: boolean) =>
    Effect.gen(function*() {
      const scanned: Array<RegistryEntry> = []
      // Every Claude Code process's home is looked for, also of a process whose live session a home
      // read first holds: a copy of that record (a home copied while its sessions ran) would else
      // hide the home it runs under, and with it the session it is in now.
      const read = (home: ClaudeHome) =>
        Effect.map(scanOf(home)(onlyLivePids), (entries) => {
          for (const entry of entries) scanned.push(labelled(home.root)(entry))
        })
      yield* Effect.forEach(yield* homes.homes, read, { discard: true })
      return scanned.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    })
  // A registry file is `<home>/sessions/<pid>.json`.
  const homeOf = (entry: RegistryEntry) => entry.home ?? path.dirname(path.dirname(entry.file))
  /** Each given session's file read again where `list` found it: the homes are not looked for again. */
  const rescan = (sessions: ReadonlyArray<Session>) => {
    // Each directory with its home's root as the sessions were labelled with it.
    const roots = new Map<string, string>()
    for (const s of sessions) {
      const directory = path.dirname(s.file)
      if (!roots.has(directory)) roots.set(directory, s.home ?? path.dirname(directory))
    }
    return Effect.map(
      Effect.forEach(
        roots,
        ([directory, root]) => Effect.map(scanIn(directory)(true, sessions.map((s) => s.file)), (entries) => entries.map(labelled(root)))
      ),
      (perHome) => perHome.flat()
    )
  }
  const transcripts = (entry: RegistryEntry) => entryWithTranscript(files, homeOf(entry))(entry)
  // Over named homes, the first one that is missing, as a mistyped one would be; homes `all` found
  // were not typed, and the standard ones need not exist.
  const missingDirectory = homes.all === true ?
    Effect.succeedNone :
    Effect.flatMap(
      homes.homes,
      (all) => Effect.reduce(all, Option.none<MissingDirectory>(), (found, home) => (Option.isSome(found) ? Effect.succeed(found) : missingIn(files, home)))
    )
  return answers(scan, rescan, transcripts, missingDirectory, probe, proven)
})

/** The registry over whatever `Files`, `ProcessProbe` and `ClaudeHome` the program provides. */
export const layer: Layer.Layer<Registry, never, Files | ProcessProbe | ClaudeHome> = Layer.effect(Registry, make)

/** The registry over the homes `ClaudeHomes` names. */
export const layerHomes: Layer.Layer<Registry, never, Files | ProcessProbe | ClaudeHomes> = Layer.effect(Registry, makeHomes)
