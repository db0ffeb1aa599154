/**
 * `watch` on the real OS: `fs.watch` on a temporary registry directory, real child processes
 * registered, changed, killed and unregistered, and the built command run as a user runs it.
 * Real waiting cannot be avoided here, so every wait polls with a generous limit and the tests
 * assert that events arrive, in order; the latencies themselves are measured by `bench/watch.mjs`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { SessionEvent } from "../src/domain/SessionEvent.js"
import * as Watch from "../src/services/Watch.js"
import { binPath, startCli, waitUntil } from "./support/cli.js"
import { type RecordOptions, recordText, sessionJsonKeys } from "./support/records.js"
import { stagedForOtherUsers } from "./support/staged.js"
import { killAndReap, linuxPidDomain, makeNodeRegistry as makeNodeWorld, startSleeper, startTimeOf, type World } from "./support/worlds.js"

/**
 * Far above the contract's 500 ms: these tests prove arrival, not speed, and a limit only turns a
 * hang into a clue before the test timeout, on a machine that may be very busy.
 */
const fileEventLimit = 20_000
const lineLimit = 30_000

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

const summary = (event: SessionEvent): string => event._tag === "gone" ? `gone ${event.session.pid} ${event.verdict}` : `${event._tag} ${event.session.pid}`

/** The watch on the Node layers, its events collected with the time each arrived. */
const runWatch = (world: World, intervalMillis: number) => {
  const events: Array<{ readonly at: number; readonly event: SessionEvent }> = []
  const fiber = Effect.runFork(
    Stream.unwrap(Effect.map(Watch.Watch, (watch) => watch.sessions({ interval: intervalMillis }))).pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push({ at: performance.now(), event }))),
      Effect.provide(world.layer)
    )
  )
  let read = 0
  /** The next event, waited for; every event is consumed once, in order. */
  const next = (limitMillis = fileEventLimit) => waitUntil("the next event", limitMillis, () => (read < events.length ? events[read++] : undefined))
  const nothingMore = () => events.slice(read).map((e) => summary(e.event))
  return { fiber, next, nothingMore, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}

/** Directory watchers open in this process (nothing else here opens one). */
const openWatchers = () => process.getActiveResourcesInfo().filter((kind) => kind === "FSEventWrap").length

describe("watch on the real OS", { timeout: 60_000 }, () => {
  // The timers are shown released by the command's tests below: after SIGINT the process can only
  // exit once nothing is left on its event loop.
  it("the directory watcher is released when the stream ends", async () => {
    // A watcher's handle closes on the turn of the event loop after `close()`: earlier tests' too.
    const closed = () => (openWatchers() === 0 ? true : undefined)
    await waitUntil("earlier watchers to close", 10_000, closed)
    const world = makeNodeWorld()
    const watch = runWatch(world, 200)
    try {
      await waitUntil("the directory watch to begin", fileEventLimit, () => (openWatchers() === 1 ? true : undefined))
    } finally {
      await watch.stop()
    }
    await waitUntil("the watcher to close", 10_000, closed)
    await world.close()
  })

  // A library host's own work (fs, crypto, dns) can hold every thread of libuv's pool. The watch's
  // first read comes a window after it starts; a directory watch set up only once the pool frees
  // would miss a record written in between (until the full read of the 30th interval).
  it("a record written while the thread pool is busy is reported: the directory watch does not wait for the pool", async () => {
    const world = makeNodeWorld()
    const fifos = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-pool-"))
    const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4)
    // Opening a FIFO for reading blocks its pool thread until a writer opens it.
    const held = Array.from({ length: poolSize }, (_, i) => {
      const fifo = path.join(fifos, `held-${i}`)
      spawnSync("mkfifo", [fifo])
      return { fifo, opened: fs.promises.open(fifo, "r") }
    })
    const release = () => {
      for (const { fifo } of held) fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
    }
    const watch = runWatch(world, 60_000)
    try {
      // The directory watch is set up while the pool is held; the record is written after it.
      await waitUntil("the directory watch to begin", fileEventLimit, () => (openWatchers() === 1 ? true : undefined))
      const child = await world.spawn()
      world.write(`${child.pid}.json`, recordText(child.pid, { procStart: child.startTime, pidDomain: world.pidDomain }))
      await sleep(400)
      release()
      const { event } = await watch.next()
      expect(summary(event)).toBe(`appeared ${child.pid}`)
    } finally {
      release()
      await Promise.all(held.map(async ({ opened }) => (await opened).close()))
      await watch.stop()
      await world.close()
      fs.rmSync(fifos, { recursive: true, force: true })
    }
  })
})

