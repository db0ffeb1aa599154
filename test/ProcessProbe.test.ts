/**
 * One conformance suite for `ProcessProbe`, run against the memory table and against the Node layer
 * with real child processes (both the Linux /proc strategy and the batched `ps` strategy that macOS
 * uses, which runs here with procps' `ps`). The memory layer is what other suites inject faults
 * with, so it must not be able to drift from the OS.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option } from "effect"
import * as childProcess from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as path from "node:path"
import { vi } from "vitest"
import { signalZero as commandSignalZero } from "../command/src/SignalZero.js"
import { layer as layerMemory, makeMemoryProcesses } from "../src/layers/ProcessProbeMemory.js"
import { listingThreshold, makeNode, parseProcStat, parsePs, procListsEveryProcess, type ProcStat } from "../src/layers/ProcessProbeNode.js"
import { signalZero } from "../src/layers/SignalZero.js"
import { ProcessProbe, type ProcessState } from "../src/services/ProcessProbe.js"
import { layerMemory as layerMemoryWorld, ProcessController, processProbeConformance } from "../src/testing/ProcessProbeConformance.js"
import { stagedForOtherUsers } from "./support/staged.js"

const root = path.resolve(import.meta.dirname, "..")

const check = (pids: Iterable<number>, startTimeOf: Iterable<number> = []) => Effect.flatMap(ProcessProbe, (probe) => probe.check(pids, new Set(startTimeOf)))

const alive = (startTime?: string): ProcessState => ({
  _tag: "Alive",
  startTime: startTime === undefined ? Option.none() : Option.some(startTime),
  stopped: false,
  otherUser: false,
  hidden: false
})
const dead: ProcessState = { _tag: "Dead" }

// ---------------------------------------------------------------------------------------------
// Memory

processProbeConformance("ProcessProbe memory", layerMemoryWorld())

describe("ProcessProbe memory faults", () => {
  const withProcesses = (
    body: (processes: ReturnType<typeof makeMemoryProcesses>) => Effect.Effect<void, never, ProcessProbe>
  ) =>
    Effect.suspend(() => {
      const processes = makeMemoryProcesses()
      return Effect.provide(body(processes), layerMemory(processes))
    })

  it.effect("spawn allocates pids from 1000 and distinct start times", () =>
    withProcesses((processes) =>
      Effect.sync(() => {
        const a = processes.spawn()
        const b = processes.spawn()
        const c = processes.spawn({ pid: 77, startTime: "42" })
        expect(a.pid).toBe(1000)
        expect(b.pid).toBe(1001)
        expect(a.startTime).not.toBe(b.startTime)
        expect(a.startTime).toMatch(/^\d+$/)
        expect(c).toEqual({ pid: 77, startTime: "42" })
        expect(() => processes.spawn({ pid: 77 })).toThrow()
        processes.kill(1001)
        expect(processes.isAlive(1001)).toBe(false)
        expect(processes.startTimeOf(1001)).toBeUndefined()
        expect(processes.spawn().pid).toBe(1002)
      })
    ))

  it.effect("a reused pid is alive with the new process's start time", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const { pid, startTime } = processes.spawn()
        const reused = processes.reuse(pid)
        expect(reused).not.toBe(startTime)
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, alive(reused)]]))
        expect(processes.reuse(pid, "9321544")).toBe("9321544")
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, alive("9321544")]]))
        processes.kill(pid)
        processes.reuse(pid, "1")
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, alive("1")]]))
      })
    ))

  it.effect("a process that dies between its liveness check and its start-time read is dead", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const { pid } = processes.spawn()
        const other = processes.spawn()
        processes.dieDuringCheck(pid)
        const before = processes.stats
        const states = yield* check([pid, other.pid], [pid, other.pid])
        expect(states).toEqual(new Map([[pid, dead], [other.pid, alive(other.startTime)]]))
        // The failed read is what sends the probe back to kill(pid, 0).
        expect(processes.stats.kills - before.kills).toBe(3)
        expect(processes.isAlive(pid)).toBe(false)
      })
    ))

  it.effect("checkLiveness: a process that dies after the liveness pass is dead when its start time is read", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const { pid } = processes.spawn()
        processes.dieDuringCheck(pid)
        const liveness = yield* Effect.flatMap(ProcessProbe, (probe) => probe.checkLiveness([pid]))
        expect(liveness.isAlive(pid)).toBe(true)
        expect(yield* liveness.states([pid], new Set([pid]))).toEqual(new Map([[pid, dead]]))
      })
    ))

  it.effect("a process marked to die, whose start time is not asked, is alive in that check and dead after", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const { pid } = processes.spawn()
        processes.dieDuringCheck(pid)
        expect(yield* check([pid])).toEqual(new Map([[pid, alive()]]))
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, dead]]))
      })
    ))

  it.effect("an unreadable start time is alive with none, and readable again when cleared", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const { pid, startTime } = processes.spawn()
        processes.setStartTimeUnreadable(pid)
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, alive()]]))
        expect(processes.stats.startTimeReads).toBe(1)
        processes.setStartTimeUnreadable(pid, false)
        expect(yield* check([pid], [pid])).toEqual(new Map([[pid, alive(startTime)]]))
      })
    ))

  it.effect("setPidDomain sets or removes the domain", () =>
    withProcesses((processes) =>
      Effect.gen(function*() {
        const probe = yield* ProcessProbe
        processes.setPidDomain("linux:abc:pid:[4026531836]")
        expect(yield* probe.pidDomain).toEqual(Option.some("linux:abc:pid:[4026531836]"))
        processes.setPidDomain(null)
        expect(yield* probe.pidDomain).toEqual(Option.none())
      })
    ))
})

// ---------------------------------------------------------------------------------------------
// Node, with real processes

/** A child that reports ready once its setup has run (e.g. a `process.title` that renames comm). */
const childScript = (setup = "") => `${setup};process.stdout.write("ready\\n");setInterval(()=>{},1e6)`

