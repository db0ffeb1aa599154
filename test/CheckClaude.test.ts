/**
 * `npm run check:claude` runs the real Claude Code and is never part of `npm test`; its judgement is
 * plain data and code, tested here without it: the README's table of differences is exactly the
 * list the check judges by, and the check calls a difference documented only under that list's
 * conditions (and fails on anything else).
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

interface Difference {
  readonly id: string
  readonly claudeAgents: string
  readonly claudePeers: string
  readonly why: string
}
interface Finding {
  readonly id: string | null
  readonly text: string
}
interface Row {
  readonly label: string
  readonly pid: string
  readonly findings: ReadonlyArray<Finding>
  readonly judgement: string
}
type Json = Record<string, unknown>
interface Snapshot {
  readonly agents: ReadonlyArray<Json>
  readonly list: ReadonlyArray<Json>
  readonly inspect: ReadonlyArray<Json>
  readonly resolves: Map<string, Json>
  readonly nameResolves: Map<number, Json>
  readonly processStates: Map<number, string | null>
  readonly labels: Map<number, string>
  readonly jobLabels: Map<string, string>
  readonly tracked: ReadonlyArray<Json>
}

const root = join(import.meta.dirname, "..")
const load = async <A>(path: string): Promise<A> => (await import(pathToFileURL(join(root, path)).href)) as A
const { differences, readmeTable } = await load<{
  differences: ReadonlyArray<Difference>
  readmeTable: () => ReadonlyArray<string>
}>("scripts/check-claude/differences.mjs")
const { compareSnapshot, isUndocumented } = await load<{
  compareSnapshot: (snapshot: Snapshot) => ReadonlyArray<Row>
  isUndocumented: (row: Row) => boolean
}>("scripts/check-claude/compare.mjs")

const home = "/home/u/.claude/sessions"
const sessionIdOf = (pid: number) => `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`

/** One live interactive session as both sides print it. */
const live = (pid: number, overrides: { record?: Json; agents?: Json } = {}) => {
  const session: Json = {
    pid,
    sessionId: sessionIdOf(pid),
    name: `work-${pid}`,
    address: `work-${pid}`,
    cwd: "/home/u/work",
    socketPath: `/tmp/cc-socks/${pid}.sock`,
    status: "idle",
    rawStatus: "idle",
    startedAtMs: 1000 + pid,
    kind: "interactive",
    entrypoint: "cli",
    waitingFor: null,
    jobId: null,
    ...overrides.record
  }
  const agents: Json = {
    pid,
    cwd: "/home/u/work",
    kind: "interactive",
    startedAt: 1000 + pid,
    sessionId: sessionIdOf(pid),
    name: `work-${pid}`,
    status: "idle",
    ...overrides.agents
  }
  return { session, agents }
}
const file = (pid: number, verdict: string, detail = verdict): Json => ({
  file: `${home}/${pid}.json`,
  verdict,
  detail,
  pid,
  sessionId: sessionIdOf(pid),
  name: `work-${pid}`
})
const resolved = (session: Json): Json => ({ exit: 0, session })
const refused = (exit: number, error: Json): Json => ({ exit, error })

const snapshotOf = (parts: Partial<Snapshot>): Snapshot => ({
  agents: [],
  list: [],
  inspect: [],
  resolves: new Map(),
  nameResolves: new Map(),
  processStates: new Map(),
  labels: new Map(),
  jobLabels: new Map(),
  tracked: [],
  ...parts
})

/** One session that both sides list, with what resolve said about its id. */
const bothList = (pid: number, overrides: { record?: Json; agents?: Json } = {}, resolve?: Json, byName?: Json) => {
  const { agents, session } = live(pid, overrides)
  return compareSnapshot(snapshotOf({
    agents: [agents],
    list: [session],
    inspect: [file(pid, "live")],
    resolves: new Map([[sessionIdOf(pid), resolve ?? resolved(session)]]),
    nameResolves: new Map(byName === undefined ? [] : [[pid, { query: `work-${pid}`, ...byName }]])
  }))
}

const documentedIds = (rows: ReadonlyArray<Row>) => rows.flatMap((row) => row.findings.map((f) => f.id))

describe("the differences from claude agents", () => {
  it("are the README's table, row for row", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8").split("\n")
    const heading = readme.indexOf("## Differences from `claude agents`")
    expect(heading).toBeGreaterThan(-1)
    const firstRow = readme.findIndex((line, i) => i > heading && line.startsWith("|"))
    const end = readme.findIndex((line, i) => i > firstRow && !line.startsWith("|"))
    expect(readme.slice(firstRow, end)).toEqual(readmeTable())
  })

  it("each have an id of their own and say both sides and why", () => {
    expect(new Set(differences.map((d) => d.id)).size).toBe(differences.length)
    for (const d of differences) {
      expect(d.id).toMatch(/^[a-z]+(-[a-z]+)*$/)
      expect([d.claudeAgents, d.claudePeers, d.why].every((text) => text.length > 10)).toBe(true)
    }
  })
})

