/**
 * `claude-peers/cli`'s `command` mounted in a small host (`Command.withSubcommands([command])`), as an
 * application mounts it: it runs on the host's services (here `layerMemory(world)`), writes through
 * the host's `Console` (captured here), reads its options as the standalone command does, ends with
 * an `ExitCode` failure the host maps (usage 2 with the JSON error under `--json`, io 7 for output
 * the host reports lost), shows help without doubling its name, and leaves no process-wide listener
 * behind: a real host process still stops on Ctrl-C after `settings set`.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Console, Effect, Exit, FiberId, Layer, Ref } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { command, ExitCode, OutputLoss, teardown } from "../src/cli.js"
import { type CommandSpec, commandTable } from "../src/cli/CommandTable.js"
import { layerMemory, makeMemoryWorld, type MemoryWorld } from "../src/testing.js"
import { recordText } from "./support/records.js"
import { startTimeOf } from "./support/worlds.js"

const host = Command.make("my-tool").pipe(Command.withSubcommands([command]))
const runHost = Command.run(host, { name: "my-tool", version: "1.0.0" })

/** A record as Claude Code writes it, for a process of the memory table, in `sessions` (the world's by default). */
const register = (world: MemoryWorld, name: string, sessions = world.home.sessionsDirectory) => {
  const proc = world.processes.spawn()
  world.tree.writeFile(
    `${sessions}/${proc.pid}.json`,
    JSON.stringify({ pid: proc.pid, sessionId: `session-${proc.pid}`, name, messagingSocketPath: `/tmp/cc-socks/${proc.pid}.sock`, procStart: proc.startTime })
  )
  return proc
}

const newWorld = (options: { readonly sendersHome?: boolean } = {}) => {
  const world = makeMemoryWorld(options)
  world.tree.makeDirectory(world.home.root, 0o700)
  world.tree.makeDirectory(world.home.sessionsDirectory, 0o700)
  return world
}

interface Captured {
  readonly exit: Exit.Exit<void, unknown>
  readonly stdout: ReadonlyArray<string>
  readonly stderr: ReadonlyArray<string>
}

/** Runs `my-tool ARGS…` on the world, its output captured by a test `Console`; `lost` is what the host reports lost. */
const run = (world: MemoryWorld, args: ReadonlyArray<string>, lost?: string, timing?: { readonly tornReadRetry: number }) =>
  Effect.gen(function*() {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Effect.console
    const captured: Console.Console = {
      ...base,
      log: (...parts) => Effect.sync(() => void stdout.push(parts.join(" "))),
      error: (...parts) => Effect.sync(() => void stderr.push(parts.join(" ")))
    }
    const exit = yield* runHost(["node", "my-tool", ...args]).pipe(
      Console.withConsole(captured),
      lost === undefined ? (effect) => effect : Effect.provideService(OutputLoss, { stdout: () => lost, readerGone: () => false }),
      Effect.provide(Layer.merge(layerMemory(world, timing === undefined ? {} : { timing }), NodeContext.layer)),
      Effect.exit
    )
    return { exit, stdout, stderr } satisfies Captured
  })

const exitCodeOf = (exit: Exit.Exit<void, unknown>): number | undefined =>
  Exit.isSuccess(exit) ? 0 : exit.cause._tag === "Fail" && exit.cause.error instanceof ExitCode ? exit.cause.error.code : undefined

