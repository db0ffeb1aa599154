/**
 * Several Claude homes over the memory world: each session listed once, by its home's real path,
 * however the homes are spelled (a link to a home is that home); `--all-homes` finds the homes of
 * Claude Code processes from their staged environments; an id or a name carried in two homes is
 * refused naming the homes; addresses over several homes are sockets; transcripts are found where
 * Claude Code 2.1.332 names them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, FastCheck as fc, Fiber, Stream } from "effect"
import * as Chunk from "effect/Chunk"
import * as path from "node:path"
import { IdentityMismatch } from "../src/domain/Errors.js"
import { read, unreadable } from "../src/domain/Observed.js"
import { projectDirectoryName, stringHash, transcriptPathOf } from "../src/domain/Transcript.js"
import { layerMemory, makeMemoryWorld } from "../src/layers/Memory.js"
import type { MemoryOptions, MemoryWorld } from "../src/layers/Memory.js"
import { systemError } from "../src/layers/MemoryTreeKernel.js"
import { homeOfProcess, isClaudeCode } from "../src/services/ClaudeHomes.js"
import { Registry } from "../src/services/Registry.js"
import { Wait } from "../src/services/Wait.js"
import { Watch } from "../src/services/Watch.js"
import { recordText } from "./support/records.js"

const run = <A, E>(world: MemoryWorld, options: MemoryOptions, effect: Effect.Effect<A, E, Registry>) =>
  Effect.runPromise(Effect.provide(effect, layerMemory(world, options)))

/** A live Claude Code session registered in `home`: a process and its record. */
const startSession = (world: MemoryWorld, home: string, options: { readonly sessionId?: string; readonly name?: string; readonly cwd?: string } = {}) => {
  const { pid, startTime } = world.processes.spawn({ arguments: ["/usr/bin/claude"], environment: { CLAUDE_CONFIG_DIR: home } })
  world.tree.writeFile(path.join(home, "sessions", `${pid}.json`), recordText(pid, { procStart: startTime, ...options }))
  return pid
}

