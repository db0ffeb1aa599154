/**
 * Properties of the scan over generated registries and process tables (in-memory layers). Each
 * generated file carries an intent (what it is meant to be), and the expected verdict follows
 * from the intent alone, so the oracle shares no code with the registry.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { normalizeName } from "../src/domain/Names.js"
import type { Session } from "../src/domain/Session.js"
import type { RegistryEntry, VerdictName } from "../src/domain/Verdict.js"
import { Registry, type ResolveQuery } from "../src/services/Registry.js"
import { recordText } from "./support/records.js"
import { makeMemoryRegistry } from "./support/worlds.js"

const intents = [
  "live",
  "live_without_proc_start",
  "live_with_unreadable_start",
  "dead",
  "killed_after_write",
  "died_during_check",
  "reused_after_write",
  "parked",
  "no_name",
  "without_socket",
  "spare",
  "zombie",
  "empty_session_id",
  "malformed",
  "torn_then_whole",
  "invalid_pid",
  "pid_mismatch",
  "other_pid_domain",
  "not_a_record",
  "not_a_file",
  "unreadable"
] as const
type Intent = typeof intents[number]

const expectedVerdict: Record<Intent, VerdictName> = {
  live: "live",
  live_without_proc_start: "live",
  live_with_unreadable_start: "live",
  dead: "dead",
  killed_after_write: "dead",
  died_during_check: "dead",
  reused_after_write: "pid_reused",
  parked: "parked",
  no_name: "no_name",
  without_socket: "live",
  spare: "spare",
  zombie: "dead",
  empty_session_id: "empty_session_id",
  malformed: "malformed",
  torn_then_whole: "live",
  invalid_pid: "invalid_pid",
  pid_mismatch: "pid_mismatch",
  other_pid_domain: "other_pid_domain",
  not_a_record: "not_a_record",
  not_a_file: "not_a_file",
  unreadable: "unreadable"
}

const status = fc.oneof(
  fc.constantFrom("busy", "idle", "shell", "waiting", undefined),
  fc.string({ maxLength: 12 }),
  fc.integer()
)

const extra = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) =>
    !["pid", "sessionId", "name", "messagingSocketPath", "parkedJobId", "procStart", "pidDomain", "spare", "__proto__"].includes(k)
  ),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 }
)

/** Few ids and names, so that generated registries share them as real ones do (derived names collide, `(backgrounded)` jobs). */
const sessionIds = ["s-1", "s-2", "s-3"] as const
const names = ["alpha", "Alpha", " alpha ", "beta", "(backgrounded)"] as const

const fileSpec = fc.record({
  pid: fc.integer({ min: 1, max: 60_000 }),
  intent: fc.constantFrom(...intents),
  status,
  extra,
  sessionId: fc.constantFrom(...sessionIds),
  name: fc.constantFrom(...names)
})
const registrySpec = fc.uniqueArray(fileSpec, { selector: (f) => f.pid, maxLength: 24 })
type FileSpec = typeof fileSpec extends fc.Arbitrary<infer A> ? A : never

const fileName = (spec: FileSpec) => (spec.intent === "not_a_record" ? `0${spec.pid}.json` : `${spec.pid}.json`)

