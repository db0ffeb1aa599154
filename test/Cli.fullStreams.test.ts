/**
 * Two of issue 26's LOW items on the standalone command: the error sentence on a full non-blocking
 * stderr is delivered once its reader reads (it was dropped), and `@effect/cli`'s built-in options
 * (`--wizard`, `--log-level`), which the command does not offer, are usage errors (exit 2, a sentence,
 * no stack trace), also with nobody reading stdout. Nothing is timed.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath, runCli } from "./support/cli.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-streams-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** A home whose `sessions` is a file: `list` fails with `io` (exit 7) and says so on stderr. */
const broken = path.join(tmp, "broken")
fs.mkdirSync(broken)
fs.writeFileSync(path.join(broken, "sessions"), "")

const { O_NONBLOCK, O_RDONLY, O_WRONLY } = fs.constants

/** Reads what the FIFO's reader end holds now. */
const drain = (fd: number, into: Array<Buffer>) => {
  const chunk = Buffer.alloc(65536)
  for (;;) {
    try {
      const n = fs.readSync(fd, chunk, 0, chunk.length, null)
      if (n === 0) return
      into.push(Buffer.from(chunk.subarray(0, n)))
    } catch (error) {
      if ((error as { code?: string }).code === "EAGAIN") return
      throw error
    }
  }
}

const hasPython = spawnSync("python3", ["-c", "import fcntl"]).status === 0

describe("the standalone command's streams", { timeout: 60_000 }, () => {
  it.skipIf(!hasPython)("on a full non-blocking stderr, the error sentence is still delivered once the reader reads", async () => {
    const fifo = path.join(tmp, "stderr-fifo")
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
    const reader = fs.openSync(fifo, O_RDONLY | O_NONBLOCK)
    const writer = fs.openSync(fifo, O_WRONLY | O_NONBLOCK)
    // Filled until the pipe takes no more.
    let filled = 0
    for (;;) {
      try {
        filled += fs.writeSync(writer, Buffer.alloc(4096, 0x2e))
      } catch {
        break
      }
    }
    // Node makes a child's standard streams blocking; Python puts O_NONBLOCK back on fd 2 and execs the command.
    const nonBlocking =
      "import fcntl, os, sys; fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK); os.execv(sys.argv[1], sys.argv[1:])"
    const child = spawn("python3", ["-c", nonBlocking, process.execPath, binPath, "--claude-home", broken, "list"], {
      env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: tmp },
      stdio: ["ignore", "ignore", writer]
    })
    fs.closeSync(writer)
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    // The command has tried to write its sentence into the full pipe by the time it would have ended.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const read: Array<Buffer> = []
    let code: number | null | undefined
    void exited.then((c) => (code = c))
    for (let i = 0; i < 400 && code === undefined; i++) {
      drain(reader, read)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    drain(reader, read)
    fs.closeSync(reader)
    const text = Buffer.concat(read).subarray(filled).toString("utf8")
    expect(code).toBe(7)
    expect(text).toMatch(/^claude-peers: .+\n$/)
  })

  for (const args of [["--wizard"], ["--log-level", "debug", "list"], ["list", "--log-level=debug"], ["list", "--wizard"]]) {
    it(`${args.join(" ")} is a usage error: exit 2, one sentence, no stack trace`, () => {
      const human = runCli(["--claude-home", broken, ...args])
      expect([human.status, human.stdout]).toEqual([2, ""])
      expect(human.stderr).toMatch(/^claude-peers: [^\n]+\n$/)
      const json = runCli(["--claude-home", broken, "--json", ...args])
      expect(json.status).toBe(2)
      expect((JSON.parse(json.stdout) as { error: { reason: string } }).error.reason).toBe("usage")
      // Nobody reading stdout: still exit 2, nothing but the sentence.
      const closed = spawnSync("sh", ["-c", `"$0" "$@" | true`, process.execPath, binPath, "--claude-home", broken, ...args], { encoding: "utf8" })
      expect(closed.stderr).not.toMatch(/EPIPE|at /)
    })
  }

  it("help lists none of the parser's options the command refuses, and names the ones it keeps", () => {
    for (const args of [[], ["--help"], ["list", "--help"], ["settings", "set", "--help"]]) {
      const help = runCli(args)
      expect([args.join(" "), help.status]).toEqual([args.join(" "), 0])
      expect(help.stdout).not.toMatch(/--wizard|--log-level/)
    }
    expect(runCli([]).stdout).toMatch(/--help \(-h\) after any command, --version, --completions bash\|fish\|sh\|zsh/)
  })
})
