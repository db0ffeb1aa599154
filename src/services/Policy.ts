/**
 * The inbound policy in effect for each live session: what Claude Code does with a message from
 * another session, decided per process from managed, command-line, user and project settings and
 * the kill switch, as far as this machine shows them.
 *
 * The evidence of a process (its arguments, environment and working directory) names no process:
 * a pid read after the registry scan could already belong to another one. So each session's
 * process is asked again once the evidence is in (`Registry.confirm`), and the evidence counts
 * only for a session whose process still has the start time its record carries: a process that
 * held the pid throughout is the one that was read. (A record that names no start time is read
 * again instead, as the scan judged it.)
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { type ClaudeArguments, claudeArgumentsOf } from "../domain/ClaudeArguments.js"
import { decodeSettingsText, type FileRead, parseSettingsText } from "../domain/ClaudeSettingsFile.js"
import { type Observed, read as readObserved, unreadable, valueOf } from "../domain/Observed.js"
import type { SessionPolicy } from "../domain/Policy.js"
import { type FileFact, isPreStartedWorker, type JobLaunch, sessionPolicyOf, trustedLaunch } from "../domain/PolicyEvidence.js"
import { projectSettingsFiles } from "../domain/ProjectSettings.js"
import type { Session } from "../domain/Session.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { Files } from "./Files.js"
import { type FileReader, gitRootOf, gitRootOwnersOf, makeFileReader, managedFacts, sessionView, userFact } from "./PolicyFiles.js"
import { type ProcessEvidence, ProcessProbe } from "./ProcessProbe.js"
import { Registry, type ResolveError, type ResolveOptions, type ResolveQuery } from "./Registry.js"
import { sameProvenSession } from "./RegistryScan.js"

/**
 * One session resolved with its policy: `policy` was read for this `session` (same pid, same
 * session id, the same process by the start time that proved its record), so a sender can address
 * `session.address` without resolving again.
 */
export interface ResolvedPolicy {
  readonly session: Session
  readonly policy: SessionPolicy
}

export interface Policy {
  /** The policy in effect for every live session, sorted by pid. Bad files and unreadable processes give states, never failures. */
  readonly list: Effect.Effect<ReadonlyArray<SessionPolicy>, PlatformError>
  /**
   * The policy of the one live session the query names, resolved as `Registry.resolve` resolves
   * it, with the same refusals: a sender asks before it sends, and must not learn the policy of
   * another session than the one it would reach. The session comes with its policy, from the same
   * resolution: resolving again to learn its address could name another process.
   */
  readonly resolve: (query: ResolveQuery, options?: ResolveOptions) => Effect.Effect<ResolvedPolicy, ResolveError>
}

export const Policy = Context.GenericTag<Policy>("claude-peers/Policy")

/** How often `resolve` reads a session again when its process changed while it was read. */
const resolveAttempts = 3

const notRead = (fileOrNull: string | null, reason: string): FileFact => ({ path: fileOrNull, read: { _tag: "Failed", reason } })

/**
 * The `--settings` file: JSON text is read as it is; a relative path is resolved against the
 * process's working directory (Claude Code resolves it at start, against its own), or the record's
 * `cwd`, the directory the session started in, when that cannot be read. A `--worktree` session
 * has left that directory since, so its relative path is not resolved here. Claude Code does not
 * start without its file, so a live session's file that is missing now was found elsewhere, or
 * removed since: what it held is not known.
 */
const flagFact = (
  reader: FileReader,
  args: ClaudeArguments,
  base: string | null
): Effect.Effect<FileFact | null> => {
  const flag = args.settings
  if (flag === null) return Effect.succeed(null)
  if (flag._tag === "JsonText") return Effect.succeed({ path: null, read: { _tag: "Bytes", bytes: new TextEncoder().encode(flag.text) } })
  const missingMeansUnknown = (file: string) =>
    Effect.map(reader.fact(file), (fact) =>
      fact.read._tag === "Missing"
        ? notRead(file, "Claude Code does not start without its --settings file: it was resolved against another directory, or removed since")
        : fact)
  if (path.isAbsolute(flag.path)) return missingMeansUnknown(flag.path)
  if (args.worktree) {
    return Effect.succeed(notRead(flag.path, "a relative --settings path, resolved at start against a directory this --worktree session has left"))
  }
  return base === null
    ? Effect.succeed(notRead(flag.path, "a relative --settings path, and the directory the session started in is unknown"))
    : missingMeansUnknown(path.resolve(base, flag.path))
}

