/**
 * `wait` and `watch`'s new behaviour on the real OS: the built command's exit codes (real processes
 * started and killed), `watch --status`/`--name` filters, a `sessions` link re-pointed under a
 * running watch, and per-file reads. Generous limits, no timed assertion.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionEvent } from "../src/domain/SessionEvent.js"
import { layerNode } from "../src/layers/Node.js"
import { Watch } from "../src/services/Watch.js"
import { runCli, startCli, waitUntil } from "./support/cli.js"
import { type RecordOptions, recordText } from "./support/records.js"
import { killAndReap, linuxPidDomain, startSleeper, startTimeOf } from "./support/worlds.js"

const limit = 20_000

/**
 * Until the process holds an inotify instance: a `wait` opens its directory watch only once it has
 * resolved the session, so whatever the test does from then on happens while it waits.
 */
const watching = (pid: number) =>
  waitUntil(`process ${pid} to watch the registry`, limit, () => {
    try {
      return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
          try {
            return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify"
          } catch {
            return false
          }
        })
        ? true
        : undefined
    } catch {
      return undefined
    }
  })

describe("claude-peers wait", { timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-wait-cli-"))
  const sleepers: Array<ReturnType<typeof startSleeper>> = []
  afterAll(async () => {
    await Promise.all(sleepers.map(killAndReap))
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  let homes = 0
  /** A home with one live session of a new sleeper, named `app`. */
  const makeHome = (options: RecordOptions = {}) => {
    const home = path.join(tmp, `home-${homes++}`)
    fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
    const sleeper = startSleeper()
    sleepers.push(sleeper)
    const file = path.join(home, "sessions", `${sleeper.pid}.json`)
    const write = (more: RecordOptions = {}) =>
      fs.writeFileSync(file, recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain(), name: "app", ...options, ...more }))
    write()
    return { home, sleeper, file, write, sessionId: `00000000-0000-4000-8000-${String(sleeper.pid).padStart(12, "0")}` }
  }

  it("exit 0 when the state is reached (now, or later), printing {state, verdict, session}", async () => {
    const { home, sleeper, write } = makeHome({ status: "busy" })
    const now = runCli(["--claude-home", home, "wait", "--name", "app", "--until", "busy", "--json"])
    expect(now.status).toBe(0)
    expect(JSON.parse(now.stdout)).toMatchObject({ state: "busy", verdict: null, session: { pid: sleeper.pid, status: "busy" } })
    const later = startCli(["--claude-home", home, "wait", "--name", "app", "--until", "idle", "--until", "waiting", "--json"])
    await watching(later.child.pid!)
    write({ status: "waiting", waitingFor: "permission" })
    expect(await later.exited).toBe(0)
    expect(JSON.parse(later.stdout())).toMatchObject({ state: "waiting", session: { pid: sleeper.pid, waitingFor: "permission" } })
  })

  it("exit 12 on timeout, with the session as last seen", () => {
    const { home, sleeper } = makeHome({ status: "busy" })
    const run = runCli(["--claude-home", home, "wait", "--name", "app", "--until", "idle", "--timeout", "300", "--json"])
    expect(run.status).toBe(12)
    expect(JSON.parse(run.stdout)).toMatchObject({ error: { reason: "timed_out", timeoutMillis: 300, until: ["idle"], session: { pid: sleeper.pid } } })
  })

  it("exit 13 when the process dies while another state is awaited; exit 0 with the verdict when gone is", async () => {
    for (const until of ["idle", "gone"]) {
      const { home, sessionId, sleeper } = makeHome({ status: "busy" })
      const run = startCli(["--claude-home", home, "wait", sessionId, "--until", until, "--json"])
      await watching(run.child.pid!)
      await killAndReap(sleeper)
      const code = await run.exited
      const printed = JSON.parse(run.stdout())
      if (until === "gone") {
        expect(code).toBe(0)
        expect(printed).toMatchObject({ state: "gone", verdict: "dead", session: { pid: sleeper.pid } })
      } else {
        expect(code).toBe(13)
        expect(printed).toMatchObject({ error: { reason: "ended", verdict: "dead", session: { pid: sleeper.pid } } })
      }
    }
  })

  it("exit 3 when not live at the start, unless gone is asked; exit 2 for a bad state or none", async () => {
    const { home, sessionId, sleeper } = makeHome()
    await killAndReap(sleeper)
    expect(runCli(["--claude-home", home, "wait", sessionId, "--until", "idle"]).status).toBe(3)
    const gone = runCli(["--claude-home", home, "wait", sessionId, "--until", "gone", "--json"])
    expect(gone.status).toBe(0)
    expect(JSON.parse(gone.stdout)).toEqual({ state: "gone", verdict: "dead", session: null })
    expect(runCli(["--claude-home", home, "wait", sessionId, "--until", "asleep"]).status).toBe(2)
    expect(runCli(["--claude-home", home, "wait", sessionId]).status).toBe(2)
    expect(runCli(["--claude-home", home, "wait", "--until", "idle"]).status).toBe(2)
  })
})