const makeChildren = () => {
  const running = new Map<number, childProcess.ChildProcess>()
  const spawn = (setup?: string) =>
    Effect.async<number>((resume) => {
      const child = childProcess.spawn(process.execPath, ["-e", childScript(setup)], {
        stdio: ["ignore", "pipe", "inherit"]
      })
      child.once("error", (error) => resume(Effect.die(error)))
      child.stdout!.once("data", () => {
        running.set(child.pid!, child)
        resume(Effect.succeed(child.pid!))
      })
    })
  // SIGKILL, then wait for 'exit': Node emits it after waitpid, so the pid is reaped, not a zombie.
  const kill = (pid: number) =>
    Effect.async<void>((resume) => {
      const child = running.get(pid)
      if (child === undefined) return resume(Effect.void)
      running.delete(pid)
      if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
      child.once("exit", () => resume(Effect.void))
      child.kill("SIGKILL")
    })
  /**
   * A real zombie: a shell starts a short-lived child, prints its pid, and replaces itself with a
   * `sleep` that never waits for it. `killAll` kills that parent, and init reaps the zombie.
   */
  const zombie = Effect.async<number>((resume) => {
    const parent = childProcess.spawn("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 3600"], { stdio: ["ignore", "pipe", "ignore"] })
    running.set(parent.pid!, parent)
    parent.stdout!.once("data", (data: Buffer) => {
      const pid = Number(String(data).trim())
      const poll = (tries: number) => {
        if (stateOf(pid) === "Z") return resume(Effect.succeed(pid))
        if (tries === 0) return resume(Effect.die(new Error(`pid ${pid} did not become a zombie`)))
        setTimeout(() => poll(tries - 1), 10)
      }
      poll(300)
    })
  })
  const killAll = () => {
    for (const child of running.values()) child.kill("SIGKILL")
    running.clear()
  }
  /** A signal, then a wait until `/proc` shows the state it leads to (delivery is asynchronous). */
  const signalUntil = (signal: NodeJS.Signals, stopped: boolean) => (pid: number) =>
    Effect.async<void>((resume) => {
      process.kill(pid, signal)
      const poll = (tries: number) => {
        if ((stateOf(pid) === "T") === stopped) return resume(Effect.void)
        if (tries === 0) return resume(Effect.die(new Error(`pid ${pid} did not ${stopped ? "stop" : "continue"}`)))
        setTimeout(() => poll(tries - 1), 10)
      }
      poll(3000)
    })
  return { spawn, kill, killAll, zombie, stop: signalUntil("SIGSTOP", true), resume: signalUntil("SIGCONT", false) }
}