/** The command as a user runs it: the built bin (`npm run build`, as `npm test` does first). */
describe("claude-peers watch", { timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-watch-cli-"))
  const sleeper = startSleeper()
  afterAll(async () => {
    await killAndReap(sleeper)
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  let homes = 0
  const makeHome = () => {
    const home = path.join(tmp, `home-${homes++}`)
    fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
    return home
  }
  const record = (options: RecordOptions = {}) => recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain(), ...options })

  const start = (args: ReadonlyArray<string>) => {
    const { child, exited, stderr, stdout } = startCli(args)
    const lines = () => stdout().split("\n").filter((line) => line.length > 0)
    const line = (index: number) => waitUntil(`line ${index + 1} of the output`, lineLimit, () => lines()[index])
    return { child, exited, line, lines, stderr }
  }

  it("--json: one contract object per line; SIGINT ends it with exit 0 and nothing on stderr", async () => {
    const home = makeHome()
    const file = path.join(home, "sessions", `${sleeper.pid}.json`)
    fs.writeFileSync(file, record({ name: "first" }))
    const run = start(["--claude-home", home, "watch", "--json", "--interval", "200"])
    try {
      const appeared = JSON.parse(await run.line(0))
      expect(Object.keys(appeared)).toEqual(["type", "session"])
      expect(appeared).toMatchObject({ type: "appeared", session: { pid: sleeper.pid, name: "first", file } })
      expect(Object.keys(appeared.session)).toEqual(sessionJsonKeys)

      fs.writeFileSync(file, record({ name: "first", status: "busy" }))
      const changed = JSON.parse(await run.line(1))
      expect(Object.keys(changed)).toEqual(["type", "session", "previous"])
      expect(changed).toMatchObject({ type: "changed", session: { status: "busy" }, previous: { status: "idle" } })

      fs.rmSync(file)
      expect(JSON.parse(await run.line(2))).toMatchObject({ type: "gone", verdict: "removed", session: { pid: sleeper.pid } })
    } finally {
      run.child.kill("SIGINT")
    }
    expect(await run.exited).toBe(0)
    expect(run.stderr()).toBe("")
    expect(run.lines()).toHaveLength(3)
  })

  it("without --json: a readable line per event, control characters escaped; SIGTERM exits 0", async () => {
    const home = makeHome()
    const file = path.join(home, "sessions", `${sleeper.pid}.json`)
    fs.writeFileSync(file, record({ name: "evil\u001b]0;owned\u0007", status: "idle" }))
    const run = start(["--claude-home", home, "watch"])
    try {
      const appeared = await run.line(0)
      expect(appeared).toMatch(new RegExp(`^\\+ appeared +${sleeper.pid} +evil\\\\u\\{1b\\}\\]0;owned\\\\u\\{7\\} +idle`))
      expect(appeared).not.toMatch(/[\u0000-\u001f]/)
      fs.writeFileSync(file, record({ name: "calm", status: "busy" }))
      expect(await run.line(1)).toMatch(new RegExp(`^~ changed +${sleeper.pid} +calm +busy +\\(name .* -> calm, status idle -> busy\\)$`))
      fs.writeFileSync(file, record({ name: "calm", status: "busy", parkedJobId: "d781d7b2" }))
      expect(await run.line(2)).toBe(`- gone      ${sleeper.pid}  calm  (parked)`)
    } finally {
      run.child.kill("SIGTERM")
    }
    expect(await run.exited).toBe(0)
    expect(run.stderr()).toBe("")
  })

  it("ends with exit 0 once nobody reads its output (`watch --json | head -1`)", async () => {
    const home = makeHome()
    const file = path.join(home, "sessions", `${sleeper.pid}.json`)
    fs.writeFileSync(file, record())
    const run = start(["--claude-home", home, "watch", "--json", "--interval", "200"])
    try {
      await run.line(0)
      run.child.stdout.destroy()
      fs.writeFileSync(file, record({ status: "busy" }))
      expect(await run.exited).toBe(0)
      expect(run.stderr()).toBe("")
    } finally {
      run.child.kill("SIGKILL")
    }
  })

  it("a registry directory that does not exist yet is waited for, not an error", async () => {
    const home = path.join(tmp, `home-${homes++}`)
    const run = start(["--claude-home", home, "watch", "--json", "--interval", "200"])
    try {
      await sleep(500)
      expect(run.child.exitCode).toBe(null)
      fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
      fs.writeFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), record())
      expect(JSON.parse(await run.line(0))).toMatchObject({ type: "appeared", session: { pid: sleeper.pid } })
    } finally {
      run.child.kill("SIGINT")
    }
    expect(await run.exited).toBe(0)
    expect(run.stderr()).toBe("")
  })

  it("--interval must be a positive integer: anything else is a usage error, exit 2", () => {
    for (const value of ["0", "-5", "1.5", "soon"]) {
      const result = spawnSync(process.execPath, [binPath, "--claude-home", tmp, "watch", "--interval", value], {
        encoding: "utf8",
        timeout: 30_000
      })
      expect(result.status, value).toBe(2)
      expect(result.stdout, value).toBe("")
    }
  })
})

