/**
 * Signals always work (issue 26, item 3): `watch` ends on SIGTERM and SIGINT, exit 0, even when its
 * stdout is a pipe whose reader stopped reading and a line is waiting to be written. Before the fix
 * the process sat in a blocking write that no signal handler could interrupt, until SIGKILL. Its
 * output is a FIFO the test opens and never reads; the session's name is long enough that its first
 * event fills the pipe. Nothing is timed: the test only asks that it ends, and how.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-stalled-"))
const sleeper = startSleeper()
afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(tmp, { recursive: true, force: true })
})

const home = path.join(tmp, "home")
fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
// Under the registry's 256 KiB limit, and several times a pipe's 64 KiB buffer.
fs.writeFileSync(
  path.join(home, "sessions", `${sleeper.pid}.json`),
  recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "n".repeat(200_000) })
)

let fifos = 0
/** `watch` writing to a FIFO that nobody reads, signalled once its output has filled the pipe. */
const stalledWatch = async (args: ReadonlyArray<string>, signal: NodeJS.Signals) => {
  const fifo = path.join(tmp, `fifo-${fifos++}`)
  expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
  // Held open and never read: the pipe fills and stays full.
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  const writer = fs.openSync(fifo, "w")
  const child = spawn(process.execPath, [binPath, "--claude-home", home, ...args], {
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: tmp },
    stdio: ["ignore", writer, "pipe"]
  })
  fs.closeSync(writer)
  let stderr = ""
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, sig) => resolve({ code, signal: sig }))
  )
  try {
    // The pipe is full once nothing more fits; the first event alone fills it.
    const full = () => pipeIsFull(fifo)
    for (let i = 0; i < 600 && !full(); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(full()).toBe(true)
    child.kill(signal)
    const ended = await Promise.race([exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 20_000))])
    return { ended, stderr }
  } finally {
    child.kill("SIGKILL")
    fs.closeSync(reader)
  }
}

/** Whether the FIFO's buffer is full: a non-blocking write of one byte is refused (EAGAIN). */
const pipeIsFull = (fifo: string) => {
  const probe = fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
  try {
    fs.writeSync(probe, "\n")
    return false
  } catch (error) {
    return (error as { code?: string }).code === "EAGAIN"
  } finally {
    fs.closeSync(probe)
  }
}

describe("watch behind a reader that stopped reading", { timeout: 90_000 }, () => {
  for (const args of [["watch", "--json"], ["--json", "watch"], ["watch"]]) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      it(`${args.join(" ")}: ${signal} ends it with exit 0`, async () => {
        const { ended, stderr } = await stalledWatch(args, signal)
        expect([ended, stderr]).toEqual([{ code: 0, signal: null }, ""])
      })
    }
  }
})