const stateOf = (pid: number): string | undefined => {
  try {
    return /^\d+ \(.*\) (\S)/s.exec(fs.readFileSync(`/proc/${pid}/stat`, "latin1"))?.[1]
  } catch {
    return undefined
  }
}

/**
 * Counts `kill(pid, 0)` system calls by spying on `process._kill`, which `process.kill` calls after
 * validating its arguments; the children are killed through
 * their handles, which do not go through it.
 */
const countSignalZero = () => {
  let spy: { readonly mock: { readonly calls: ReadonlyArray<ReadonlyArray<unknown>> }; mockRestore(): void } | undefined
  beforeAll(() => {
    spy = vi.spyOn(process as unknown as { _kill: (pid: number, signal: number) => number }, "_kill")
  })
  afterAll(() => spy?.mockRestore())
  return () => spy?.mock.calls.filter(([, signal]) => signal === 0).length ?? 0
}

/** Field 22 of /proc/<pid>/stat, found by a regex rather than by the probe's own parser. */
const procStatField22 = (pid: number): string => {
  const match = /^\d+ \(.*\) (.*)$/s.exec(fs.readFileSync(`/proc/${pid}/stat`, "latin1"))
  return match![1]!.trim().split(" ")[19]!
}

const psEnv = { ...process.env, TZ: "UTC", LC_ALL: "C" }
const psLstart = (pid: number): string =>
  childProcess.execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], { env: psEnv, encoding: "utf8" })
    .trim()
    .split(/\s+/)
    .join(" ")

const linuxPidDomain = () => Option.some(`linux:${fs.readFileSync("/etc/machine-id", "utf8").trim()}:${fs.readlinkSync("/proc/self/ns/pid")}`)

