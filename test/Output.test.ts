/**
 * Lost output is not success: the built command, run by a real shell with its stdout on a full disk
 * (`> /dev/full`), closed (`>&-`), or a pipe whose reader went away (EPIPE); and a pipe that is full
 * and does not block (EAGAIN) loses nothing.
 *
 * - A full disk ends every command with exit 7 and one sentence on stderr, whatever its answer
 *   would have been; an update is still made, and the sentence says what the file now holds.
 * - A reader that went away is nobody left to tell: exit 0 (or the answer's own code).
 * - A pipe that does not block and is full (EAGAIN) takes the rest of the answer later, whole and in
 *   order, wherever the command's writing stopped.
 * - A closed stdout: Node itself reopens a closed descriptor 0, 1 or 2 on `/dev/null` (read-write)
 *   before any of the program runs, exactly as `stdio: "ignore"` or Python's `DEVNULL` hand it over,
 *   so the program cannot tell `>&-` from `>/dev/null`, and answers as it does to `>/dev/null`. What
 *   this file pins is the danger the closed descriptor would bring otherwise: nothing the command
 *   prints ever lands in a file it opens (the settings file, its lock or its temporary file).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, linuxPidDomain, startSleeper, startTimeOf } from "./support/worlds.js"

/** The command under test; another build can be checked with `CLAUDE_PEERS_TEST_BIN=…/bin/claude-peers.js`. */
const bin = process.env.CLAUDE_PEERS_TEST_BIN ?? binPath

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-output-"))
const sleeper = startSleeper()
afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(tmp, { recursive: true, force: true })
})

const sessionId = "6f1c0000-0000-4000-8000-000000000001"
let homes = 0
/** A Claude home with one live session (the sleeper) and a settings file. */
const makeHome = () => {
  const home = path.join(tmp, `home-${homes++}`)
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  fs.writeFileSync(
    path.join(home, "sessions", `${sleeper.pid}.json`),
    recordText(sleeper.pid, { sessionId, name: "app", procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain() })
  )
  fs.writeFileSync(path.join(home, "settings.json"), "{\n  \"model\": \"opus\"\n}\n", { mode: 0o600 })
  return home
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

/** `sh -c 'exec node BIN --claude-home HOME ARGS… REDIRECTION'`: the shell makes the redirection, as a user's would. */
const inShell = (home: string, args: ReadonlyArray<string>, redirection: string) => {
  const command = [process.execPath, bin, "--claude-home", home, ...args].map(quote).join(" ")
  const result = spawnSync("sh", ["-c", `exec ${command} ${redirection}`], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
    timeout: 30_000,
    // spawnSync's default (1 MiB) would end a longer answer's command and keep what came before.
    maxBuffer: 64 * 1024 * 1024
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Every command, in both formats, with the exit code it has when its output can be written. */
const commands: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly status: number }> = [
  ["list"],
  ["inspect"],
  ["resolve", sessionId],
  ["settings", "get"],
  ["settings", "set", "hold"],
  ["settings", "reset"],
  ["policy"]
].flatMap((args) => [{ args, status: 0 }, { args: [...args, "--json"], status: 0 }]).concat([
  { args: ["resolve", "--name", "app", "--json"], status: 0 },
  { args: ["resolve", "no-such-session"], status: 3 },
  { args: ["resolve", "no-such-session", "--json"], status: 3 }
])

const lostOutput = /^claude-peers: the output could not be written to stdout \(ENOSPC\)[,;] [^\n]+\n$/

describe("stdout on a full disk (> /dev/full)", { timeout: 120_000 }, () => {
  it("every command exits 7 with one sentence on stderr, never 0", () => {
    const home = makeHome()
    for (const { args } of commands) {
      const result = inShell(home, args, "> /dev/full")
      // A human refusal goes to stderr and needs no stdout: only --json or a success prints there.
      const printsOnStdout = args.includes("--json") || !args.includes("no-such-session")
      if (!printsOnStdout) {
        expect(result.status, args.join(" ")).toBe(3)
        continue
      }
      expect(result.status, args.join(" ")).toBe(7)
      expect(result.stderr, args.join(" ")).toMatch(lostOutput)
    }
  })

  it("settings set: the update is made, and the sentence says what the file now holds", () => {
    const home = makeHome()
    const result = inShell(home, ["settings", "set", "accept"], "> /dev/full")
    expect(result.status).toBe(7)
    const text = fs.readFileSync(path.join(home, "settings.json"), "utf8")
    expect(text).toBe("{\n  \"model\": \"opus\",\n  \"crossSessionInbound\": \"accept\"\n}\n")
    expect(result.stderr).toMatch(/; the update itself was made: .*settings\.json now holds crossSessionInbound "accept" \(revision [0-9a-f]{64}\)\n$/)
    expect(fs.readdirSync(home).sort()).toEqual(["sessions", "settings.json"])
  })

  it("a refusal with --json: exit 7, and stderr still says what the answer was", () => {
    const result = inShell(makeHome(), ["resolve", "no-such-session", "--json"], "> /dev/full")
    expect(result.status).toBe(7)
    expect(result.stderr).toMatch(/; the answer was the error not_live: no live session has session id "no-such-session"/)
  })

  it("watch ends with exit 7 at its first event that cannot be written, whether at start or later", async () => {
    const atStart = inShell(makeHome(), ["watch", "--json", "--interval", "200"], "> /dev/full")
    expect(atStart.status).toBe(7)
    expect(atStart.stderr).toMatch(lostOutput)

    const home = path.join(tmp, `home-${homes++}`)
    fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
    const command = [process.execPath, bin, "--claude-home", home, "watch", "--interval", "200"].map(quote).join(" ")
    const child = spawn("sh", ["-c", `exec ${command} > /dev/full`], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    try {
      // Nothing to print yet, so nothing is lost yet: it runs, until its directory watch is in place
      // (its first read is done by then), so that the record below comes later, not at start.
      const watching = () => {
        try {
          return fs.readdirSync(`/proc/${child.pid}/fd`).some((fd) => fs.readlinkSync(`/proc/${child.pid}/fd/${fd}`) === "anon_inode:inotify")
        } catch {
          return false
        }
      }
      for (let waited = 0; !watching() && child.exitCode === null && waited < 10_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(child.exitCode).toBe(null)
      expect(watching()).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(child.exitCode).toBe(null)
      fs.writeFileSync(
        path.join(home, "sessions", `${sleeper.pid}.json`),
        recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain() })
      )
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 20_000))])
      expect(code).toBe(7)
      expect(stderr).toMatch(lostOutput)
    } finally {
      child.kill("SIGKILL")
    }
  })
})