/**
 * The files that may be the session's global config. Claude Code's is `.claude.json` in
 * `CLAUDE_CONFIG_DIR`, else in the home folder (`.claude-custom-oauth.json` under a custom OAuth
 * URL). The session registered in this Claude home, so without `CLAUDE_CONFIG_DIR` the home folder
 * is the one holding it (`~/.claude`'s parent); when the environment cannot be read, either may be
 * it. A legacy `.config.json` in the Claude home, when there is one, may be read instead.
 */
const globalConfigCandidates = (
  reader: FileReader,
  home: ClaudeHome,
  environ: ReadonlyMap<string, string> | null,
  foreign: boolean
): Effect.Effect<ReadonlyArray<FileFact>> => {
  if (foreign && environ === null) return Effect.succeed([notRead(null, "its home inside its own mount namespace is unknown")])
  const name = (environ?.get("CLAUDE_CODE_CUSTOM_OAUTH_URL") ?? "") !== "" ? ".claude-custom-oauth.json" : ".claude.json"
  const configDir = environ?.get("CLAUDE_CONFIG_DIR")
  const folders = environ === null
    ? [home.root, path.dirname(home.root)]
    : [configDir !== undefined && configDir !== "" ? configDir : environ.get("HOME") || path.dirname(home.root)]
  // Most sessions of a machine name the same files: one answer per set of them in a pass.
  return reader.once(`globalConfig:${JSON.stringify([home.root, name, folders])}`, () =>
    Effect.gen(function*() {
      const candidates: Array<FileFact> = []
      for (const folder of folders) candidates.push(yield* reader.fact(path.join(folder, name)))
      const legacy = yield* reader.fact(path.join(home.root, ".config.json"))
      return legacy.read._tag === "Missing" ? candidates : [...candidates, legacy]
    }))
}

/**
 * Whether the repository's root, its `.git` and its `.claude` all belong to the session's user:
 * Claude Code (its effective uid) keeps the local file at the root only then, since a file another
 * user can write must not loosen or tighten this user's sessions. Unknown when the session's user
 * or an owner could not be read.
 */
const rootOwnedBySession = (reader: FileReader, root: string, user: Observed<number>): Effect.Effect<Observed<boolean>> =>
  Effect.map(gitRootOwnersOf(reader, root), (owners) => {
    if (user._tag === "Unreadable") return unreadable(`the session's user could not be read (${user.reason})`)
    if (owners._tag === "Unreadable") return unreadable(`the owners of ${root}, its .git and its .claude could not be read (${owners.reason})`)
    const { claude, git, root: rootOwner } = owners.value
    return readObserved(rootOwner === user.value && git === user.value && (claude === null || claude === user.value))
  })