const isLinux = process.platform === "linux"
const hasPs = (() => {
  try {
    childProcess.execFileSync("ps", ["-o", "pid=", "-p", String(process.pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

describe.runIf(isLinux)("ProcessProbe node, Linux /proc", () => {
  const children = makeChildren()
  afterAll(children.killAll)
  const kills = countSignalZero()

  processProbeConformance(
    "conformance",
    Layer.merge(
      Layer.succeed(ProcessProbe, makeNode("linux")),
      Layer.succeed(ProcessController, {
        spawn: children.spawn(),
        kill: children.kill,
        startTime: procStatField22,
        pidDomain: linuxPidDomain,
        kills,
        zombie: children.zombie,
        self: { pid: process.pid, startTime: procStatField22(process.pid) },
        stop: children.stop,
        resume: children.resume,
        ...(process.geteuid?.() === 0 ? {} : { otherUsersProcess: Effect.succeed(1) }),
        uid: Option.fromNullable(process.geteuid?.())
      })
    )
  )

  const probe = makeNode("linux")

  it.live("signalZero answers as process.kill does: a live child, this process and pid 1 alive, a reaped child and an unused pid dead", () =>
    Effect.gen(function*() {
      const live = yield* children.spawn()
      const gone = yield* children.spawn()
      yield* children.kill(gone)
      const unusedPid = Number(fs.readFileSync("/proc/sys/kernel/pid_max", "utf8")) - 1
      expect(fs.existsSync(`/proc/${unusedPid}`)).toBe(false)
      const byKill = (pid: number) => {
        try {
          process.kill(pid, 0)
          return true
        } catch (error) {
          return (error as NodeJS.ErrnoException).code !== "ESRCH"
        }
      }
      const pids = [process.pid, live, 1, gone, unusedPid]
      const expected = [true, true, true, false, false]
      expect(pids.map(byKill)).toEqual(expected)
      expect(pids.map(signalZero)).toEqual(expected)
      // The command's, through the binding, answers the same.
      expect(pids.map(commandSignalZero)).toEqual(expected)
      yield* children.kill(live)
    }))

  const staged = stagedForOtherUsers()
  it.runIf(process.getuid?.() === 0 && fs.existsSync("/usr/bin/setpriv"))(
    "signalZero: a process this user may not signal (EPERM) is alive",
    () => {
      // As an unprivileged user, pid 1 (root's) answers EPERM; the probe runs there, bundled into
      // a copy that user can read wherever this checkout is.
      const library = path.join(root, "src", "layers", "SignalZero.ts")
      const command = path.join(root, "command", "src", "SignalZero.ts")
      const script = staged.script(
        "signal-zero",
        `import { signalZero } from ${JSON.stringify(library)}
        import { signalZero as commandSignalZero } from ${JSON.stringify(command)}
        let code = "none"
        try { process.kill(1, 0) } catch (error) { code = error.code }
        console.log(JSON.stringify({ code, alive: signalZero(1), command: commandSignalZero(1) }))`
      )
      const result = childProcess.spawnSync(
        "/usr/bin/setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, script],
        { encoding: "utf8", cwd: "/" }
      )
      expect(result.stderr).toBe("")
      expect(JSON.parse(result.stdout)).toEqual({ code: "EPERM", alive: true, command: true })
    }
  )

  it.live("arguments and an environment larger than one read's buffer come whole, and a stat line too", () =>
    Effect.gen(function*() {
      // Larger than the buffer the probe starts with (16 KiB), so read in several reads and a larger buffer.
      const big = "v".repeat(100_000)
      const words = Array.from({ length: 3_000 }, (_, i) => `word-${i}`)
      const child = childProcess.spawn("sleep", ["3600"], { stdio: "ignore", env: { ...process.env, CLAUDE_PEERS_TEST_BIG: big } })
      const long = childProcess.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", ...words], { stdio: "ignore" })
      try {
        // Emitted once the program is running: its arguments and environment are its own by then.
        yield* Effect.promise(() => Promise.all([once(child, "spawn"), once(long, "spawn")]))
        const evidence = yield* probe.evidence(child.pid!)
        expect(evidence.environment._tag === "Read" && evidence.environment.value.get("CLAUDE_PEERS_TEST_BIG")).toBe(big)
        const args = yield* probe.evidence(long.pid!, ["arguments"])
        expect(args.arguments._tag === "Read" && args.arguments.value.slice(3)).toEqual(words)
        const states = yield* probe.check([child.pid!], new Set([child.pid!]))
        expect(states.get(child.pid!)).toEqual(alive(procStatField22(child.pid!)))
      } finally {
        child.kill("SIGKILL")
        long.kill("SIGKILL")
      }
    }))

  it.live("pid 1 (init) is alive, whoever owns it", () =>
    Effect.gen(function*() {
      const states = yield* probe.check([1], new Set([1]))
      expect(states.get(1)?._tag).toBe("Alive")
    }))

  it.live("the start time of a process whose name holds parentheses and spaces is field 22", () =>
    Effect.gen(function*() {
      const pid = yield* children.spawn(`process.title = "x) (y z) 1 2"`)
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
      expect(stat).toContain("(x) (y z) 1 2)")
      const states = yield* probe.check([pid], new Set([pid]))
      expect(states.get(pid)).toEqual(alive(procStatField22(pid)))
      yield* children.kill(pid)
    }))

  it.live("field 22 is the start in clock ticks since boot (checked against /proc/uptime)", () =>
    Effect.gen(function*() {
      const pid = yield* children.spawn()
      const state = (yield* probe.check([pid], new Set([pid]))).get(pid)
      yield* children.kill(pid)
      const ticks = state?._tag === "Alive" ? Number(Option.getOrThrow(state.startTime)) : Number.NaN
      const hertz = Number(childProcess.execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }))
      const uptime = Number(fs.readFileSync("/proc/uptime", "utf8").split(" ")[0])
      const age = uptime - ticks / hertz
      expect(age).toBeGreaterThanOrEqual(0)
      expect(age).toBeLessThan(60)
    }))

  it.live("pidDomain is linux:<machine-id>:<target of /proc/self/ns/pid>", () =>
    Effect.gen(function*() {
      const domain = Option.getOrThrow(yield* probe.pidDomain)
      expect(domain.startsWith("linux:")).toBe(true)
      expect(domain.endsWith(`:${fs.readlinkSync("/proc/self/ns/pid")}`)).toBe(true)
      expect(domain).toMatch(/^linux:[0-9a-f]+:pid:\[\d+\]$/)
    }))

  it.live("the ps strategy and other platforms have no pid domain", () =>
    Effect.gen(function*() {
      expect(yield* makeNode("darwin").pidDomain).toEqual(Option.none())
      expect(yield* makeNode("win32").pidDomain).toEqual(Option.none())
    }))

  it.live("on other platforms (Windows): liveness only", () =>
    Effect.gen(function*() {
      const pid = yield* children.spawn()
      const gone = yield* children.spawn()
      yield* children.kill(gone)
      const states = yield* makeNode("win32").check([pid, gone], new Set([pid, gone]))
      expect(states).toEqual(new Map([[pid, alive()], [gone, dead]]))
      yield* children.kill(pid)
    }))
})

describe.runIf(isLinux)("ProcessProbe node, Linux: large checks list /proc once", () => {
  const children = makeChildren()
  afterAll(children.killAll)
  const kills = countSignalZero()
  const probe = makeNode("linux")
  // Whether this machine's /proc can be trusted (no hidepid, our pid namespace): the probe then
  // signals only the pids it lists; otherwise it falls back to one kill per pid, and so do these tests.
  const trusted = procListsEveryProcess(fs.readFileSync("/proc/self/mountinfo", "utf8")) &&
    fs.readlinkSync("/proc/self") === String(process.pid)

  /** `count` pids that no process has now: the highest below pid_max that /proc does not list. */
  const unusedPids = (count: number): Array<number> => {
    const pidMax = Number(fs.readFileSync("/proc/sys/kernel/pid_max", "utf8"))
    const pids: Array<number> = []
    for (let pid = pidMax - 1; pids.length < count && pid > 1; pid--) {
      if (!fs.existsSync(`/proc/${pid}`)) pids.push(pid)
    }
    return pids
  }

  const killsDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const before = kills()
      const result = yield* effect
      return [result, kills() - before] as const
    })

  it.live("a live child, this process and pid 1 are alive, a killed child and unused pids dead, among more than the threshold", () =>
    Effect.gen(function*() {
      const live = yield* children.spawn()
      const gone = yield* children.spawn()
      yield* children.kill(gone)
      const unused = unusedPids(listingThreshold + 36)
      const pids = [...unused.slice(0, 50), live, gone, process.pid, 1, live, ...unused.slice(50)]
      expect(pids.length).toBeGreaterThan(listingThreshold)
      const [states, signalled] = yield* killsDuring(probe.check(pids, new Set([live, gone])))
      expect(states.get(live)).toEqual(alive(procStatField22(live)))
      expect(states.get(process.pid)).toEqual(alive())
      expect(states.get(1)).toEqual(alive())
      expect(states.get(gone)).toEqual(dead)
      for (const pid of unused) expect(states.get(pid)).toEqual(dead)
      expect(states.size).toBe(new Set(pids).size)
      // Listed: only the three live pids are signalled (the killed child was reaped before the listing).
      expect(signalled).toBe(trusted ? 3 : new Set(pids).size)
      yield* children.kill(live)
    }))

  it.live("checkLiveness takes the same path, and states reads start times only for live pids", () =>
    Effect.gen(function*() {
      const live = yield* children.spawn()
      const gone = yield* children.spawn()
      yield* children.kill(gone)
      const unused = unusedPids(listingThreshold)
      const pids = [live, gone, ...unused]
      const [liveness, signalled] = yield* killsDuring(probe.checkLiveness(pids))
      expect(signalled).toBe(trusted ? 1 : pids.length)
      expect(liveness.isAlive(live)).toBe(true)
      expect(liveness.isAlive(gone)).toBe(false)
      expect(unused.some(liveness.isAlive)).toBe(false)
      const [states, again] = yield* killsDuring(liveness.states([live, gone], new Set([live, gone])))
      expect(again).toBe(0)
      expect(states).toEqual(new Map([[live, alive(procStatField22(live))], [gone, dead]]))
      yield* children.kill(live)
    }))

  it.live("at most the threshold: one kill per distinct pid, dead ones included", () =>
    Effect.gen(function*() {
      const live = yield* children.spawn()
      const unused = unusedPids(listingThreshold - 1)
      const small = [live, ...unused]
      expect(small.length).toBe(listingThreshold)
      const [states, signalled] = yield* killsDuring(probe.check(small, new Set()))
      expect(signalled).toBe(listingThreshold)
      expect(states.get(live)).toEqual(alive())
      for (const pid of unused) expect(states.get(pid)).toEqual(dead)
      yield* children.kill(live)
    }))

  it.live("a thread id is alive to a small check and, knowingly, dead to a listed one (/proc lists processes only)", () =>
    Effect.gen(function*() {
      // Node always runs threads besides the main one (V8 platform workers, libuv's pool).
      const tid = fs.readdirSync("/proc/self/task").map(Number).find((id) => id !== process.pid)!
      expect(tid).toBeDefined()
      expect((yield* probe.check([tid], new Set())).get(tid)).toEqual(alive())
      const states = yield* probe.check([tid, ...unusedPids(listingThreshold)], new Set())
      expect(states.get(tid)).toEqual(trusted ? dead : alive())
    }))
})

describe.runIf((isLinux || process.platform === "darwin") && hasPs)("ProcessProbe node, batched ps (macOS)", () => {
  const children = makeChildren()
  afterAll(children.killAll)
  const kills = countSignalZero()

  processProbeConformance(
    "conformance",
    Layer.merge(
      Layer.succeed(ProcessProbe, makeNode("darwin")),
      Layer.succeed(ProcessController, {
        spawn: children.spawn(),
        kill: children.kill,
        startTime: psLstart,
        pidDomain: () => Option.none(),
        kills,
        zombie: children.zombie,
        self: { pid: process.pid, startTime: psLstart(process.pid) },
        stop: children.stop,
        resume: children.resume
      })
    )
  )

  it.live("lstart is read in UTC, whatever the caller's TZ", () =>
    Effect.gen(function*() {
      const pid = yield* children.spawn()
      const state = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          const saved = process.env.TZ
          process.env.TZ = "Asia/Kathmandu"
          return saved
        }),
        () => Effect.map(makeNode("darwin").check([pid], new Set([pid])), (states) => states.get(pid)),
        (saved) =>
          Effect.sync(() => {
            if (saved === undefined) delete process.env.TZ
            else process.env.TZ = saved
          })
      )
      yield* children.kill(pid)
      const lstart = state?._tag === "Alive" ? Option.getOrThrow(state.startTime) : ""
      expect(lstart).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{1,2} \d\d:\d\d:\d\d \d{4}$/)
      expect(Math.abs(Date.parse(`${lstart} UTC`) - Date.now())).toBeLessThan(60_000)
    }))

  it.live("pid 1 (init) is alive with a start time", () =>
    Effect.gen(function*() {
      const states = yield* makeNode("darwin").check([1], new Set([1]))
      expect(states.get(1)).toEqual(alive(psLstart(1)))
    }))
})