describe("claude-peers watch filters", { timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-watch-filter-"))
  const sleepers = [startSleeper(), startSleeper()]
  afterAll(async () => {
    await Promise.all(sleepers.map(killAndReap))
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it("--status busy: only the events of sessions busy before or after them; the change out of it is the last", async () => {
    const home = path.join(tmp, "home")
    fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
    const write = (pid: number, status: string) =>
      fs.writeFileSync(path.join(home, "sessions", `${pid}.json`), recordText(pid, { procStart: startTimeOf(pid), pidDomain: linuxPidDomain(), status }))
    const [a, b] = sleepers.map((s) => s.pid) as [number, number]
    write(a, "busy")
    write(b, "idle")
    const run = startCli(["--claude-home", home, "watch", "--json", "--status", "busy"])
    const lines = () => run.stdout().split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line))
    try {
      await waitUntil("the appeared line", limit, () => (lines().length >= 1 ? true : undefined))
      write(b, "waiting") // not busy before or after: not printed
      write(a, "idle") // out of the filter: printed, the last of a
      await waitUntil("the changed line", limit, () => (lines().length >= 2 ? true : undefined))
      write(b, "busy") // into the filter
      await waitUntil("the third line", limit, () => (lines().length >= 3 ? true : undefined))
      expect(lines().map((e) => [e.type, e.session.pid, e.session.status])).toEqual([
        ["appeared", a, "busy"],
        ["changed", a, "idle"],
        ["changed", b, "busy"]
      ])
    } finally {
      run.child.kill("SIGTERM")
      await run.exited
    }
  })
})