describe("the mounted command", () => {
  it.effect("runs on the host's memory world and writes through the host's Console", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const proc = register(world, "api")
      const { exit, stderr, stdout } = yield* run(world, ["claude-peers", "list", "--json"])
      expect(exitCodeOf(exit)).toBe(0)
      expect(stderr).toEqual([])
      expect(stdout).toHaveLength(1)
      expect((JSON.parse(stdout[0]!) as Array<{ pid: number; name: string }>).map(({ name, pid }) => ({ name, pid }))).toEqual([{ name: "api", pid: proc.pid }])
    }))

  it.effect("a JSON array longer than one piece reaches the host's Console as one line", () =>
    Effect.gen(function*() {
      // The standalone command writes a long array in pieces (`itemsPerPiece` items); a host's Console gets the whole line.
      const world = newWorld()
      const procs = Array.from({ length: 1500 }, (_, i) => register(world, `s-${i}`))
      for (const args of [["inspect", "--json"], ["list", "--json"]]) {
        const { exit, stdout } = yield* run(world, ["claude-peers", ...args])
        expect(exitCodeOf(exit), args.join(" ")).toBe(0)
        expect(stdout, args.join(" ")).toHaveLength(1)
        const pids = (JSON.parse(stdout[0]!) as Array<{ pid: number }>).map(({ pid }) => pid)
        expect(pids.sort((a, b) => a - b), args.join(" ")).toEqual(procs.map((p) => p.pid).sort((a, b) => a - b))
      }
    }))

  it.effect("reads options as the standalone command does: list --claude-home DIR --json, on the host's ports", () =>
    Effect.gen(function*() {
      const world = newWorld()
      register(world, "home-session")
      const other = "/srv/other-claude"
      world.tree.makeDirectory(other, 0o700)
      world.tree.makeDirectory(`${other}/sessions`, 0o700)
      const proc = register(world, "other-session", `${other}/sessions`)
      for (
        const args of [["list", "--claude-home", other, "--json"], ["--claude-home", other, "list", "--json"], ["list", "--json", `--claude-home=${other}`]]
      ) {
        const { exit, stdout } = yield* run(world, ["claude-peers", ...args])
        expect(exitCodeOf(exit), args.join(" ")).toBe(0)
        expect((JSON.parse(stdout[0]!) as Array<{ pid: number }>).map(({ pid }) => pid), args.join(" ")).toEqual([proc.pid])
      }
    }))

  it.effect("--claude-home keeps the host's sendersHome: a name is an address only in the host's own home", () =>
    Effect.gen(function*() {
      const addresses = (world: MemoryWorld, extra: ReadonlyArray<string>) =>
        Effect.map(run(world, ["claude-peers", "list", "--json", ...extra]), ({ stdout }) =>
          (JSON.parse(stdout[0]!) as Array<{ address: string }>).map(({ address }) => address))
      const elsewhere = newWorld({ sendersHome: false })
      const proc = register(elsewhere, "api")
      for (const extra of [[], ["--claude-home", elsewhere.home.root], ["--claude-home", `${elsewhere.home.root}/`]]) {
        expect(yield* addresses(elsewhere, extra), extra.join(" ")).toEqual([`uds:/tmp/cc-socks/${proc.pid}.sock`])
      }
      const own = newWorld()
      register(own, "api")
      expect(yield* addresses(own, ["--claude-home", own.home.root])).toEqual(["api"])
      // A link to the host's home is that home.
      own.tree.symlink(own.home.root, "/srv/link-to-home")
      expect(yield* addresses(own, ["--claude-home", "/srv/link-to-home"])).toEqual(["api"])
      const other = "/srv/other-claude"
      own.tree.makeDirectory(other, 0o700)
      own.tree.makeDirectory(`${other}/sessions`, 0o700)
      const there = register(own, "api", `${other}/sessions`)
      expect(yield* addresses(own, ["--claude-home", other])).toEqual([`uds:/tmp/cc-socks/${there.pid}.sock`])
    }))

  it.effect("--claude-home keeps the host's timing: with no torn-read wait, an inspect ends without the test clock moving", () =>
    Effect.gen(function*() {
      // A live pid's torn record is read again after the torn-read wait, on Effect's Clock. The host
      // set that wait to 0, so the test clock need not move; had the re-pointed services the default
      // 25 ms, this would wait for a TestClock.adjust that never comes.
      const world = newWorld()
      const proc = world.processes.spawn()
      world.tree.writeFile(`${world.home.sessionsDirectory}/${proc.pid}.json`, "{\"pid\":")
      for (const extra of [[], ["--claude-home", world.home.root]]) {
        const { exit, stdout } = yield* run(world, ["claude-peers", "inspect", "--json", ...extra], undefined, { tornReadRetry: 0 })
        expect(exitCodeOf(exit), extra.join(" ")).toBe(0)
        expect(JSON.parse(stdout.join("\n"))).toMatchObject([{ pid: proc.pid, verdict: "malformed" }])
      }
    }))

  it.effect("settings set updates the world's settings file, and settings get reads it", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const set = yield* run(world, ["claude-peers", "settings", "set", "hold", "--json"])
      expect(exitCodeOf(set.exit)).toBe(0)
      expect(JSON.parse(new TextDecoder().decode(world.tree.readFile(world.home.settingsFile)))).toEqual({ crossSessionInbound: "hold" })
      const get = yield* run(world, ["claude-peers", "settings", "get", "--json"])
      expect((JSON.parse(get.stdout[0]!) as { crossSessionInbound: string }).crossSessionInbound).toBe("hold")
    }))

  it.effect("a usage error is ExitCode 2, with the JSON error under --json and the word as typed, terminal-safe", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const bogus = yield* run(world, ["claude-peers", "resolve", "--bogus", "--json"])
      expect(exitCodeOf(bogus.exit)).toBe(2)
      expect(JSON.parse(bogus.stdout[0]!)).toEqual({ error: { reason: "usage", message: "'--bogus' is not an option of claude-peers resolve" } })
      expect(bogus.stderr).toEqual(["claude-peers: '--bogus' is not an option of claude-peers resolve"])
      const escape = yield* run(world, ["claude-peers", "list", "--x\u001b]52;c;aGk=\u0007"])
      expect(exitCodeOf(escape.exit)).toBe(2)
      expect(escape.stdout).toEqual([])
      expect(escape.stderr).toEqual(["claude-peers: '--x\\u{1b}]52;c;aGk=\\u{7}' is not an option of claude-peers list"])
      for (const args of [["settings", "set", "maybe"], ["resolve"], ["watch", "--interval", "0"], ["bogus"], ["settings"]]) {
        const refused = yield* run(world, ["claude-peers", ...args, "--json"])
        expect(exitCodeOf(refused.exit), args.join(" ")).toBe(2)
        expect((JSON.parse(refused.stdout[0]!) as { error: { reason: string } }).error.reason, args.join(" ")).toBe("usage")
      }
    }))

  it.effect("a refusal is the contract's exit code: resolve of no live session is 3", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const { exit, stdout } = yield* run(world, ["claude-peers", "resolve", "nobody", "--json"])
      expect(exitCodeOf(exit)).toBe(3)
      expect((JSON.parse(stdout[0]!) as { error: { reason: string } }).error.reason).toBe("not_live")
    }))

  it.effect("output the host reports lost is ExitCode 7, said on stderr", () =>
    Effect.gen(function*() {
      const world = newWorld()
      register(world, "api")
      const { exit, stderr } = yield* run(world, ["claude-peers", "list", "--json"], "ENOSPC")
      expect(exitCodeOf(exit)).toBe(7)
      expect(stderr.join("\n")).toMatch(/could not be written to stdout \(ENOSPC\)/)
    }))

  it.effect("a sent message whose answer is lost: ExitCode 7, and stderr says the message was relayed", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const proc = register(world, "api")
      for (const extra of [[], ["--json"]]) {
        const { exit, stderr } = yield* run(world, ["claude-peers", "send", `session-${proc.pid}`, "hello", ...extra], "ENOSPC")
        expect(exitCodeOf(exit), extra.join(" ")).toBe(7)
        expect(stderr.join("\n"), extra.join(" ")).toMatch(
          new RegExp(`\\(ENOSPC\\)[,;] the message itself was relayed: SendMessage reported it delivered \\(pid ${proc.pid}\\)`)
        )
      }
      expect((yield* Ref.get(world.relay.sent)).map((m) => m.message)).toEqual(["hello", "hello"])
    }))

  it.effect("help is the table's, under the host's name, without doubling the prefix", () =>
    Effect.gen(function*() {
      const world = newWorld()
      for (const args of [["claude-peers", "--help"], ["claude-peers", "list", "--help"], ["claude-peers", "settings", "set", "--help"]]) {
        const { exit, stdout } = yield* run(world, args)
        const text = stdout.join("\n")
        expect(exitCodeOf(exit), args.join(" ")).toBe(0)
        expect(text, args.join(" ")).not.toMatch(/claude-peers\s+claude-peers/)
        // The usage line names the command asked about, as the host's parser writes it.
        expect(text, args.join(" ")).toMatch(new RegExp(`\\$ (\\S+ )*${args.at(-2)!} <ARGS>`))
      }
      const list = yield* run(world, ["claude-peers", "list", "--help"])
      expect(list.stdout.join("\n")).toMatch(/list the live Claude Code sessions/)
      expect(list.stdout.join("\n")).toMatch(/--json \(print JSON/)
      // The host's list of commands shows each one's description beside its name.
      const top = (yield* run(world, ["claude-peers", "--help"])).stdout.join("\n")
      const described = (spec: CommandSpec): ReadonlyArray<CommandSpec> => [spec, ...(spec.subcommands ?? []).flatMap(described)]
      for (const spec of described(commandTable).slice(1)) {
        expect(top, spec.name).toMatch(new RegExp(`- (\\S+ )*${spec.name} <ARGS>\\.\\.\\.\\s+${spec.description.slice(0, 30).replace(/[()]/g, "\\$&")}`))
      }
    }))

  it.effect("leaves no process-wide signal listener behind", () =>
    Effect.gen(function*() {
      const world = newWorld()
      const before = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]
      for (const args of [["settings", "set", "accept"], ["settings", "reset"], ["list"], ["policy"]]) yield* run(world, ["claude-peers", ...args])
      expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual(before)
    }))
})