describe("several Claude homes (memory world)", () => {
  it("property: each live session once, labelled with its home's real path, addressed by its socket", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 4 }), { minLength: 2, maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        async (counts, namedTwice, throughLink) => {
          const world = makeMemoryWorld()
          const homes = counts.map((_, i) => `/homes/h${i}`)
          const pids = new Map<number, string>()
          counts.forEach((count, i) => {
            for (let n = 0; n < count; n++) pids.set(startSession(world, homes[i]!), homes[i]!)
            world.tree.makeDirectory(homes[i]!)
          })
          world.tree.symlink("/homes/h0", "/links/alias")
          const named = [...homes.slice(1), ...(namedTwice ? [homes[1]!] : []), ...(throughLink ? ["/links/alias", "/homes/h1/../h0"] : [])]
          const listed = await run(world, { claudeHome: homes[0]!, claudeHomes: named }, Effect.flatMap(Registry, (r) => r.list))
          expect(listed.map((s) => s.pid).sort((a, b) => a - b)).toEqual([...pids.keys()].sort((a, b) => a - b))
          for (const session of listed) {
            expect(session.home).toBe(pids.get(session.pid))
            expect(session.address).toBe(`uds:${session.socketPath}`)
          }
          const entries = await run(world, { claudeHome: homes[0]!, claudeHomes: named }, Effect.flatMap(Registry, (r) => r.inspect))
          expect(entries.map((e) => e.file)).toEqual([...new Set(entries.map((e) => e.file))])
          for (const entry of entries) expect(entry.home).toBe(path.dirname(path.dirname(entry.file)))
        }
      ),
      { numRuns: 40 }
    )
  })

  it("one home stays as today: no home, names as addresses", async () => {
    const world = makeMemoryWorld()
    const pid = startSession(world, world.home.root, { name: "app" })
    const [session] = await run(world, {}, Effect.flatMap(Registry, (r) => r.list))
    expect(session).toMatchObject({ pid, address: "app" })
    expect("home" in session!).toBe(false)
    expect("transcriptPath" in session!).toBe(false)
  })

  it("--all-homes: the default home and every Claude Code process's, from its environment", async () => {
    const world = makeMemoryWorld()
    const inDefault = startSession(world, world.home.root)
    const inOther = startSession(world, "/profiles/work")
    // A home named by HOME alone, and one by an empty CLAUDE_CONFIG_DIR (the working directory).
    const viaHome = world.processes.spawn({ arguments: ["node", "/opt/claude-code/cli.js"], environment: { HOME: "/home/second" } })
    world.tree.writeFile(`/home/second/.claude/sessions/${viaHome.pid}.json`, recordText(viaHome.pid, { procStart: viaHome.startTime }))
    const viaCwd = world.processes.spawn({ arguments: ["claude"], environment: { CLAUDE_CONFIG_DIR: "" }, workingDirectory: "/srv/project" })
    world.tree.writeFile(`/srv/project/sessions/${viaCwd.pid}.json`, recordText(viaCwd.pid, { procStart: viaCwd.startTime }))
    // Not Claude Code: its environment names a home, which is not read.
    const other = world.processes.spawn({ arguments: ["bash"], environment: { CLAUDE_CONFIG_DIR: "/not/a/claude/home" } })
    world.tree.writeFile(`/not/a/claude/home/sessions/${other.pid}.json`, recordText(other.pid, { procStart: other.startTime }))
    const listed = await run(world, { allHomes: true }, Effect.flatMap(Registry, (r) => r.list))
    expect(new Map(listed.map((s) => [s.pid, s.home]))).toEqual(
      new Map([
        [inDefault, world.home.root],
        [inOther, "/profiles/work"],
        [viaHome.pid, "/home/second/.claude"],
        [viaCwd.pid, "/srv/project"]
      ])
    )
  })

  it("property: --all-homes lists each live session once in its home, whatever stale records say", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 3 }), { minLength: 2, maxLength: 4 }),
        fc.array(
          fc.record({
            from: fc.nat(),
            into: fc.nat(),
            kind: fc.constantFrom("no start time", "other start time", "dead", "no record", "home through a link")
          }),
          { maxLength: 5 }
        ),
        fc.boolean(),
        fc.boolean(),
        async (counts, stale, interleaved, nameTheLink) => {
          const world = makeMemoryWorld()
          // The default home, where `all` starts, and homes only processes name.
          const homes = [world.home.root, ...counts.slice(1).map((_, i) => `/homes/h${i + 1}`)]
          world.tree.makeDirectory(homes[1]!)
          world.tree.symlink(homes[1]!, "/links/h1")
          const expected = new Set<string>()
          // The homes `all` reads: the default one, the one named, and every live Claude Code process's.
          const read = new Set([homes[0]!, ...(nameTheLink ? [homes[1]!] : [])])
          const inOtherHomes: Array<[pid: number, home: string]> = []
          const order = interleaved
            ? Array.from({ length: Math.max(...counts) }, (_, n) => homes.flatMap((home, i) => (n < counts[i]! ? [home] : []))).flat()
            : homes.flatMap((home, i) => Array.from({ length: counts[i]! }, () => home))
          for (const home of order) {
            expected.add(`${startSession(world, home)} ${home}`)
            read.add(home)
          }
          for (const { from, into, kind } of stale) {
            const own = homes[into % homes.length]!
            const other = homes[from % homes.length]!
            const spelled = kind === "home through a link" ? "/links/h1" : own
            const { pid, startTime } = world.processes.spawn({ arguments: ["claude"], environment: { CLAUDE_CONFIG_DIR: spelled } })
            if (kind !== "dead") read.add(kind === "home through a link" ? homes[1]! : own)
            if (kind === "no record") continue
            if (kind === "home through a link") {
              world.tree.writeFile(path.join(homes[1]!, "sessions", `${pid}.json`), recordText(pid, { procStart: startTime }))
              expected.add(`${pid} ${homes[1]}`)
              continue
            }
            // A record in another home for this process's pid (or for no process), then its own.
            const procStart = kind === "no start time" ? {} : { procStart: kind === "dead" ? startTime : `${startTime}9` }
            world.tree.writeFile(path.join(other, "sessions", `${pid}.json`), recordText(pid, procStart))
            if (kind === "dead") {
              world.processes.kill(pid)
              continue
            }
            world.tree.writeFile(path.join(own, "sessions", `${pid}.json`), recordText(pid, { procStart: startTime }))
            expected.add(`${pid} ${own}`)
            // Without a start time, the pid's live process is all the record can be checked against.
            if (kind === "no start time" && other !== own) inOtherHomes.push([pid, other])
          }
          for (const [pid, home] of inOtherHomes) if (read.has(home)) expected.add(`${pid} ${home}`)
          const named = nameTheLink ? ["/links/h1"] : []
          const options = { allHomes: true, claudeHomes: named }
          const listed = await run(world, options, Effect.flatMap(Registry, (r) => r.list))
          expect(listed.map((s) => `${s.pid} ${s.home}`).sort()).toEqual([...expected].sort())
        }
      ),
      { numRuns: 80 }
    )
  })

  it("--all-homes finds the home a process runs under though a copy of its record in a home read first proves it", async () => {
    // A home copied while its sessions ran: the copy's record has the process's start time, but
    // the process runs under the other home, in another session now.
    const world = makeMemoryWorld()
    const pid = startSession(world, "/homes/h2", { sessionId: "sess-new" })
    const startTime = world.processes.startTimeOf(pid)!
    world.tree.writeFile(path.join(world.home.root, "sessions", `${pid}.json`), recordText(pid, { procStart: startTime, sessionId: "sess-old" }))
    const answers = (options: MemoryOptions) =>
      run(
        world,
        options,
        Effect.gen(function*() {
          const registry = yield* Registry
          const listed = (yield* registry.list).map((s) => `${s.sessionId} ${s.home}`)
          const resolved = (sessionId: string) =>
            registry.resolve({ sessionId }).pipe(Effect.map((s) => s.home), Effect.catchAll((error) => Effect.succeed(error._tag)))
          return { listed, old: yield* resolved("sess-old"), new: yield* resolved("sess-new") }
        })
      )
    const all = await answers({ allHomes: true })
    expect([...all.listed].sort()).toEqual([`sess-new /homes/h2`, `sess-old ${world.home.root}`].sort())
    expect(all).toEqual(await answers({ claudeHomes: ["/homes/h2"] }))
    expect(all.old).toBe("IdentityMismatch")
  })

  it("--all-homes: a pid taken (same id and startedAt) between the resolve and the watch's first read ends the wait pid_reused", async () => {
    const world = makeMemoryWorld()
    const home = "/homes/b"
    const { pid, startTime } = world.processes.spawn({ arguments: ["/usr/bin/claude"], environment: { CLAUDE_CONFIG_DIR: home } })
    const file = path.join(home, "sessions", `${pid}.json`)
    world.tree.writeFile(file, recordText(pid, { procStart: startTime, sessionId: "same", startedAt: 1796007021392, status: "busy" }))
    let swapped = false
    // The resolve asks for the process's home once, the watch's first read again: the swap comes then.
    world.processes.onNextEvidence(pid, () => {
      world.processes.onNextEvidence(pid, () => {
        swapped = true
        world.processes.kill(pid)
        const now = world.processes.reuse(pid)
        world.tree.writeFile(file, recordText(pid, { procStart: now, sessionId: "same", startedAt: 1796007021392, status: "idle" }))
      })
    })
    const exit = await Effect.runPromise(
      Effect.gen(function*() {
        const wait = yield* Wait
        return yield* Effect.exit(wait.waitFor({ sessionId: "same" }, ["idle"], { interval: 50, timeout: 20_000 }))
      }).pipe(Effect.provide(layerMemory(world, { allHomes: true, claudeHomes: [home] })))
    )
    expect(swapped).toBe(true)
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit).toMatchObject({ _tag: "Ended", verdict: "pid_reused" })
  })

  it("a process's home by Claude Code's rule; unknown when its environment is not readable", () => {
    const evidence = (environment: Record<string, string> | undefined, cwd = "/w") => ({
      arguments: read(["claude"]),
      environment: environment === undefined ? unreadable("another user's") : read(new Map(Object.entries(environment))),
      workingDirectory: read(cwd)
    })
    expect(homeOfProcess(evidence({ CLAUDE_CONFIG_DIR: "/a" }))).toBe("/a")
    expect(homeOfProcess(evidence({ CLAUDE_CONFIG_DIR: "rel" }))).toBe("/w/rel")
    expect(homeOfProcess(evidence({ CLAUDE_CONFIG_DIR: "" }))).toBe("/w")
    expect(homeOfProcess(evidence({ HOME: "/home/x" }))).toBe("/home/x/.claude")
    expect(homeOfProcess(evidence({}))).toBeUndefined()
    expect(homeOfProcess(evidence(undefined))).toBeUndefined()
    expect(isClaudeCode(["/home/u/.local/bin/claude", "--resume"])).toBe(true)
    expect(isClaudeCode(["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"])).toBe(true)
    expect(isClaudeCode(["bash", "-c", "claude"])).toBe(false)
    expect(isClaudeCode([])).toBe(false)
  })

  it("resolve: an id or a name carried by live sessions in two homes is identity_mismatch naming both homes", async () => {
    const world = makeMemoryWorld()
    startSession(world, "/homes/a", { sessionId: "same-id", name: "one" })
    startSession(world, "/homes/b", { sessionId: "same-id", name: "two" })
    startSession(world, "/homes/a", { sessionId: "id-x", name: "shared" })
    startSession(world, "/homes/b", { sessionId: "id-y", name: "Shared" })
    const only = startSession(world, "/homes/b", { sessionId: "alone", name: "alone" })
    const options = { claudeHome: "/homes/a", claudeHomes: ["/homes/b"] }
    for (const query of [{ sessionId: "same-id" }, { name: "shared" }, { sessionId: "id-x" }]) {
      const result = await run(world, options, Effect.either(Effect.flatMap(Registry, (r) => r.resolve(query))))
      expect(Either.isLeft(result)).toBe(true)
      const error = Either.getLeft(result).pipe((o) => o._tag === "Some" ? o.value : undefined)
      expect(error).toBeInstanceOf(IdentityMismatch)
      const mismatch = error as IdentityMismatch
      expect(new Set(mismatch.candidates.map((c) => c.home))).toEqual(new Set(["/homes/a", "/homes/b"]))
      expect(mismatch.message).toContain("\"/homes/a\" and \"/homes/b\"")
    }
    const resolved = await run(world, options, Effect.flatMap(Registry, (r) => r.resolve({ sessionId: "alone" })))
    expect(resolved).toMatchObject({ pid: only, home: "/homes/b", address: `uds:/tmp/cc-socks/${only}.sock` })
  })

  it("watch over several homes hands onFirstRead every home's first read, once", async () => {
    const world = makeMemoryWorld()
    const inA = startSession(world, "/homes/a")
    const inB = startSession(world, "/homes/b")
    const reads: Array<ReadonlyArray<number | null>> = []
    await Effect.runPromise(
      Effect.flatMap(
        Watch,
        (watch) =>
          watch.sessions({ interval: 50, onFirstRead: (entries) => Effect.sync(() => void reads.push(entries.map((e) => e.pid).sort())) }).pipe(
            Stream.take(2),
            Stream.runDrain
          )
      ).pipe(Effect.provide(layerMemory(world, { claudeHome: "/homes/a", claudeHomes: ["/homes/b"] })), Effect.timeout("60 seconds"))
    )
    expect(reads).toEqual([[inA, inB].sort()])
  })

  it("wait over several homes follows a session of the second home until it is busy", async () => {
    const world = makeMemoryWorld()
    startSession(world, "/homes/a")
    const { pid, startTime } = world.processes.spawn({ arguments: ["/usr/bin/claude"], environment: { CLAUDE_CONFIG_DIR: "/homes/b" } })
    const file = path.join("/homes/b", "sessions", `${pid}.json`)
    world.tree.writeFile(file, recordText(pid, { procStart: startTime, sessionId: "in-b", status: "idle" }))
    const outcome = await Effect.runPromise(
      Effect.gen(function*() {
        const wait = yield* Wait
        const fiber = yield* Effect.fork(wait.waitFor({ sessionId: "in-b" }, ["busy"], { interval: 50 }))
        yield* Effect.sleep("300 millis")
        world.tree.writeFile(file, recordText(pid, { procStart: startTime, sessionId: "in-b", status: "busy" }))
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(layerMemory(world, { claudeHome: "/homes/a", claudeHomes: ["/homes/b"] })), Effect.timeout("60 seconds"))
    )
    expect(outcome).toMatchObject({ _tag: "Reached", state: "busy", session: { pid, home: "/homes/b" } })
  })

  it("watch over several homes follows a named link that is re-pointed: the old target's sessions go, the new one's appear", async () => {
    const world = makeMemoryWorld()
    const inA = startSession(world, "/homes/a")
    const inX = startSession(world, "/targets/x")
    const inY = startSession(world, "/targets/y")
    world.tree.symlink("/targets/x", "/links/work")
    const events = await Effect.runPromise(
      Effect.gen(function*() {
        const watch = yield* Watch
        return yield* watch.sessions({ interval: 50 }).pipe(
          Stream.tap((event) =>
            Effect.sync(() => {
              if (event._tag !== "appeared" || event.session.pid !== inX) return
              world.tree.remove("/links/work")
              world.tree.symlink("/targets/y", "/links/work")
            })
          ),
          Stream.take(4),
          Stream.runCollect
        )
      }).pipe(Effect.provide(layerMemory(world, { claudeHome: "/homes/a", claudeHomes: ["/links/work"] })), Effect.timeout("60 seconds"))
    )
    const seen = Chunk.toReadonlyArray(events).map((e) => [e._tag, e.session.pid, e.session.home, e._tag === "gone" ? e.verdict : null])
    expect(seen.slice(0, 2).sort()).toEqual([["appeared", inA, "/homes/a", null], ["appeared", inX, "/targets/x", null]].sort())
    // Gone from the old home before anything of the new one appears.
    expect(seen.slice(2)).toEqual([["gone", inX, "/targets/x", "removed"], ["appeared", inY, "/targets/y", null]])
  })

  it("watch over several homes: a named link whose real path cannot be found for a moment (EIO) stays where it was", async () => {
    for (const allHomes of [false, true]) {
      const world = makeMemoryWorld()
      const inA = startSession(world, "/homes/a")
      const inX = startSession(world, "/targets/x")
      world.tree.symlink("/targets/x", "/links/work")
      const kernel = world.tree.kernel
      const realPath = kernel.realPath.bind(kernel)
      let calls = 0
      kernel.realPath = (at, method, syscall) => {
        if (at === "/links/work" && ++calls === 3) throw systemError("EIO", method, syscall, at)
        return realPath(at, method, syscall)
      }
      const events = await Effect.runPromise(
        // Until the failing look and a few after it have been made, however slow the machine.
        Effect.flatMap(Watch, (watch) =>
          watch.sessions({ interval: 30 }).pipe(
            Stream.interruptWhen(Effect.repeat(Effect.sleep("10 millis"), { until: () => calls >= 6 })),
            Stream.runCollect
          )).pipe(
            Effect.provide(layerMemory(world, { claudeHome: "/homes/a", claudeHomes: ["/links/work"], allHomes })),
            Effect.timeout("60 seconds")
          )
      )
      const seen = Chunk.toReadonlyArray(events).map((e) => [e._tag, e.session.pid, e.session.home])
      expect(seen.sort(), `allHomes ${allHomes}`).toEqual([["appeared", inA, "/homes/a"], ["appeared", inX, "/targets/x"]].sort())
    }
  })

  it("watch over --all-homes picks up a home that appears later, each event labelled with its home", async () => {
    const world = makeMemoryWorld()
    const first = startSession(world, world.home.root)
    const events = await Effect.runPromise(
      Effect.gen(function*() {
        const watch = yield* Watch
        const stream = watch.sessions({ interval: 50 })
        return yield* stream.pipe(
          Stream.tap((event) =>
            Effect.sync(() => {
              // Once the first home's session is seen, a Claude Code process starts under a new home.
              if (event.session.pid === first) startSession(world, "/later/home")
            })
          ),
          Stream.take(2),
          Stream.runCollect
        )
      }).pipe(Effect.provide(layerMemory(world, { allHomes: true })), Effect.timeout("60 seconds"))
    )
    expect(Chunk.toReadonlyArray(events).map((e) => [e._tag, e.session.home])).toEqual([
      ["appeared", world.home.root],
      ["appeared", "/later/home"]
    ])
  })
})