/** Lays the generated files and processes out in a fresh in-memory world. */
const build = (specs: ReadonlyArray<FileSpec>) => {
  const world = makeMemoryRegistry()
  const { processes, tree: files } = world.world
  const path = (spec: FileSpec) => `${world.sessions}/${fileName(spec)}`
  for (const spec of specs) {
    const base = { status: spec.status, ...spec.extra, sessionId: spec.sessionId, name: spec.name }
    const started = processes.spawn({ pid: spec.pid })
    const live = { ...base, procStart: started.startTime, pidDomain: world.pidDomain }
    const write = (options: Record<string, unknown>, pid: unknown = spec.pid) => world.write(fileName(spec), recordText(pid, options))
    switch (spec.intent) {
      case "live":
      case "not_a_record":
        write(live)
        break
      case "live_without_proc_start":
        write({ ...live, procStart: undefined })
        break
      case "live_with_unreadable_start":
        write(live)
        processes.setStartTimeUnreadable(spec.pid)
        break
      case "dead":
        processes.kill(spec.pid)
        write(live)
        break
      case "killed_after_write":
        write(live)
        processes.kill(spec.pid)
        break
      case "died_during_check":
        write(live)
        processes.dieDuringCheck(spec.pid)
        break
      case "reused_after_write":
        write(live)
        processes.reuse(spec.pid)
        break
      case "parked":
        write({ ...live, parkedJobId: "d781d7b2" })
        break
      case "no_name":
        write({ ...live, name: "" })
        break
      case "without_socket":
        write({ ...live, messagingSocketPath: undefined })
        break
      case "spare":
        write({ ...live, spare: true, kind: "bg" })
        break
      case "zombie":
        write(live)
        processes.exitUnreaped(spec.pid)
        break
      case "empty_session_id":
        write({ ...live, sessionId: "" })
        break
      case "malformed":
        world.write(fileName(spec), recordText(spec.pid, live).slice(0, -1))
        break
      case "torn_then_whole":
        write(live)
        files.tearNextReads(path(spec), 10, 1)
        break
      case "invalid_pid":
        write(live, -spec.pid)
        break
      case "pid_mismatch":
        write(live, spec.pid + 1)
        break
      case "other_pid_domain":
        write({ ...live, pidDomain: "linux:elsewhere:pid:[9]" })
        break
      case "not_a_file":
        files.makeDirectory(path(spec))
        break
      case "unreadable":
        write(live)
        files.setUnreadable(path(spec))
        break
    }
  }
  return world
}

/** The torn-read retry needs no real pause in memory: the tear is spent by the first read. */
const layerOf = (world: ReturnType<typeof makeMemoryRegistry>) => world.layerWith({ timing: { tornReadRetry: 0 } })

const scan = (world: ReturnType<typeof makeMemoryRegistry>) =>
  Effect.provide(Effect.flatMap(Registry, (r) => Effect.all({ entries: r.inspect, live: r.list })), layerOf(world))

const expectedStatus = (raw: unknown): Session["status"] =>
  raw === "busy" ? "busy" : raw === "idle" || raw === "shell" ? "idle" : raw === "waiting" ? "waiting" : null