describe("the check's judgement", () => {
  it("agrees when both list the same session alike and resolve answers it", () => {
    const rows = bothList(10)
    expect(rows.map((row) => row.judgement)).toEqual(["agree"])
  })

  it("calls a shell status documented, and any other status difference undocumented", () => {
    const shell = bothList(11, { record: { status: "idle", rawStatus: "shell" }, agents: { status: "busy" } })
    expect(documentedIds(shell)).toEqual(["shell-status"])
    const other = bothList(12, { record: { status: "idle", rawStatus: "idle" }, agents: { status: "busy" } })
    expect(other.some(isUndocumented)).toBe(true)
  })

  it("fails a session that claude agents lists and list does not, unless it is a zombie", () => {
    const { agents } = live(13)
    const dead = snapshotOf({ agents: [agents], inspect: [file(13, "dead")], processStates: new Map([[13, null]]) })
    expect(compareSnapshot(dead).some(isUndocumented)).toBe(true)
    const zombie = compareSnapshot({ ...dead, processStates: new Map([[13, "Z"]]) })
    expect(documentedIds(zombie)).toEqual(["zombie"])
    expect(zombie.some(isUndocumented)).toBe(false)
  })

  it("fails a session that list shows and claude agents does not", () => {
    const { session } = live(14)
    const rows = compareSnapshot(snapshotOf({
      list: [session],
      inspect: [file(14, "live")],
      resolves: new Map([[sessionIdOf(14), resolved(session)]])
    }))
    expect(rows.some(isUndocumented)).toBe(true)
  })

  it("documents not_addressable only for a session without a socket", () => {
    const refusal = refused(8, { reason: "not_addressable" })
    const noSocket = bothList(15, { record: { socketPath: null, address: null } }, refusal)
    expect(documentedIds(noSocket)).toEqual(["no-socket"])
    expect(bothList(16, {}, refusal).some(isUndocumented)).toBe(true)
  })

  it("documents a shared name only when --allow-shared-name then answers the session", () => {
    const { session } = live(17)
    const sharedName = { reason: "identity_mismatch", shared: "name" }
    const answered = bothList(17, {}, { ...refused(4, sharedName), allowSharedName: resolved(session) })
    expect(documentedIds(answered)).toEqual(["shared-name"])
    const still = bothList(17, {}, { ...refused(4, sharedName), allowSharedName: refused(4, sharedName) })
    expect(still.some(isUndocumented)).toBe(true)
  })

  it("documents a refusal by name only for a name that resolving the id found shared", () => {
    const { session } = live(25)
    const sharedName = { reason: "identity_mismatch", shared: "name" }
    const shared = bothList(
      25,
      {},
      { ...refused(4, sharedName), allowSharedName: resolved(session) },
      refused(4, { reason: "identity_mismatch", shared: "query" })
    )
    expect(new Set(documentedIds(shared))).toEqual(new Set(["shared-name"]))
    const unique = bothList(26, {}, undefined, refused(4, { reason: "identity_mismatch", shared: "query" }))
    expect(unique.some(isUndocumented)).toBe(true)
    expect(bothList(27, {}, undefined, resolved(live(27).session)).map((row) => row.judgement)).toEqual(["agree"])
  })

  it("documents an id that two live records carry, when claude agents lists both", () => {
    const twin = live(28, { record: { sessionId: sessionIdOf(18) }, agents: { sessionId: sessionIdOf(18) } })
    const refusal = refused(4, { reason: "identity_mismatch", shared: "query", candidates: [{ pid: 18 }, { pid: 28 }] })
    const { agents: first, session } = live(18)
    const both = compareSnapshot(snapshotOf({
      agents: [first, twin.agents],
      list: [session, twin.session],
      inspect: [file(18, "live"), file(28, "live")],
      resolves: new Map([[sessionIdOf(18), refusal]])
    }))
    expect(new Set(documentedIds(both))).toEqual(new Set(["duplicate-session-id"]))
    // A competitor that claude agents does not list: the refusal is not Claude Code's view.
    const alone = compareSnapshot(snapshotOf({
      agents: [first],
      list: [session],
      inspect: [file(18, "live")],
      resolves: new Map([[sessionIdOf(18), refusal]])
    }))
    expect(alone.flatMap((row) => row.findings).filter((f) => f.id === null).map((f) => f.text))
      .toEqual(["resolve names competitors that claude agents does not list: pids 28"])
  })

  it("documents a background job's shape, and fails a job id that differs", () => {
    const job = { record: { kind: "bg", jobId: "0000abcd" }, agents: { kind: "background", id: "0000abcd", state: "blocked" } }
    expect(documentedIds(bothList(19, job))).toEqual(["job-shape"])
    const otherId = { ...job, agents: { ...job.agents, id: "0000ffff" } }
    expect(bothList(19, otherId).some(isUndocumented)).toBe(true)
  })

  it("documents a job listed without a pid, and fails an interactive session listed so", () => {
    const entry = { kind: "background", id: "0000abcd", sessionId: sessionIdOf(20), name: "job", state: "working" }
    const job = compareSnapshot(snapshotOf({ agents: [entry], resolves: new Map([[sessionIdOf(20), refused(3, { reason: "not_live" })]]) }))
    expect(documentedIds(job)).toEqual(["killed-job"])
    const interactive = compareSnapshot(snapshotOf({ agents: [{ ...entry, kind: "interactive" }] }))
    expect(interactive.some(isUndocumented)).toBe(true)
  })

  it("documents what inspect says of spares and parked windows, and agrees on dead records", () => {
    const rows = compareSnapshot(snapshotOf({
      inspect: [file(21, "spare"), file(22, "parked", "parked: the session moved to background job 0000abcd"), file(23, "dead")],
      resolves: new Map([21, 22, 23].map((pid) => [sessionIdOf(pid), refused(3, { reason: "not_live" })]))
    }))
    expect(rows.map((row) => row.findings.map((f) => f.id))).toEqual([["spare"], ["parked-window"], []])
    expect(rows[2]?.judgement).toBe("agree")
  })

  it("fails a record that neither lists but resolve answers", () => {
    const { session } = live(24)
    const rows = compareSnapshot(snapshotOf({
      inspect: [file(24, "dead")],
      resolves: new Map([[sessionIdOf(24), resolved(session)]])
    }))
    expect(rows.some(isUndocumented)).toBe(true)
  })
})