const projectFacts = (
  reader: FileReader,
  args: ClaudeArguments | null,
  folder: string | null,
  environ: ReadonlyMap<string, string> | null,
  userOf: Effect.Effect<Observed<number>>
): Effect.Effect<{ readonly project: FileFact; readonly local: ReadonlyArray<FileFact> }> => {
  if (folder === null) {
    const unknown = notRead(null, "the directory the session runs in is unknown")
    return Effect.succeed({ project: unknown, local: [unknown] })
  }
  const configRoot = args?.projectConfigRoot ?? null
  const homeFolder = environ?.get("HOME") ?? ""
  // Sessions in one folder, started alike, read the same files: one answer for them in a pass;
  // whose the repository's root is, against each session's user, is decided per session.
  const shared = reader.once(`project:${JSON.stringify([folder, configRoot, homeFolder])}`, () =>
    Effect.gen(function*() {
      const gitRoot = yield* gitRootOf(reader, folder)
      const facts = { folder, projectConfigRoot: configRoot === null ? null : path.resolve(folder, configRoot), gitRoot, homeFolder }
      const files = projectSettingsFiles({ ...facts, gitRootOwnedByUser: true })
      const notOwned = projectSettingsFiles({ ...facts, gitRootOwnedByUser: false }).localSettings
      // The root's local file, which Claude Code reads (last) only where the root is the session user's.
      const rootLocal = files.localSettings.find((file) => !notOwned.includes(file)) ?? null
      return { gitRoot, files, rootLocal, project: yield* reader.fact(files.projectSettings) }
    }))
  return Effect.gen(function*() {
    const { files, gitRoot, project, rootLocal } = yield* shared
    // The session's user is read only here: most sessions run at their repository's root, or in none.
    const owned = rootLocal === null || gitRoot === null ? readObserved(true) : yield* rootOwnedBySession(reader, gitRoot, yield* userOf)
    const local: Array<FileFact> = []
    for (const file of files.localSettings) {
      if (file === rootLocal && owned._tag === "Read" && !owned.value) continue
      const fact = yield* reader.fact(file)
      // Whether it counts is unknown; a file that is not there counts for nothing either way.
      const unsure = owned._tag === "Unreadable" && file === rootLocal && fact.read._tag !== "Missing"
      local.push(
        unsure ? notRead(file, `Claude Code reads it only when ${gitRoot}, its .git and its .claude belong to the session's user, and ${owned.reason}`) : fact
      )
    }
    return { project, local }
  })
}

/** The job state's `respawnFlags`: a list of strings, or why it is not one. */
const jobFlagsOf = (read: FileRead): Observed<ReadonlyArray<string>> => {
  switch (read._tag) {
    case "Missing":
      return unreadable("the file does not exist")
    case "NotAFile":
      return unreadable("it is not a regular file")
    case "TooLarge":
      return unreadable("it is larger than this reader reads")
    case "Failed":
      return unreadable(read.reason)
    case "Bytes": {
      const parsed = parseSettingsText(decodeSettingsText(read.bytes))
      if (parsed._tag === "Skipped") return unreadable(`it is not a JSON object (${parsed.reason})`)
      const flags = parsed.document["respawnFlags"]
      // Claude Code defaults a missing list to none: a job launched without flags.
      if (flags === undefined) return readObserved([])
      return Array.isArray(flags) && flags.every((flag) => typeof flag === "string")
        ? readObserved(flags as ReadonlyArray<string>)
        : unreadable("its respawnFlags is not a list of strings")
    }
  }
}