describe("transcripts", () => {
  it("the project directory name: every UTF-16 unit outside [a-zA-Z0-9] is -, a long one cut and hashed", () => {
    expect(projectDirectoryName("/home/u/my app")).toBe("-home-u-my-app")
    expect(projectDirectoryName("/w/naïve-日本-🙂")).toBe("-w-na-ve------")
    const long = `/w/${"a".repeat(250)}`
    expect(projectDirectoryName(long)).toBe(`-w-${"a".repeat(197)}-${Math.abs(stringHash(long)).toString(36)}`)
    expect(stringHash("abc")).toBe(96354)
  })

  it("resolve and the registry's transcript: the file and its last write, null when absent; list leaves them out", async () => {
    const world = makeMemoryWorld()
    const withOne = startSession(world, world.home.root, { sessionId: "s-1", name: "one", cwd: "/w/naïve" })
    startSession(world, world.home.root, { sessionId: "s-2", name: "two", cwd: "/w/none" })
    const long = `/w/${"b".repeat(240)}`
    startSession(world, world.home.root, { sessionId: "s-3", name: "three", cwd: long })
    const file = transcriptPathOf(world.home.root, "/w/naïve", "s-1")
    world.tree.writeFile(file, "{}\n")
    world.tree.setModifiedTime(file, 1764470000123)
    // A long directory under another release's hash: found by its 200-character prefix.
    const otherHash = path.join(world.home.root, "projects", `${projectDirectoryName(long).slice(0, 200)}-zzzz`, "s-3.jsonl")
    world.tree.writeFile(otherHash, "{}\n")
    world.tree.setModifiedTime(otherHash, 5)
    const resolve = (sessionId: string) => run(world, {}, Effect.flatMap(Registry, (r) => r.resolve({ sessionId })))
    expect(await resolve("s-1")).toMatchObject({ pid: withOne, transcriptPath: file, transcriptUpdatedAtMs: 1764470000123 })
    expect(await resolve("s-2")).toMatchObject({ transcriptPath: null, transcriptUpdatedAtMs: null })
    expect(await resolve("s-3")).toMatchObject({ transcriptPath: otherHash, transcriptUpdatedAtMs: 5 })
    const listed = await run(world, {}, Effect.flatMap(Registry, (r) => r.list))
    for (const session of listed) expect("transcriptPath" in session).toBe(false)
  })
})