// ---------------------------------------------------------------------------------------------
// Parsers

describe("parseProcStat", () => {
  const tail = "S 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 9321544 1000 10 18446744073709551615 0 0 0"
  const running = (startTime: string) => Option.some({ exited: false, stopped: false, startTime: Option.some(startTime) })

  it("reads the state (field 3) and the start time (field 22)", () => {
    expect(parseProcStat(`4242 (claude) ${tail}\n`)).toEqual(running("9321544"))
    expect(parseProcStat(`4242 (claude) ${tail.replace(/^S/, "Z")}`)).toEqual(Option.some({ exited: true, stopped: false, startTime: Option.some("9321544") }))
    expect(parseProcStat(`4242 (claude) ${tail.replace(/^S/, "X")}`).pipe(Option.map((s) => s.exited))).toEqual(Option.some(true))
    expect(parseProcStat(`4242 (claude) ${tail.replace(/^S/, "D")}`).pipe(Option.map((s) => s.exited))).toEqual(Option.some(false))
  })

  it("state T (stopped by a signal) and t (by a tracer) are stopped; no other state is", () => {
    const stoppedOf = (state: string) => parseProcStat(`4242 (claude) ${tail.replace(/^S/, state)}`).pipe(Option.map((s) => s.stopped))
    expect(stoppedOf("T")).toEqual(Option.some(true))
    expect(stoppedOf("t")).toEqual(Option.some(true))
    for (const state of ["S", "R", "D", "I", "Z", "X", "W", "P"]) expect(stoppedOf(state)).toEqual(Option.some(false))
    expect(parseProcStat(`4242 (T t) ${tail}`).pipe(Option.map((s) => s.stopped))).toEqual(Option.some(false))
  })

  it("counts fields from the last ')', whatever the name holds", () => {
    expect(parseProcStat(`4242 (a) (b c) 1 2 3) ${tail}`)).toEqual(running("9321544"))
    expect(parseProcStat(`4242 ()) ${tail}`)).toEqual(running("9321544"))
    expect(parseProcStat(`4242 (x\ny) ${tail}`)).toEqual(running("9321544"))
    expect(parseProcStat(`4242 (Z Z) ${tail}`)).toEqual(running("9321544"))
  })

  it("is none for what is not a stat line, and has no start time where field 22 is not one", () => {
    expect(parseProcStat("")).toEqual(Option.none())
    expect(parseProcStat("4242 claude S 1 1")).toEqual(Option.none())
    expect(parseProcStat("4242 (claude) S 1 1 1")).toEqual(Option.some({ exited: false, stopped: false, startTime: Option.none() }))
    expect(parseProcStat(`4242 (claude) ${tail.replace("9321544", "x")}`)).toEqual(Option.some({ exited: false, stopped: false, startTime: Option.none() }))
  })
})