/**
 * The system refusing change notifications, for real: the command runs as a uid of its own
 * (nothing else on the machine uses it, so no other program loses anything), started by a helper
 * that first takes every inotify instance that uid may have. Its `fs.watch` then fails with EMFILE,
 * as it does on a machine where editors and language servers used them all.
 */
const spareUid = 54321
/** A Python that a user other than root may run (root's own may live in a home nobody else can read). */
const python = ["/usr/bin/python3", "/usr/local/bin/python3"].find((candidate) => fs.existsSync(candidate)) ?? "python3"
const canExhaustInotify = process.getuid?.() === 0 &&
  spawnSync("setpriv", [`--reuid=${spareUid}`, `--regid=${spareUid}`, "--clear-groups", python, "-c", "pass"]).status === 0 &&
  spawnSync("sh", ["-c", `ps -eo uid= | grep -qx ' *${spareUid}'`]).status !== 0

describe.runIf(canExhaustInotify)("claude-peers watch without inotify instances (EMFILE, real)", { timeout: 60_000 }, () => {
  // The spare uid runs copies it can read wherever this checkout is.
  const staged = stagedForOtherUsers()

  it("says so once on stderr, reads the directory every interval, and keeps reporting until SIGTERM (exit 0)", async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-watch-emfile-"))
    const sleeper = startSleeper()
    const home = path.join(tmp, "home")
    const sessions = path.join(home, "sessions")
    fs.mkdirSync(sessions, { recursive: true })
    fs.mkdirSync(path.join(tmp, "cache"))
    for (const dir of [tmp, home, sessions, path.join(tmp, "cache")]) fs.chmodSync(dir, 0o777)
    const file = path.join(sessions, `${sleeper.pid}.json`)
    const record = (options: RecordOptions = {}) => recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain(), ...options })
    fs.writeFileSync(file, record({ name: "first" }), { mode: 0o644 })
    const exhaust = path.join(path.dirname(staged.command()), "exhaust-inotify.py")
    fs.copyFileSync(path.resolve(import.meta.dirname, "support/exhaust-inotify.py"), exhaust)
    const child = spawn(
      "setpriv",
      [
        `--reuid=${spareUid}`,
        `--regid=${spareUid}`,
        "--clear-groups",
        python,
        exhaust,
        process.execPath,
        staged.command(),
        "--claude-home",
        home,
        "watch",
        "--json",
        "--interval",
        "300"
      ],
      { env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: path.join(tmp, "cache") }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    const line = (index: number) =>
      waitUntil(`line ${index + 1} of the output (stderr: ${stderr})`, lineLimit, () => stdout.split("\n").filter((l) => l !== "")[index])
    try {
      expect(JSON.parse(await line(0))).toMatchObject({ type: "appeared", session: { pid: sleeper.pid, name: "first" } })
      await waitUntil("the line on stderr", lineLimit, () => (stderr.includes("EMFILE") ? true : undefined))
      fs.writeFileSync(file, record({ name: "first", status: "busy" }))
      expect(JSON.parse(await line(1))).toMatchObject({ type: "changed", session: { status: "busy" } })
      fs.rmSync(file)
      expect(JSON.parse(await line(2))).toMatchObject({ type: "gone", verdict: "removed" })
      expect(child.exitCode).toBe(null)
    } finally {
      child.kill("SIGTERM")
    }
    try {
      expect(await exited).toBe(0)
      expect(stderr).toBe(
        `claude-peers: the system refused change notifications for ${sessions} (EMFILE); reading it every 300 ms instead\n`
      )
    } finally {
      await killAndReap(sleeper)
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})