describe("a reader that went away (EPIPE)", { timeout: 120_000 }, () => {
  /** The pipe's only reader is closed before the command can have started, so its first write fails with EPIPE. */
  const withReaderGone = (home: string, args: ReadonlyArray<string>) =>
    new Promise<{ readonly status: number | null; readonly stderr: string }>((resolve) => {
      const command = [process.execPath, bin, "--claude-home", home, ...args].map(quote).join(" ")
      const child = spawn("sh", ["-c", `exec ${command}`], { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH, HOME: "/nonexistent-home" } })
      child.stdout.destroy()
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.once("close", (status) => resolve({ status, stderr }))
    })

  it("is not an error: every command ends with its own exit code and nothing on stderr", async () => {
    const home = makeHome()
    for (const { args, status } of commands) {
      const result = await withReaderGone(home, args)
      expect([args.join(" "), result.status], result.stderr).toEqual([args.join(" "), status])
      // A human refusal is said on stderr, whoever reads stdout.
      if (status === 0 || args.includes("--json")) expect(result.stderr, args.join(" ")).toBe("")
    }
  })

  it("settings set with nobody reading is made, exit 0", async () => {
    const home = makeHome()
    expect((await withReaderGone(home, ["settings", "set", "refuse"])).status).toBe(0)
    expect(fs.readFileSync(path.join(home, "settings.json"), "utf8")).toContain("\"crossSessionInbound\": \"refuse\"")
  })
})