describe("parseProcStat, as a property", () => {
  /** The reading it replaces: the line after the last `)` split on white space (`\s`). */
  const bySplit = (stat: string): Option.Option<ProcStat> => {
    const close = stat.lastIndexOf(")")
    if (close < 0) return Option.none()
    const fields = stat.slice(close + 1).trim().split(/\s+/)
    const state = fields[0]
    if (state === undefined || state.length === 0) return Option.none()
    const start = fields[19]
    return Option.some({
      exited: state === "Z" || state === "X",
      stopped: state === "T" || state === "t",
      startTime: start !== undefined && /^\d+$/.test(start) ? Option.some(start) : Option.none()
    })
  }
  const word = fc.oneof(
    fc.constantFrom("S", "Z", "X", "T", "t", "R", "0", "9321544", "-1", "18446744073709551615", "x", ")", "("),
    fc.stringMatching(/^[0-9]{1,12}$/)
  )
  // ASCII blanks only: `\s` also takes Unicode ones (U+00A0 read as latin1), which the kernel never writes there.
  const blank = fc.constantFrom(" ", "  ", "\t", "\n", " \n", "\v", "\f", "\r")
  const line = fc.tuple(fc.string({ maxLength: 12 }), fc.array(fc.tuple(blank, word), { maxLength: 26 }), fc.constantFrom("", "\n", " ")).map(
    ([name, fields, end]) => `4242 (${name})${fields.map(([b, w]) => b + w).join("")}${end}`
  )

  it("reads what splitting the line after its last ')' reads, for any line", () => {
    fc.assert(
      fc.property(fc.oneof(line, fc.string({ maxLength: 80 })), (stat) => {
        expect(parseProcStat(stat)).toEqual(bySplit(stat))
      }),
      { numRuns: 2_000 }
    )
  })
})