describe("watch on the real OS: what the path names, and the file a notification names", { timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-watch-link-"))
  const sleepers = [startSleeper(), startSleeper()]
  afterAll(async () => {
    await Promise.all(sleepers.map(killAndReap))
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  const record = (pid: number, options: RecordOptions = {}) => recordText(pid, { procStart: startTimeOf(pid), pidDomain: linuxPidDomain(), ...options })

  const collect = (home: string, interval: number) =>
    Effect.gen(function*() {
      const events = yield* Queue.unbounded<SessionEvent>()
      const fiber = yield* Stream.unwrap(Effect.map(Watch, (watch) => watch.sessions({ interval }))).pipe(
        Stream.runForEach((event) => Queue.offer(events, event)),
        Effect.provide(layerNode({ claudeHome: home })),
        Effect.forkScoped
      )
      const seen: Array<SessionEvent> = []
      const next = (what: string, matches: (e: SessionEvent) => boolean) =>
        Effect.promise(() =>
          waitUntil(`${what} (seen so far: ${JSON.stringify(seen.map((e) => [e._tag, e.session.pid, e._tag === "gone" ? e.verdict : ""]))})`, limit, () => {
            seen.push(...Effect.runSync(Queue.takeAll(events)))
            const index = seen.findIndex(matches)
            return index < 0 ? undefined : seen.splice(index, 1)[0]
          })
        )
      return { fiber, next }
    })

  // Live: the watch's waits run on the real clock.
  it.live("a re-pointed sessions link (and a re-pointed home link) is followed", () =>
    Effect.scoped(Effect.gen(function*() {
      const [a, b] = sleepers.map((s) => s.pid) as [number, number]
      for (const linked of ["sessions", "home"] as const) {
        const root = path.join(tmp, linked)
        const [one, two] = [path.join(root, "one"), path.join(root, "two")]
        for (const dir of [one, two]) fs.mkdirSync(linked === "home" ? path.join(dir, "sessions") : dir, { recursive: true })
        const home = linked === "home" ? path.join(root, "home") : path.join(root, "claude")
        if (linked === "home") fs.symlinkSync(one, home)
        else {
          fs.mkdirSync(home)
          fs.symlinkSync(one, path.join(home, "sessions"))
        }
        const dirOf = (target: string) => (linked === "home" ? path.join(target, "sessions") : target)
        const link = linked === "home" ? home : path.join(home, "sessions")
        fs.writeFileSync(path.join(dirOf(one), `${a}.json`), record(a))
        fs.writeFileSync(path.join(dirOf(two), `${b}.json`), record(b))
        const watch = yield* collect(home, 300)
        yield* watch.next("a appeared", (e) => e._tag === "appeared" && e.session.pid === a)
        // Re-pointed atomically, as profile switchers do: a new link renamed over the old one.
        fs.symlinkSync(two, `${link}.new`)
        fs.renameSync(`${link}.new`, link)
        yield* watch.next("a gone", (e) => e._tag === "gone" && e.session.pid === a && e.verdict === "removed")
        yield* watch.next("b appeared", (e) => e._tag === "appeared" && e.session.pid === b)
        fs.writeFileSync(path.join(dirOf(two), `${b}.json`), record(b, { status: "busy" }))
        const changed = yield* watch.next("b changed", (e) => e._tag === "changed" && e.session.pid === b)
        expect(changed.session.status).toBe("busy")
        yield* Fiber.interrupt(watch.fiber)
      }
    })))

  it.live("a change among many stale records is reported from that file, as a whole read would report it", () =>
    Effect.scoped(Effect.gen(function*() {
      const [a, b] = sleepers.map((s) => s.pid) as [number, number]
      const home = path.join(tmp, "many")
      const sessions = path.join(home, "sessions")
      fs.mkdirSync(sessions, { recursive: true })
      for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(sessions, `${4_000_000 + i}.json`), recordText(4_000_000 + i))
      fs.writeFileSync(path.join(sessions, `${a}.json`), record(a, { name: "api" }))
      fs.writeFileSync(path.join(sessions, `${b}.json`), record(b, { name: "docs" }))
      const watch = yield* collect(home, 1000)
      yield* watch.next("b appeared", (e) => e._tag === "appeared" && e.session.pid === b)
      fs.writeFileSync(path.join(sessions, `${b}.json`), record(b, { name: "API" }))
      // Both addresses become sockets: the other session's too, though its file was not touched.
      const first = yield* watch.next("a changed", (e) => e._tag === "changed" && e.session.pid === a)
      expect(first.session.address).toBe(`uds:/tmp/cc-socks/${a}.sock`)
      fs.rmSync(path.join(sessions, `${b}.json`))
      yield* watch.next("b gone", (e) => e._tag === "gone" && e.session.pid === b && e.verdict === "removed")
      const back = yield* watch.next("a changed back", (e) => e._tag === "changed" && e.session.pid === a)
      expect(back.session.address).toBe("api")
      yield* Fiber.interrupt(watch.fiber)
    })))
})
