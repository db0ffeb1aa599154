/**
 * The registry's behaviour, written once and run against the in-memory layers and against the
 * real OS (a temporary Claude home, real child processes started and killed by the test).
 * One test per row of the contract's verdict table, plus status mapping, sorting and resolving.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Option, TestClock, TestContext } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { VerdictName } from "../src/domain/Verdict.js"
import { Registry, type ResolveOptions } from "../src/services/Registry.js"
import { defaults } from "../src/services/Timing.js"
import { recordText } from "./support/records.js"
import { makeMemoryRegistry, makeNodeRegistry, type World, type WorldOptions } from "./support/worlds.js"

const fixtures = path.resolve(import.meta.dirname, "fixtures/real-records")

const suite = (name: string, makeWorld: (options?: WorldOptions) => World) =>
  describe(`registry conformance: ${name}`, () => {
    const withWorld = <A>(body: (world: World) => Promise<A>) => async () => {
      const world = makeWorld()
      try {
        return await body(world)
      } finally {
        await world.close()
      }
    }
    const run = <A, E>(world: World, effect: Effect.Effect<A, E, Registry>) => Effect.runPromise(Effect.provide(effect, world.layer))
    const inspect = (world: World) => run(world, Effect.flatMap(Registry, (r) => r.inspect))
    const list = (world: World) => run(world, Effect.flatMap(Registry, (r) => r.list))
    const verdictOf = async (world: World, file: string): Promise<VerdictName | undefined> =>
      (await inspect(world)).find((e) => path.basename(e.file) === file)?.verdict._tag
    const resolveExit = (world: World, query: { sessionId: string } | { name: string }, options: ResolveOptions = {}) =>
      Effect.runPromise(Effect.exit(Effect.provide(Effect.flatMap(Registry, (r) => r.resolve(query, options)), world.layer)))
    const resolveFailure = async (world: World, query: { sessionId: string } | { name: string }, options: ResolveOptions = {}) => {
      const exit = await resolveExit(world, query, options)
      if (Exit.isSuccess(exit)) throw new Error(`resolved ${JSON.stringify(query)} to pid ${exit.value.pid}`)
      const failure = Cause.failureOption(exit.cause)
      if (Option.isNone(failure)) throw new Error(`resolve died: ${Cause.pretty(exit.cause)}`)
      return failure.value
    }

    it(
      "decodes every real record captured from Claude Code, and a live one is listed",
      withWorld(async (world) => {
        const proc = world.spawn()
        for (const file of fs.readdirSync(fixtures)) {
          const original = JSON.parse(fs.readFileSync(path.join(fixtures, file), "utf8")) as Record<string, unknown>
          const text = JSON.stringify({ ...original, pid: proc.pid, procStart: proc.startTime, pidDomain: world.pidDomain })
          world.write(`${proc.pid}.json`, text)
          const entries = await inspect(world)
          expect(entries).toHaveLength(1)
          // Until the verdicts of socket-less sessions and spares follow the contract's latest revision.
          const expected: VerdictName = "parkedJobId" in original ? "parked" : original.spare === true ? "spare" : "live"
          expect(entries[0]!.verdict._tag, file).toBe(expected)
          expect(entries[0]!.sessionId).toBe(original.sessionId)
          expect(entries[0]!.name).toBe(original.name)
          if (entries[0]!.verdict._tag === "live") {
            const session = entries[0]!.verdict.session
            expect(session).toMatchObject({
              pid: proc.pid,
              sessionId: original.sessionId,
              name: original.name,
              cwd: original.cwd,
              socketPath: original.messagingSocketPath ?? null,
              rawStatus: original.status ?? null,
              updatedAtMs: original.updatedAt ?? null,
              statusUpdatedAtMs: original.statusUpdatedAt ?? null,
              startedAtMs: original.startedAt,
              kind: original.kind,
              entrypoint: original.entrypoint ?? null,
              nameSource: original.nameSource ?? null,
              address: original.messagingSocketPath === undefined ? null : original.name,
              waitingFor: original.waitingFor ?? null,
              jobId: original.jobId ?? null,
              version: original.version,
              tmux: original.tmux ?? null,
              file: path.join(world.sessions, `${proc.pid}.json`)
            })
          }
        }
      })
    )

    it(
      "a missing registry directory is an empty registry",
      withWorld(async (world) => {
        world.remove("")
        expect(await inspect(world)).toEqual([])
        expect(await list(world)).toEqual([])
      })
    )

    it("missingDirectory tells a Claude home that does not exist from one without sessions", async () => {
      const missing = (world: World) => run(world, Effect.flatMap(Registry, (r) => r.missingDirectory))
      const worlds = [makeWorld({ missingHome: true }), makeWorld({ sessionsDirectory: false }), makeWorld()]
      try {
        const [noHome, noSessions, present] = worlds as [World, World, World]
        expect(await missing(noHome)).toEqual(Option.some({ directory: "home", path: noHome.home }))
        expect(await missing(noSessions)).toEqual(Option.some({ directory: "sessions", path: noSessions.sessions }))
        expect(await missing(present)).toEqual(Option.none())
        // All three are empty registries: only missingDirectory tells them apart.
        for (const world of worlds) expect(await list(world)).toEqual([])
        present.remove("")
        expect(await missing(present)).toEqual(Option.some({ directory: "sessions", path: present.sessions }))
      } finally {
        for (const world of worlds) await world.close()
      }
    })

    it(
      "not_a_record: names that are not <pid>.json with a canonical pid; other files are ignored",
      withWorld(async (world) => {
        const proc = world.spawn()
        for (const name of ["foo.json", "0123.json", "pid-12.json", "-5.json", "1.5.json", "+7.json", " 8.json", "9.JSON.json"]) {
          world.write(name, recordText(proc.pid, { procStart: proc.startTime }))
        }
        world.write(`${proc.pid}.abc123.key`, "token")
        world.write(`${proc.pid}.json.tmp`, "x")
        const entries = await inspect(world)
        expect(entries.map((e) => path.basename(e.file))).toEqual(
          [" 8.json", "+7.json", "-5.json", "0123.json", "1.5.json", "9.JSON.json", "foo.json", "pid-12.json"]
        )
        expect(entries.every((e) => e.verdict._tag === "not_a_record")).toBe(true)
        expect(await list(world)).toEqual([])
      })
    )

    it(
      "not_a_file: a directory, a FIFO, a link to a device; nothing hangs",
      withWorld(async (world) => {
        world.mkdir("101.json")
        world.mkfifo("102.json")
        world.linkToDevice("103.json")
        const entries = await inspect(world)
        expect(entries.map((e) => e.verdict)).toEqual([
          { _tag: "not_a_file", type: "Directory" },
          { _tag: "not_a_file", type: "FIFO" },
          { _tag: "not_a_file", type: "CharacterDevice" }
        ])
        expect(entries.map((e) => e.pid)).toEqual([101, 102, 103])
      })
    )

    it(
      "a link to a live record is read through",
      withWorld(async (world) => {
        const proc = world.spawn()
        world.write("target.txt", recordText(proc.pid, { procStart: proc.startTime }))
        world.symlink(path.join(world.sessions, "target.txt"), `${proc.pid}.json`)
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("live")
      })
    )

    it(
      "too_large: more than 256 KiB, even when the JSON is a valid live record",
      withWorld(async (world) => {
        const proc = world.spawn()
        const other = world.spawn()
        const padding = "x".repeat(300 * 1024)
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, padding }))
        // Exactly 256 KiB is still read, and is a live record.
        const exact = recordText(other.pid, { procStart: other.startTime })
        world.write(`${other.pid}.json`, exact + " ".repeat(256 * 1024 - exact.length))
        const verdicts = new Map((await inspect(world)).map((e) => [e.pid, e.verdict._tag]))
        expect(verdicts.get(proc.pid)).toBe("too_large")
        expect(verdicts.get(other.pid)).toBe("live")
      })
    )

    it(
      "unreadable: a dangling link (the file vanished)",
      withWorld(async (world) => {
        world.symlink(path.join(world.sessions, "gone.txt"), "104.json")
        const [entry] = await inspect(world)
        expect(entry!.verdict).toEqual({ _tag: "unreadable", reason: "the link points to nothing" })
      })
    )

    it(
      "malformed: not JSON, a byte-order mark, invalid UTF-8, not an object, sessionId or pid of the wrong type",
      withWorld(async (world) => {
        world.write("1.json", "{\"pid\":1,")
        world.write("2.json", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(recordText(2))]))
        const notUtf8 = Buffer.from(recordText(3))
        notUtf8[notUtf8.indexOf("work-3")] = 0xff
        world.write("3.json", notUtf8)
        world.write("4.json", "[1,2]")
        world.write("5.json", recordText(5, { sessionId: 5 }))
        world.write("6.json", recordText("6"))
        world.write("7.json", "null")
        world.write("8.json", "")
        const entries = await inspect(world)
        expect(entries.map((e) => e.verdict._tag)).toEqual(Array(8).fill("malformed"))
      })
    )

    /**
     * `inspect` on a `TestClock`, whose only wait is the torn-read retry: it is left to run until it
     * ends or waits on the clock; a wait is then moved past, after `whileWaiting` (another writer
     * finishing its rewrite). Nothing depends on how fast the machine is.
     */
    const inspectOnTestClock = (world: World, whileWaiting: () => void = () => {}) =>
      Effect.runPromise(
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(Effect.flatMap(Registry, (r) => r.inspect))
          let waited = false
          while (Option.isNone(yield* Fiber.poll(fiber))) {
            if ((yield* TestClock.sleeps()).length > 0) {
              waited = true
              whileWaiting()
              yield* TestClock.adjust(defaults.tornReadRetry)
              break
            }
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1)))
          }
          return { waited, entries: yield* Fiber.join(fiber) }
        }).pipe(Effect.provide(world.layer), Effect.provide(TestContext.TestContext))
      )
    const tornRetryMillis = Duration.toMillis(defaults.tornReadRetry)

    it(
      `malformed at once: a torn record of a dead pid is not read again, nor waited for (${tornRetryMillis} ms)`,
      withWorld(async (world) => {
        const dead = await world.deadPid()
        world.write(`${dead}.json`, recordText(dead).slice(0, 40))
        const { entries, waited } = await inspectOnTestClock(world)
        expect(waited).toBe(false)
        expect(entries.map((e) => [e.pid, e.verdict._tag])).toEqual([[dead, "malformed"]])
      })
    )

    it(
      "a torn record of a live pid is read again after the pause, and a dead pid's beside it is not",
      withWorld(async (world) => {
        const proc = world.spawn()
        const dead = await world.deadPid()
        const whole = {
          [proc.pid]: recordText(proc.pid, { procStart: proc.startTime, pidDomain: world.pidDomain }),
          [dead]: recordText(dead)
        }
        for (const [pid, text] of Object.entries(whole)) world.write(`${pid}.json`, text.slice(0, 40))
        // Both rewrites end during the pause: only a second read can see the live one whole, and a
        // second read of the dead pid's file would find it `dead`, not `malformed`.
        const { entries, waited } = await inspectOnTestClock(world, () => {
          for (const [pid, text] of Object.entries(whole)) world.write(`${pid}.json`, text)
        })
        expect(waited).toBe(true)
        const verdictOfPid = (pid: number) => entries.find((e) => e.pid === pid)?.verdict._tag
        expect(verdictOfPid(proc.pid)).toBe("live")
        expect(verdictOfPid(dead)).toBe("malformed")
      })
    )

    it(
      "invalid_pid: 0, negative, fractional and too large pids",
      withWorld(async (world) => {
        world.write("1.json", recordText(0))
        world.write("2.json", recordText(-1))
        world.write("3.json", recordText(3.5))
        world.write("4.json", recordText(2147483648))
        const entries = await inspect(world)
        expect(entries.map((e) => e.verdict._tag)).toEqual(Array(4).fill("invalid_pid"))
      })
    )

    it(
      "pid_mismatch, no_name, empty_session_id, parked, spare, other_pid_domain",
      withWorld(async (world) => {
        const proc = world.spawn()
        const live = { procStart: proc.startTime, pidDomain: world.pidDomain }
        // Every file names a live process, so only the record's own defect can explain the verdict.
        const cases: Array<[VerdictName, Record<string, unknown>]> = [
          ["pid_mismatch", { ...live, pid: proc.pid + 1 }],
          ["no_name", { ...live, name: undefined }],
          ["no_name", { ...live, name: null }],
          ["no_name", { ...live, name: "" }],
          ["no_name", { ...live, name: 7 }],
          ["empty_session_id", { ...live, sessionId: "" }],
          ["parked", { ...live, parkedJobId: "d781d7b2" }],
          ["parked", { ...live, parkedJobId: "d781d7b2", spare: true }],
          ["spare", { ...live, spare: true, kind: "bg", jobId: "7d540b66" }],
          ["live", { ...live, spare: false }],
          ["live", { ...live, spare: "true" }],
          ["other_pid_domain", { ...live, pidDomain: "linux:0000:pid:[1]" }],
          ["live", { ...live, parkedJobId: null }],
          ["live", { ...live, pidDomain: 42 }]
        ]
        for (const [expected, options] of cases) {
          const { pid, ...rest } = options
          world.write(`${proc.pid}.json`, recordText(pid ?? proc.pid, rest))
          expect(await verdictOf(world, `${proc.pid}.json`), JSON.stringify(options)).toBe(expected)
        }
      })
    )

    it(
      "dead: no process has the pid, whatever the record says",
      withWorld(async (world) => {
        const proc = world.spawn()
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime }))
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("live")
        await world.kill(proc.pid)
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("dead")
        const dead = await world.deadPid()
        world.write(`${dead}.json`, recordText(dead, { procStart: undefined }))
        expect(await verdictOf(world, `${dead}.json`)).toBe("dead")
        expect(await list(world)).toEqual([])
      })
    )

    it(
      "pid_reused: a recorded start time that differs; unreadable or non-string procStart proves nothing",
      withWorld(async (world) => {
        const proc = world.spawn()
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: String(Number(proc.startTime) + 1) }))
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("pid_reused")
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: ` ${proc.startTime}\n` }))
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("live")
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: Number(proc.startTime) + 1 }))
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("live")
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: undefined }))
        expect(await verdictOf(world, `${proc.pid}.json`)).toBe("live")
      })
    )

    it(
      "descriptive fields of the wrong type are absent, unknown fields ignored, duplicate keys last-wins",
      withWorld(async (world) => {
        const proc = world.spawn()
        const text = recordText(proc.pid, {
          procStart: proc.startTime,
          cwd: 5,
          status: ["idle"],
          updatedAt: "yesterday",
          version: {},
          tmux: true,
          kind: null,
          startedAt: "0",
          statusUpdatedAt: false,
          waitingFor: 1,
          jobId: 2,
          entrypoint: ["cli"],
          nameSource: 3,
          messagingSocketPath: { path: "/tmp/x.sock" },
          somethingNew: { nested: [1, 2, 3] }
        }).replace(/}$/, `,"name":"second"}`)
        world.write(`${proc.pid}.json`, text)
        const [session] = await list(world)
        expect(session).toEqual({
          pid: proc.pid,
          sessionId: `00000000-0000-4000-8000-${String(proc.pid).padStart(12, "0")}`,
          name: "second",
          address: null,
          cwd: null,
          socketPath: null,
          status: null,
          rawStatus: null,
          statusUpdatedAtMs: null,
          updatedAtMs: null,
          startedAtMs: null,
          kind: null,
          entrypoint: null,
          nameSource: null,
          waitingFor: null,
          jobId: null,
          version: null,
          tmux: null,
          file: path.join(world.sessions, `${proc.pid}.json`),
          stopped: false,
          unaddressable: "no_socket"
        })
      })
    )

    it(
      "status: busy, idle, shell as idle, waiting; unknown text kept raw and never drops the record",
      withWorld(async (world) => {
        const proc = world.spawn()
        const cases: Array<[unknown, string | null, string | null]> = [
          ["busy", "busy", "busy"],
          ["idle", "idle", "idle"],
          ["shell", "idle", "shell"],
          ["waiting", "waiting", "waiting"],
          ["compacting", null, "compacting"],
          ["Idle", null, "Idle"],
          [undefined, null, null]
        ]
        for (const [status, expected, raw] of cases) {
          world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, status }))
          const sessions = await list(world)
          expect(sessions).toHaveLength(1)
          expect([sessions[0]!.status, sessions[0]!.rawStatus]).toEqual([expected, raw])
        }
      })
    )

    it(
      "list is sorted by pid as a number and holds only live records",
      withWorld(async (world) => {
        const procs = [world.spawn(), world.spawn(), world.spawn()]
        for (const p of procs) world.write(`${p.pid}.json`, recordText(p.pid, { procStart: p.startTime }))
        const dead = await world.deadPid()
        world.write(`${dead}.json`, recordText(dead))
        const pids = (await list(world)).map((s) => s.pid)
        expect(pids).toEqual(procs.map((p) => p.pid).sort((a, b) => a - b))
        const files = (await inspect(world)).map((e) => e.file)
        expect(files).toEqual([...files].sort())
      })
    )

    it(
      "resolve: the one live session, by id and by name",
      withWorld(async (world) => {
        const a = world.spawn()
        const b = world.spawn()
        world.write(`${a.pid}.json`, recordText(a.pid, { procStart: a.startTime, sessionId: "sess-a", name: "alpha" }))
        world.write(`${b.pid}.json`, recordText(b.pid, { procStart: b.startTime, sessionId: "sess-b", name: "beta" }))
        const byId = await resolveExit(world, { sessionId: "sess-a" })
        expect(Exit.isSuccess(byId) && byId.value.pid).toBe(a.pid)
        const byName = await resolveExit(world, { name: "beta" })
        expect(Exit.isSuccess(byName) && byName.value.pid).toBe(b.pid)
      })
    )

    it(
      "resolve: not_live says why (parked, dead, pid reused), and re-reads the registry",
      withWorld(async (world) => {
        const a = world.spawn()
        world.write(`${a.pid}.json`, recordText(a.pid, { procStart: a.startTime, sessionId: "sess-a", name: "alpha" }))
        expect(Exit.isSuccess(await resolveExit(world, { sessionId: "sess-a" }))).toBe(true)
        const cases: Array<[Record<string, unknown>, RegExp]> = [
          [{ procStart: a.startTime, parkedJobId: "d781d7b2" }, /parked/],
          [{ procStart: `${a.startTime}9` }, /pid reused/]
        ]
        for (const [options, why] of cases) {
          world.write(`${a.pid}.json`, recordText(a.pid, { ...options, sessionId: "sess-a", name: "alpha" }))
          const error = await resolveFailure(world, { sessionId: "sess-a" })
          expect(error._tag).toBe("NotLive")
          expect(error.message).toMatch(why)
        }
        world.write(`${a.pid}.json`, recordText(a.pid, { procStart: a.startTime, sessionId: "sess-a", name: "alpha" }))
        await world.kill(a.pid)
        const dead = await resolveFailure(world, { sessionId: "sess-a" })
        expect(dead._tag).toBe("NotLive")
        expect(dead.message).toMatch(/dead/)
        expect(dead._tag === "NotLive" && dead.reasons.map((r) => r.verdict)).toEqual(["dead"])
        const unknown = await resolveFailure(world, { name: "nobody" })
        expect(unknown._tag).toBe("NotLive")
        expect(unknown._tag === "NotLive" && unknown.reasons).toEqual([])
      })
    )

    it(
      "resolve: identity_mismatch when the id or the name is carried by two live records",
      withWorld(async (world) => {
        const a = world.spawn()
        const b = world.spawn()
        const c = world.spawn()
        world.write(`${a.pid}.json`, recordText(a.pid, { procStart: a.startTime, sessionId: "same", name: "alpha" }))
        world.write(`${b.pid}.json`, recordText(b.pid, { procStart: b.startTime, sessionId: "same", name: "beta" }))
        world.write(`${c.pid}.json`, recordText(c.pid, { procStart: c.startTime, sessionId: "other", name: "alpha" }))
        const cases: Array<[{ sessionId: string } | { name: string }, ReadonlyArray<number>]> = [
          [{ sessionId: "same" }, [a.pid, b.pid]],
          [{ sessionId: "other" }, [a.pid, c.pid]],
          [{ name: "alpha" }, [a.pid, c.pid]],
          [{ name: "beta" }, [a.pid, b.pid]]
        ]
        for (const [query, pids] of cases) {
          const error = await resolveFailure(world, query)
          expect(error._tag, JSON.stringify(query)).toBe("IdentityMismatch")
          expect(error._tag === "IdentityMismatch" && error.candidates.map((c) => c.pid).sort((x, y) => x - y)).toEqual([...pids].sort((x, y) => x - y))
        }
        // Once the rival is dead, the survivor resolves.
        await world.kill(c.pid)
        await world.kill(b.pid)
        const exit = await resolveExit(world, { name: "alpha" })
        expect(Exit.isSuccess(exit) && exit.value.pid).toBe(a.pid)
      })
    )

    it(
      "a session without a socket is live with socketPath null; resolve refuses it with not_addressable",
      withWorld(async (world) => {
        const proc = world.spawn()
        for (const socket of [undefined, null, "", 17]) {
          world.write(
            `${proc.pid}.json`,
            recordText(proc.pid, { procStart: proc.startTime, sessionId: "s-r", name: "restricted", messagingSocketPath: socket })
          )
          const [session] = await list(world)
          expect(session, String(socket)).toMatchObject({ pid: proc.pid, socketPath: null, address: null })
          const error = await resolveFailure(world, { sessionId: "s-r" })
          expect(error._tag).toBe("NotAddressable")
          expect(error._tag === "NotAddressable" && error.session).toEqual({
            pid: proc.pid,
            sessionId: "s-r",
            name: "restricted",
            socketPath: null,
            kind: "interactive",
            jobId: null
          })
          expect((await resolveFailure(world, { name: "restricted" }))._tag).toBe("NotAddressable")
        }
      })
    )

    it(
      "dead: a process that has exited but is not reaped (a zombie) runs nothing",
      withWorld(async (world) => {
        const zombie = await world.zombie()
        world.write(`${zombie.pid}.json`, recordText(zombie.pid, { procStart: zombie.startTime }))
        expect(await verdictOf(world, `${zombie.pid}.json`)).toBe("dead")
        expect(await list(world)).toEqual([])
      })
    )

    it(
      "a spare is neither listed nor resolvable; rewritten without `spare`, it is a session",
      withWorld(async (world) => {
        const proc = world.spawn()
        const spare = { procStart: proc.startTime, kind: "bg", sessionId: "s-spare", name: "7d540b66", jobId: "7d540b66" }
        world.write(`${proc.pid}.json`, recordText(proc.pid, { ...spare, spare: true }))
        expect(await list(world)).toEqual([])
        const error = await resolveFailure(world, { sessionId: "s-spare" })
        expect(error._tag === "NotLive" && error.reasons.map((r) => r.verdict)).toEqual(["spare"])
        world.write(`${proc.pid}.json`, recordText(proc.pid, spare))
        expect((await list(world)).map((s) => s.pid)).toEqual([proc.pid])
      })
    )

    it(
      "names compare under Claude Code's normalization: `Api Server` finds `api-server`; `Docs` and `docs` are one address",
      withWorld(async (world) => {
        const [a, b, c] = [world.spawn(), world.spawn(), world.spawn()]
        world.write(`${a.pid}.json`, recordText(a.pid, { procStart: a.startTime, sessionId: "s-a", name: "api-server" }))
        world.write(`${b.pid}.json`, recordText(b.pid, { procStart: b.startTime, sessionId: "s-b", name: "Docs" }))
        world.write(`${c.pid}.json`, recordText(c.pid, { procStart: c.startTime, sessionId: "s-c", name: " docs\u200b" }))
        for (const name of ["Api Server", "API-SERVER", "  api server\t", "ａｐｉ-server"]) {
          const exit = await resolveExit(world, { name })
          expect(Exit.isSuccess(exit) && exit.value.pid, name).toBe(a.pid)
        }
        const shared = await resolveFailure(world, { name: "docs" })
        expect(shared._tag === "IdentityMismatch" && shared.candidates.map((x) => x.pid).sort()).toEqual([b.pid, c.pid].sort())
        const addresses = new Map((await list(world)).map((s) => [s.pid, s.address]))
        expect(addresses.get(a.pid)).toBe("api-server")
        expect(addresses.get(b.pid)).toBe(`uds:/tmp/cc-socks/${b.pid}.sock`)
        expect(addresses.get(c.pid)).toBe(`uds:/tmp/cc-socks/${c.pid}.sock`)
      })
    )

    it(
      "a shared name: by id a refusal that names the option; with allowSharedName the session, addressed by its socket",
      withWorld(async (world) => {
        const [a, b] = [world.spawn(), world.spawn()]
        const job = { kind: "bg", name: "(backgrounded)" }
        world.write(`${a.pid}.json`, recordText(a.pid, { ...job, procStart: a.startTime, sessionId: "s-a", jobId: "aaaa1111" }))
        world.write(`${b.pid}.json`, recordText(b.pid, { ...job, procStart: b.startTime, sessionId: "s-b", jobId: "bbbb2222" }))
        const refused = await resolveFailure(world, { sessionId: "s-a" })
        expect(refused._tag).toBe("IdentityMismatch")
        if (refused._tag !== "IdentityMismatch") return
        expect(refused.shared).toBe("name")
        expect(refused.candidates).toEqual([
          { pid: a.pid, sessionId: "s-a", name: "(backgrounded)", socketPath: `/tmp/cc-socks/${a.pid}.sock`, kind: "bg", jobId: "aaaa1111" },
          { pid: b.pid, sessionId: "s-b", name: "(backgrounded)", socketPath: `/tmp/cc-socks/${b.pid}.sock`, kind: "bg", jobId: "bbbb2222" }
        ])
        expect(refused.message).toMatch(/allow-shared-name|allowSharedName/)
        const allowed = await resolveExit(world, { sessionId: "s-a" }, { allowSharedName: true })
        expect(Exit.isSuccess(allowed) && [allowed.value.pid, allowed.value.address]).toEqual([a.pid, `uds:/tmp/cc-socks/${a.pid}.sock`])
        // The option does not make a shared session id unambiguous, nor a name shared by two.
        world.write(`${b.pid}.json`, recordText(b.pid, { ...job, procStart: b.startTime, sessionId: "s-a", jobId: "bbbb2222" }))
        expect((await resolveFailure(world, { sessionId: "s-a" }, { allowSharedName: true }))._tag).toBe("IdentityMismatch")
        expect((await resolveFailure(world, { name: "(backgrounded)" }))._tag).toBe("IdentityMismatch")
      })
    )

    it(
      "confirm: a listed session whose process runs is kept as listed, one whose process ended is not",
      withWorld(async (world) => {
        const [running, ended, unlisted] = [world.spawn(), world.spawn(), world.spawn()]
        for (const proc of [running, ended, unlisted]) world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime }))
        const { confirmed, sessions } = await run(
          world,
          Effect.gen(function*() {
            // The same registry lists and confirms: what proved a session is its list's.
            const registry = yield* Registry
            const sessions = yield* registry.list
            yield* Effect.promise(() => world.kill(ended.pid))
            // Its process is the one the record named: its record is not read again, so its removal is not seen.
            world.remove(`${running.pid}.json`)
            // Not a session the list gave (a copy): its record is read again, and it is gone.
            const copy = { ...sessions.find((s) => s.pid === unlisted.pid)! }
            world.remove(`${unlisted.pid}.json`)
            return { sessions, confirmed: yield* registry.confirm([...sessions.filter((s) => s.pid !== unlisted.pid), copy]) }
          })
        )
        expect(sessions.map((s) => s.pid)).toEqual([running, ended, unlisted].map((p) => p.pid).sort((a, b) => a - b))
        expect(confirmed).toEqual([sessions.find((s) => s.pid === running.pid)])
      })
    )

    it(
      "a parked record whose window's process exited says so, not that the window runs",
      withWorld(async (world) => {
        const proc = world.spawn()
        world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, sessionId: "s-p", parkedJobId: "d781d7b2" }))
        const running = await resolveFailure(world, { sessionId: "s-p" })
        expect(running._tag === "NotLive" && running.reasons[0]?.detail).toBe("parked: the session moved to background job d781d7b2")
        await world.kill(proc.pid)
        const gone = await resolveFailure(world, { sessionId: "s-p" })
        expect(gone._tag === "NotLive" && gone.reasons[0]?.detail).toMatch(/^parked, and the window's process has exited/)
      })
    )

    it(
      "a parked record whose pid is a zombie or another process reads as exited, not as a running window",
      withWorld(async (world) => {
        const zombie = await world.zombie()
        const reused = world.spawn()
        world.write(`${zombie.pid}.json`, recordText(zombie.pid, { procStart: zombie.startTime, sessionId: "s-z", parkedJobId: "ab12cd34" }))
        world.write(
          `${reused.pid}.json`,
          recordText(reused.pid, { procStart: String(Number(reused.startTime) + 1), sessionId: "s-r", parkedJobId: "ab12cd35" })
        )
        for (const sessionId of ["s-z", "s-r"]) {
          const failure = await resolveFailure(world, { sessionId })
          expect(failure._tag === "NotLive" && failure.reasons[0]?.detail).toMatch(/^parked, and the window's process has exited/)
        }
      })
    )
  })

describe("registry: checks the OS cannot play as root (memory layers)", () => {
  it("a file that cannot be read is unreadable, unless it is too large: too_large comes first", async () => {
    const world = makeMemoryRegistry()
    const proc = world.spawn()
    world.write(`${proc.pid}.json`, recordText(proc.pid, { procStart: proc.startTime, padding: "x".repeat(300 * 1024) }))
    world.world.tree.setUnreadable(`${world.sessions}/${proc.pid}.json`)
    world.write("77.json", recordText(77))
    world.world.tree.setUnreadable(`${world.sessions}/77.json`)
    const entries = await Effect.runPromise(Effect.provide(Effect.flatMap(Registry, (r) => r.inspect), world.layer))
    expect(entries.map((e) => [e.pid, e.verdict._tag])).toEqual([[proc.pid, "too_large"], [77, "unreadable"]])
  })
})

suite("memory", makeMemoryRegistry)
suite("node", makeNodeRegistry)