describe("parsePs", () => {
  it("maps each pid to its state and its lstart with white space collapsed", () => {
    expect(parsePs(" 4242 Ss   Mon Nov 30 04:27:32 2026\n  77 Z+ Tue Dec  1 10:00:00 2026\n")).toEqual(
      new Map([[4242, { exited: false, stopped: false, lstart: "Mon Nov 30 04:27:32 2026" }], [77, {
        exited: true,
        stopped: false,
        lstart: "Tue Dec 1 10:00:00 2026"
      }]])
    )
  })

  it("a state starting with T is stopped", () => {
    expect(parsePs(" 9 T Mon Nov 30 04:27:32 2026\n 10 T+ Mon Nov 30 04:27:32 2026\n 11 S+ Mon Nov 30 04:27:32 2026\n")).toEqual(
      new Map([9, 10, 11].map((pid) => [pid, { exited: false, stopped: pid !== 11, lstart: "Mon Nov 30 04:27:32 2026" }]))
    )
  })

  it("skips blank lines, lines without a start, and what is not a pid", () => {
    expect(parsePs("")).toEqual(new Map())
    expect(parsePs("\n   \n 12\n 12 S\n abc S Mon Nov 30 04:27:32 2026\n 0 S Mon Nov 30 04:27:32 2026\n")).toEqual(new Map())
    expect(parsePs("\r\n 5 R Mon Nov 30 04:27:32 2026\r\n")).toEqual(new Map([[5, { exited: false, stopped: false, lstart: "Mon Nov 30 04:27:32 2026" }]]))
  })
})