describe("a full pipe that does not block (EAGAIN)", { timeout: 120_000 }, () => {
  /** Above the largest `pid_max` Linux allows: no process has these pids. */
  const firstDeadPid = 4_194_305

  /** The name of the large home's `i`-th record: mostly four-byte characters, so that the pieces' ends fall inside some. */
  const largeName = (i: number) => `é-${"\u{1f600}".repeat(20 + (i % 7))}-${i}`

  /** `makeHome` and `count` stale records named by `largeName`. */
  const makeLargeHome = (count: number) => {
    const home = makeHome()
    for (let i = 0; i < count; i++) {
      const pid = firstDeadPid + i
      fs.writeFileSync(path.join(home, "sessions", `${pid}.json`), recordText(pid, { name: largeName(i) }))
    }
    return home
  }

  /**
   * Whether the first 64 KiB the command encodes of a line end before a character that would not
   * fit whole (it encodes whole characters only): its first JSON piece is longer, and that is the
   * write the full pipe refuses in part, so the rest is handed over from inside that character.
   */
  const firstWriteEndsEarly = (line: string) => (Buffer.from(`${line}\n`, "utf8")[64 * 1024]! & 0xc0) === 0x80

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  /**
   * Node's `spawn` hands a child blocking stdio, and creating `process.stdout` on a pipe makes it
   * non-blocking again: this preload does that, as a parent sharing a non-blocking pipe would. It
   * also leaves a file (`HANDED_OVER`) when the command first hands output to `process.stdout`,
   * which it does only once a write found the pipe full.
   */
  const nonBlockingStdout = path.join(tmp, "non-blocking-stdout.cjs")
  fs.writeFileSync(
    nonBlockingStdout,
    `const stdout = process.stdout
const write = stdout.write
stdout.write = function (...args) {
  stdout.write = write
  require("node:fs").writeFileSync(process.env.HANDED_OVER, "")
  return write.apply(this, args)
}
`
  )

  /**
   * The command with its stdout on a FIFO that does not block and is full of `#` but for `room`
   * bytes, read only once the command has handed output over to `process.stdout` (so its writes
   * certainly found the pipe full).
   */
  const throughFullPipe = async (home: string, args: ReadonlyArray<string>, room: number) => {
    const fifo = path.join(tmp, `fifo-${homes++}`)
    execFileSync("mkfifo", [fifo])
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const writer = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
    try {
      let filled = 0
      try {
        for (;;) filled += fs.writeSync(writer, Buffer.alloc(4096, "#"))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error
      }
      filled -= fs.readSync(reader, Buffer.alloc(room))
      const handedOver = `${fifo}.handed-over`
      const child = spawn(process.execPath, ["--require", nonBlockingStdout, bin, "--claude-home", home, ...args], {
        stdio: ["ignore", writer, "pipe"],
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home", HANDED_OVER: handedOver }
      })
      fs.closeSync(writer)
      let stderr = ""
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      const exited = new Promise<number | null>((resolve) => child.once("close", resolve))
      const exitedEarly = exited.then(() => "exited" as const)
      while (!fs.existsSync(handedOver)) {
        // A command that ends without handing anything over was never refused by the full pipe.
        if ((await Promise.race([exitedEarly, sleep(10)])) === "exited" && !fs.existsSync(handedOver)) break
      }
      expect(fs.existsSync(handedOver)).toBe(true)
      const chunks: Array<Buffer> = []
      const buffer = Buffer.alloc(64 * 1024)
      for (;;) {
        try {
          const n = fs.readSync(reader, buffer)
          if (n === 0) break
          chunks.push(Buffer.from(buffer.subarray(0, n)))
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error
          await sleep(5)
        }
      }
      const read = Buffer.concat(chunks)
      return { status: await exited, filler: read.subarray(0, filled).toString("latin1"), stdout: read.subarray(filled).toString("utf8"), stderr }
    } finally {
      fs.closeSync(reader)
    }
  }

  it("a line of many pieces arrives whole and in order, the rest handed over where the pipe was full", async () => {
    // More pieces than Node's limit of listeners per event (10) are handed over.
    const count = 3000
    const home = makeLargeHome(count)
    const names = Array.from({ length: count }, (_, i) => largeName(i))
    // Where the first write ends depends on the length of all that comes before (the temporary
    // directory's name, the sleeper's pid): the first record's name is lengthened until that end
    // falls inside a character, worked out on the output the command gave. Lengthened by up to
    // more than a row, the end passes over a name's four-byte characters.
    const firstRun = inShell(home, ["inspect", "--json"], "")
    expect(firstRun.status).toBe(0)
    const first = firstRun.stdout.trimEnd()
    const at = first.indexOf(names[0]!) + names[0]!.length
    const padding = Array.from({ length: 512 }, (_, n) => n).find((n) => firstWriteEndsEarly(first.slice(0, at) + "x".repeat(n) + first.slice(at)))
    expect(padding).toBeDefined()
    names[0] += "x".repeat(padding!)
    fs.writeFileSync(path.join(home, "sessions", `${firstDeadPid}.json`), recordText(firstDeadPid, { name: names[0] }))
    const expected = inShell(home, ["inspect", "--json"], "").stdout
    expect(Buffer.byteLength(expected)).toBeGreaterThan(4 * 64 * 1024)
    // Room for two pages: the first piece is written in part before the pipe is full.
    expect(firstWriteEndsEarly(expected.trimEnd())).toBe(true)
    const result = await throughFullPipe(home, ["inspect", "--json"], 8192)
    expect([result.status, result.stderr]).toEqual([0, ""])
    expect(result.filler).toMatch(/^#+$/)
    expect(result.stdout).toBe(expected)
    // Not only the same as another run of the command: every name as it was written, none cut.
    expect(result.stdout.includes("\ufffd")).toBe(false)
    const printed = (JSON.parse(result.stdout) as Array<{ name: string }>).map((row) => row.name)
    expect(printed.filter((name) => name !== "app").sort()).toEqual(names.sort())
  })

  it("a short line that finds the pipe full arrives whole after what was in it", async () => {
    const home = makeHome()
    for (const args of [["list", "--json"], ["inspect"]]) {
      const expected = inShell(home, args, "").stdout
      const result = await throughFullPipe(home, args, 0)
      expect([args.join(" "), result.status, result.stderr]).toEqual([args.join(" "), 0, ""])
      expect(result.filler).toMatch(/^#+$/)
      expect(result.stdout).toBe(expected)
    }
    // A usage error's JSON too: it is reported after the program has ended (was: exit 1, a stack trace).
    const usage = ["--json", "no-such-command"]
    const expected = inShell(home, usage, "")
    expect(expected.status).toBe(2)
    const result = await throughFullPipe(home, usage, 0)
    expect([result.status, result.stderr]).toEqual([2, expected.stderr])
    expect(result.filler).toMatch(/^#+$/)
    expect(result.stdout).toBe(expected.stdout)
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { reason: "usage" } })
  })
})

describe("stdout closed (>&-)", { timeout: 120_000 }, () => {
  it("answers as to /dev/null, and nothing it prints lands in a file it opens", () => {
    const home = makeHome()
    const before = fs.readFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), "utf8")
    for (const { args, status } of commands) {
      const closed = inShell(home, args, ">&-")
      expect([args.join(" "), closed.status], closed.stderr).toEqual([args.join(" "), status])
    }
    // The last update was a reset: the file is the document as it was, without the member, and
    // nothing of the command's output (a JSON object, a "settings file" line) got into it.
    expect(fs.readFileSync(path.join(home, "settings.json"), "utf8")).toBe("{\n  \"model\": \"opus\"\n}\n")
    expect(fs.readdirSync(home).sort()).toEqual(["sessions", "settings.json"])
    expect(fs.readFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), "utf8")).toBe(before)

    const set = inShell(home, ["settings", "set", "accept", "--json"], ">&-")
    expect(set.status).toBe(0)
    expect(fs.readFileSync(path.join(home, "settings.json"), "utf8")).toBe(
      "{\n  \"model\": \"opus\",\n  \"crossSessionInbound\": \"accept\"\n}\n"
    )
  })

  it("with stderr closed too, the exit code still tells", () => {
    const home = makeHome()
    expect(inShell(home, ["resolve", "no-such-session"], ">&- 2>&-").status).toBe(3)
    expect(inShell(home, ["list"], "> /dev/full 2>&-").status).toBe(7)
  })
})