export const make = Effect.gen(function*() {
  const files = yield* Files
  const probe = yield* ProcessProbe
  const callersHome = yield* ClaudeHome
  const registry = yield* Registry

  /** A background job's launch flags, read only for a worker whose own arguments are not the job's. */
  const jobOf = (reader: FileReader, session: Session, evidence: ProcessEvidence, home: ClaudeHome): Effect.Effect<JobLaunch | null> => {
    const cmdline = valueOf(evidence.arguments)
    if (session.kind !== "bg" || session.jobId === null || cmdline === null || !isPreStartedWorker(cmdline)) return Effect.succeed(null)
    if (!/^[A-Za-z0-9_-]+$/.test(session.jobId)) return Effect.succeed(null)
    const file = path.join(home.root, "jobs", session.jobId, "state.json")
    return Effect.map(reader.read(file), (read) => ({ path: file, flags: jobFlagsOf(read) }))
  }

  /**
   * The session's user, read when it is needed, after the rest of its evidence: it is the session's
   * only while its process is still the one the registry proved, so that is confirmed after it.
   */
  const userOfSession = (session: Session): Effect.Effect<Observed<number>> =>
    Effect.gen(function*() {
      const { user } = yield* probe.evidence(session.pid, ["user"])
      if (user === undefined) return unreadable("it was not read")
      // A user that could not be read (macOS reads none) needs no confirming.
      if (valueOf(user) === null) return user
      const still = yield* Effect.orElseSucceed(registry.confirm([session]), () => [])
      return still.length === 1 ? user : unreadable("the session's process ended or changed while its user was read")
    })

  const policyOf = (
    shared: FileReader,
    session: Session,
    evidence: ProcessEvidence,
    userOf: Effect.Effect<Observed<number>> = userOfSession(session)
  ): Effect.Effect<SessionPolicy> =>
    Effect.gen(function*() {
      // Over several homes, the session's user settings are its own home's.
      const home = session.home === undefined ? callersHome : { ...callersHome, root: session.home }
      const job = yield* jobOf(shared, session, evidence, home)
      const launch = { cmdline: evidence.arguments, environ: evidence.environment }
      const trusted = trustedLaunch(launch, job)
      const cmdline = valueOf(trusted.cmdline)
      const environ = valueOf(trusted.environ)
      const args = cmdline === null ? null : claudeArgumentsOf(cmdline)
      const workingDirectory = trusted.claimedSpare ? null : valueOf(evidence.workingDirectory)
      const reader = sessionView(shared, session.pid, evidence.mountNamespace)
      const { local, project } = yield* projectFacts(reader, args, session.cwd ?? workingDirectory, environ, userOf)
      const policy = sessionPolicyOf({
        pid: session.pid,
        sessionId: session.sessionId,
        name: session.name,
        hasSocket: session.socketPath !== null,
        ...launch,
        managed: yield* managedFacts(reader, home.managedSettingsDirectory),
        flag: args === null ? null : yield* flagFact(reader, args, workingDirectory ?? session.cwd),
        user: yield* userFact(shared, reader, home, environ, evidence.mountNamespace),
        project,
        local,
        globalConfig: yield* globalConfigCandidates(reader, home, environ, reader !== shared),
        sdkHosted: session.entrypoint !== null && session.entrypoint !== "cli",
        job,
        background: session.kind === "bg"
      })
      return session.home === undefined ? policy : { ...policy, home: session.home }
    })

  /** A session whose process changed while it was read: nothing of its launch can be trusted. */
  const changed = (reason: string): ProcessEvidence => ({
    arguments: unreadable(reason),
    environment: unreadable(reason),
    workingDirectory: unreadable(reason)
  })

  /** Everything but the user, which `userOfSession` reads where it matters. */
  const evidenceOf = (session: Session): Effect.Effect<ProcessEvidence> =>
    probe.evidence(session.pid, ["arguments", "environment", "workingDirectory", "mountNamespace"])

  const list = Effect.gen(function*() {
    const sessions = yield* registry.list
    const evidence = yield* Effect.forEach(sessions, evidenceOf)
    // Only these sessions' processes are asked again: the rest of the registry decides nothing here.
    const still = yield* registry.confirm(sessions)
    const reader = makeFileReader(files)
    // The session as confirmed (as listed, or as its record reads now), found by its file.
    const stillByFile = new Map(still.map((s) => [s.file, s]))
    const kept = sessions.flatMap((session, i) => {
      const now = stillByFile.get(session.file)
      return now === undefined ? [] : [{ session: now, evidence: evidence[i]! }]
    })
    return yield* Effect.forEach(kept, ({ evidence, session }) => policyOf(reader, session, evidence))
  }).pipe(Effect.withSpan("Policy.list"))

  const resolve = Effect.fn("Policy.resolve")(function*(query: ResolveQuery, given: ResolveOptions = {}): Effect.fn.Return<ResolvedPolicy, ResolveError> {
    // Another user's session has a policy too, though this user cannot deliver to it.
    const options: ResolveOptions = { allowOtherUser: true, ...given }
    let session = yield* registry.resolve(query, options)
    for (let attempt = 1;; attempt++) {
      const evidence = yield* evidenceOf(session)
      const again = yield* registry.resolve(query, options)
      if (sameProvenSession(again, session)) return { session: again, policy: yield* policyOf(makeFileReader(files), again, evidence) }
      if (attempt >= resolveAttempts) {
        const reason = "the session's process kept changing while it was read"
        const policy = yield* policyOf(makeFileReader(files), again, changed(reason), Effect.succeed(unreadable(reason)))
        return { session: again, policy }
      }
      session = again
    }
  })

  return Policy.of({ list, resolve })
})

/** The policy service over the registry and the file and process ports. */
export const layer: Layer.Layer<Policy, never, Registry | Files | ProcessProbe | ClaudeHome> = Layer.effect(Policy, make)