describe("procListsEveryProcess", () => {
  const line = (superOptions: string, mountOptions = "rw,nosuid,nodev,noexec,relatime") =>
    `22 1 0:21 / /proc ${mountOptions} shared:12 - proc proc ${superOptions}`
  const other = "25 22 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw"

  it("trusts a procfs on /proc without hidepid, or with hidepid=0|off, or subset=pid", () => {
    expect(procListsEveryProcess("21 26 0:20 / /proc rw,relatime - proc proc rw\n")).toBe(true)
    expect(procListsEveryProcess([other, line("rw"), other].join("\n"))).toBe(true)
    expect(procListsEveryProcess(line("rw,hidepid=0"))).toBe(true)
    expect(procListsEveryProcess(line("rw,hidepid=off,gid=4"))).toBe(true)
    expect(procListsEveryProcess(line("rw,subset=pid"))).toBe(true)
  })

  it("does not trust a /proc that hides other users' processes", () => {
    for (const hidepid of ["1", "2", "4", "noaccess", "invisible", "ptraceable"]) {
      expect(procListsEveryProcess(line(`rw,hidepid=${hidepid}`))).toBe(false)
      expect(procListsEveryProcess(line(`rw,hidepid=${hidepid},subset=pid`))).toBe(false)
      expect(procListsEveryProcess(line("rw", `rw,relatime,hidepid=${hidepid}`))).toBe(false)
    }
  })

  it("the last mount on /proc decides", () => {
    expect(procListsEveryProcess([line("rw"), line("rw,hidepid=2")].join("\n"))).toBe(false)
    expect(procListsEveryProcess([line("rw,hidepid=2"), line("rw")].join("\n"))).toBe(true)
    expect(procListsEveryProcess([line("rw"), "40 22 0:50 / /proc rw - tmpfs tmpfs rw"].join("\n"))).toBe(false)
  })

  it("ignores mounts below /proc and elsewhere, and trusts nothing it cannot read", () => {
    expect(procListsEveryProcess([line("rw"), "30 22 0:21 /sys /proc/sys ro - proc proc rw,hidepid=2"].join("\n"))).toBe(true)
    expect(procListsEveryProcess("")).toBe(false)
    expect(procListsEveryProcess(other)).toBe(false)
    expect(procListsEveryProcess("22 1 0:21 / /proc rw proc proc rw")).toBe(false)
    expect(procListsEveryProcess("22 1 0:21 / /proc\\040x rw - proc proc rw")).toBe(false)
  })
})
