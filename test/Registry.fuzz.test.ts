/**
 * The registry parser against hostile files, on the shipped memory layer (`layerMemory`): records
 * whose members hold any JSON value (tens of thousands of levels deep, wide, huge strings, every
 * type, duplicated keys), damaged bytes, arbitrary bytes, and file names that are not a record's.
 * Every file gets the verdict the contract's table gives its bytes, never a defect; details stay
 * short; the JSON output encodes; the human output is terminal-safe; `resolve` answers or refuses
 * with a typed error. The same files go through the built command in `Registry.fuzz.cli.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, FastCheck as fc, Queue, Schema, Stream, TestClock } from "effect"
import { entriesTable, eventLine, InspectRow, inspectRow, sessionDetails, sessionsTable } from "../src/cli/Render.js"
import { jsonText, terminalSafe } from "../src/cli/Text.js"
import { Session } from "../src/domain/Session.js"
import { SessionEvent } from "../src/domain/SessionEvent.js"
import { describeVerdict } from "../src/domain/Verdict.js"
import { Registry } from "../src/services/Registry.js"
import { Watch } from "../src/services/Watch.js"
import {
  bytesOf,
  type Context,
  describePlan,
  expectedVerdict,
  fileNameOf,
  type FilePlan,
  filePlan,
  maxDetailLength,
  registryPlan,
  terminalUnsafe
} from "./support/hostileRecords.js"
import { makeMemoryRegistry } from "./support/worlds.js"

const encodeRows = Schema.encodeSync(Schema.Array(InspectRow))
const encodeSessions = Schema.encodeSync(Schema.Array(Session))
const encodeEvent = Schema.encodeSync(SessionEvent)

const queries = [
  { sessionId: "00000000-0000-4000-8000-000000000000" },
  { sessionId: "00000000-0000-4000-8000-000000000001" },
  { name: "app" },
  { name: "docs" }
] as const

/** Lays the planned files out in a fresh memory world: each file on its own process, live or already gone. */
const build = (plans: ReadonlyArray<FilePlan>) => {
  const world = makeMemoryRegistry()
  const { processes } = world.world
  const files = plans.map((plan, index) => {
    const started = processes.spawn()
    if (plan.target === "dead") processes.kill(started.pid)
    const context: Context = { pid: started.pid, alive: plan.target === "live", startTime: started.startTime, here: world.pidDomain }
    const name = fileNameOf(plan, started.pid, index)
    const bytes = bytesOf(plan, context, index)
    world.write(name, bytes)
    return { name, plan, expected: expectedVerdict(bytes, plan.nameKind === "canonical" ? started.pid : null, context) }
  })
  return { world, files }
}

/**
 * A turn of the event loop between cases: a case is synchronous work of up to a few hundred
 * milliseconds, and the test runner's worker must still answer its own messages in between.
 */
const letTheLoopRun = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

const expectTerminalSafe = (text: string, what: string) => {
  const unsafe = terminalUnsafe.exec(text)
  expect(unsafe === null ? null : `${what}: U+${unsafe[0].codePointAt(0)!.toString(16)} at ${unsafe.index}`).toBe(null)
}

describe("registry fuzz (memory layer)", () => {
  it.live.prop(
    "any record, any bytes: each file its contract verdict, short details, JSON that encodes, human output that is terminal-safe",
    { plans: registryPlan },
    ({ plans }) =>
      Effect.gen(function*() {
        yield* letTheLoopRun
        const { files, world } = build(plans)
        const registry = yield* Effect.provide(Registry, world.layerWith({ timing: { tornReadRetry: 0 } }))
        const entries = yield* registry.inspect
        const live = yield* registry.list
        const context = files.map((f) => `${f.name}: ${describePlan(f.plan)}`).join("\n")
        expect(entries.map((e) => [e.file.slice(world.sessions.length + 1), e.verdict._tag]), context).toEqual(
          files.map((f) => [f.name, f.expected]).sort(([a], [b]) => (a! < b! ? -1 : 1))
        )
        expect(live.map((s) => s.pid)).toEqual(
          entries.flatMap((e) => (e.verdict._tag === "live" ? [e.verdict.session.pid] : [])).sort((a, b) => a - b)
        )
        for (const entry of entries) expect(describeVerdict(entry.verdict).length, context).toBeLessThanOrEqual(maxDetailLength)
        // What `inspect --json` and `list --json` print; JSON.stringify of a record's deep value would throw here.
        expectTerminalSafe(jsonText(encodeRows(entries.map(inspectRow))), "inspect --json")
        expectTerminalSafe(jsonText(encodeSessions(live)), "list --json")
        expectTerminalSafe(entriesTable(entries).replaceAll("\n", ""), "inspect")
        expectTerminalSafe(sessionsTable(live).replaceAll("\n", ""), "list")
        for (const session of live) expectTerminalSafe(sessionDetails(session).replaceAll("\n", ""), "resolve")
        for (const query of queries) {
          const answer = yield* Effect.either(registry.resolve(query))
          if (answer._tag === "Left") {
            expect(answer.left.message.length, context).toBeLessThanOrEqual(2_000)
            expectTerminalSafe(terminalSafe(answer.left.message), "a refusal")
            if (answer.left._tag !== "SystemError" && answer.left._tag !== "BadArgument") {
              JSON.stringify(Schema.encodeSync(answer.left.constructor as unknown as Schema.Schema<unknown, unknown>)(answer.left))
            }
          }
        }
      }),
    { timeout: 240_000, fastCheck: { numRuns: 100 } }
  )

  it.scoped.prop(
    "a running watch outlives any record written into its directory, and reports the well-formed ones after it",
    { hostile: fc.array(filePlan, { minLength: 1, maxLength: 3 }) },
    ({ hostile }) =>
      Effect.gen(function*() {
        yield* letTheLoopRun
        const world = makeMemoryRegistry()
        const { processes } = world.world
        const events = yield* Queue.unbounded<SessionEvent>()
        yield* Stream.unwrap(Effect.map(Watch, (watch) => watch.sessions())).pipe(
          Stream.runForEach((event) => Queue.offer(events, event)),
          Effect.provide(world.layerWith({ timing: { tornReadRetry: 0 } })),
          Effect.forkScoped
        )
        yield* TestClock.adjust(100)
        hostile.forEach((plan, index) => {
          const started = processes.spawn()
          const context: Context = { pid: started.pid, alive: true, startTime: started.startTime, here: world.pidDomain }
          world.write(fileNameOf(plan, started.pid, index), bytesOf(plan, context, index))
        })
        yield* TestClock.adjust(2_100)
        const proc = processes.spawn()
        world.write(`${proc.pid}.json`, JSON.stringify({ pid: proc.pid, sessionId: "after", name: "after", procStart: proc.startTime }))
        yield* TestClock.adjust(2_100)
        const seen = Chunk.toArray(yield* Queue.takeAll(events))
        expect(seen.filter((e) => e._tag === "appeared" && e.session.pid === proc.pid)).toHaveLength(1)
        for (const event of seen) {
          expectTerminalSafe(jsonText(encodeEvent(event)), "watch --json")
          expectTerminalSafe(eventLine(event), "watch")
        }
      }),
    { timeout: 300_000, fastCheck: { numRuns: 50 } }
  )
})