describe("registry properties (in-memory layers)", () => {
  it.live.prop(
    "every file gets the verdict its intent implies; list is exactly the live ones, sorted by pid",
    { specs: registrySpec },
    ({ specs }) =>
      Effect.gen(function*() {
        const world = build(specs)
        const { entries, live } = yield* scan(world)
        const byName = new Map(entries.map((e) => [e.file.slice(world.sessions.length + 1), e.verdict._tag]))
        expect(entries).toHaveLength(specs.length)
        for (const spec of specs) expect(byName.get(fileName(spec)), spec.intent).toBe(expectedVerdict[spec.intent])
        const livePids = specs.filter((s) => expectedVerdict[s.intent] === "live").map((s) => s.pid).sort((a, b) => a - b)
        expect(live.map((s) => s.pid)).toEqual(livePids)
        // An unknown status never drops a record: it is kept raw, with a null status.
        for (const session of live) {
          const spec = specs.find((s) => s.pid === session.pid)!
          expect(session.status).toBe(expectedStatus(spec.status))
          expect(session.rawStatus).toBe(typeof spec.status === "string" ? spec.status : null)
        }
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.live.prop(
    "a dead, parked or reused pid is never live, whatever else the record says",
    { specs: registrySpec.filter((s) => s.length > 0) },
    ({ specs: generated }) =>
      Effect.gen(function*() {
        const specs = generated.map((s) => ({ ...s, intent: "live" as const }))
        const world = build(specs)
        // Now take every process away in one of the ways the contract names.
        specs.forEach((spec, i) => {
          switch (i % 3) {
            case 0:
              world.world.processes.kill(spec.pid)
              break
            case 1:
              world.world.processes.reuse(spec.pid)
              break
            case 2:
              world.write(fileName(spec), recordText(spec.pid, { parkedJobId: "abc", procStart: world.world.processes.startTimeOf(spec.pid) }))
              break
          }
        })
        const { entries, live } = yield* scan(world)
        expect(live).toEqual([])
        expect(entries.map((e) => e.verdict._tag).sort()).toEqual(
          specs.map((_, i) => (["dead", "pid_reused", "parked"] as const)[i % 3]).sort()
        )
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.live.prop(
    "a record's verdict does not depend on the other files",
    { specs: registrySpec.filter((s) => s.length > 0), pick: fc.nat() },
    ({ pick, specs }) =>
      Effect.gen(function*() {
        const chosen = specs[pick % specs.length]!
        const together = yield* scan(build(specs))
        const alone = yield* scan(build([chosen]))
        const verdictIn = (entries: typeof together.entries) => entries.find((e) => e.file.endsWith(`/${fileName(chosen)}`))?.verdict._tag
        expect(verdictIn(together.entries)).toBe(verdictIn(alone.entries))
        expect(verdictIn(alone.entries)).toBe(expectedVerdict[chosen.intent])
      }),
    { fastCheck: { numRuns: 40 } }
  )

  /**
   * The contract's resolving rules applied to the full scan: exactly one live record carries the id
   * (or the name, normalized), its name (or id) is carried by no other live record unless a shared
   * name is allowed, and it has a socket. Written from the rules, not from the service's code.
   */
  const oracle = (entries: ReadonlyArray<RegistryEntry>, query: ResolveQuery, allowSharedName: boolean) => {
    const live = entries.flatMap((e) => (e.verdict._tag === "live" ? [e.verdict.session] : []))
    const asks = (sessionId: string | null, name: string | null) =>
      query.sessionId !== undefined ? sessionId === query.sessionId : name !== null && normalizeName(name) === normalizeName(query.name)
    const found = live.filter((s) => asks(s.sessionId, s.name))
    if (found.length === 0) {
      return { _tag: "NotLive", verdicts: entries.filter((e) => e.verdict._tag !== "live" && asks(e.sessionId, e.name)).map((e) => e.verdict._tag) }
    }
    if (found.length > 1) return { _tag: "IdentityMismatch", pids: found.map((s) => s.pid).sort((a, b) => a - b) }
    const [one] = found
    const others = live.filter((s) => s.pid !== one!.pid)
    const rivals = query.sessionId !== undefined
      ? (allowSharedName ? [] : others.filter((s) => normalizeName(s.name) === normalizeName(one!.name)))
      : others.filter((s) => s.sessionId === one!.sessionId)
    if (rivals.length > 0) return { _tag: "IdentityMismatch", pids: [one!, ...rivals].map((s) => s.pid).sort((a, b) => a - b) }
    if (one!.socketPath === null) return { _tag: "NotAddressable", pid: one!.pid }
    return { _tag: "Success", pid: one!.pid }
  }

  it.live.prop(
    "resolve, which reads only the live pids' files unless it refuses with not_live, answers as the rules over the full scan",
    {
      specs: registrySpec,
      query: fc.oneof(
        fc.constantFrom(...sessionIds, "s-unknown").map((sessionId): ResolveQuery => ({ sessionId })),
        fc.constantFrom(...names, "ALPHA", "nobody").map((name): ResolveQuery => ({ name }))
      ),
      allowSharedName: fc.boolean()
    },
    ({ allowSharedName, query, specs }) =>
      Effect.gen(function*() {
        const world = build(specs)
        const options = query.sessionId !== undefined ? { allowSharedName } : {}
        const { entries } = yield* scan(world)
        const exit = yield* Effect.provide(Effect.flatMap(Registry, (r) => Effect.either(r.resolve(query, options))), layerOf(world))
        const answer = exit._tag === "Right"
          ? { _tag: "Success", pid: exit.right.pid }
          : exit.left._tag === "NotLive"
          ? { _tag: "NotLive", verdicts: exit.left.reasons.map((r) => r.verdict) }
          : exit.left._tag === "IdentityMismatch"
          ? { _tag: "IdentityMismatch", pids: exit.left.candidates.map((c) => c.pid).sort((a, b) => a - b) }
          : exit.left._tag === "NotAddressable"
          ? { _tag: "NotAddressable", pid: exit.left.session.pid }
          : { _tag: exit.left._tag }
        expect(answer).toEqual(oracle(entries, query, allowSharedName === true && query.sessionId !== undefined))
      }),
    { timeout: 60_000, fastCheck: { numRuns: 200 } }
  )
})