describe("a host process that mounts the command", () => {
  it("teardown: an ExitCode's code, 130 for an interruption, 1 for another failure, 0 for success", () => {
    const codeOf = (exit: Exit.Exit<unknown, unknown>) => {
      let code: number | undefined
      teardown(exit, (c) => (code = c))
      return code
    }
    expect(codeOf(Exit.fail(new ExitCode({ code: 5 })))).toBe(5)
    expect(codeOf(Exit.interrupt(FiberId.none))).toBe(130)
    expect(codeOf(Exit.fail(new Error("boom")))).toBe(1)
    expect(codeOf(Exit.die(new Error("defect")))).toBe(1)
    expect(codeOf(Exit.void)).toBe(0)
  })

  const hostScript = path.resolve(import.meta.dirname, "support/mount-host.mjs")

  it("still stops on Ctrl-C after settings set", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-mount-"))
    try {
      const child = spawn(process.execPath, [hostScript, "claude-peers", "--claude-home", home, "settings", "set", "hold", "--json"], {
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("exit", (code, signal) => resolve({ code, signal }))
      )
      await new Promise<void>((resolve) =>
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes("waiting for Ctrl-C")) resolve()
        })
      )
      expect(stdout).toMatch(/the subcommand ended with 0/)
      expect(JSON.parse(fs.readFileSync(path.join(home, "settings.json"), "utf8"))).toEqual({ crossSessionInbound: "hold" })
      child.kill("SIGINT")
      const { code, signal } = await exited
      // NodeRuntime's teardown ends an interrupted program with 0; it ended, which is what a host's Ctrl-C asks.
      expect({ code, signal }).toEqual({ code: 0, signal: null })
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  }, 60_000)

  it("with teardown, Ctrl-C during a wait ends the host with 130, not the default teardown's 0", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-mount-"))
    const sleeper = spawn("sleep", ["600"], { stdio: "ignore" })
    try {
      fs.mkdirSync(path.join(home, "sessions"))
      const record = recordText(sleeper.pid!, { procStart: startTimeOf(sleeper.pid!), sessionId: "waited", status: "busy" })
      fs.writeFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), record)
      const script = path.resolve(import.meta.dirname, "support/mount-host-teardown.mjs")
      const child = spawn(process.execPath, [script, "claude-peers", "--claude-home", home, "wait", "waited", "--until", "idle", "--json"], {
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("exit", (code, signal) => resolve({ code, signal }))
      )
      // The runtime has SIGINT once the host says so; the wait runs until the session is idle, which
      // it never becomes, so any time after that is alike.
      let stderr = ""
      await new Promise<void>((resolve) =>
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk
          if (stderr.includes("host: ready")) resolve()
        })
      )
      child.kill("SIGINT")
      expect(await exited).toEqual({ code: 130, signal: null })
    } finally {
      sleeper.kill("SIGKILL")
      fs.rmSync(home, { recursive: true, force: true })
    }
  }, 60_000)
})
