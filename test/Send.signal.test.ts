/**
 * `claude-peers send` interrupted by a signal, on the real OS: the built command, a real live
 * session (a sleeper with its record), and the relay stand-in (`test/fixtures/relay-stand-in`). A
 * SIGINT after `SendMessage` reported the message in the inbox must still say so (exit 130, the
 * `delivery_failed` error with cause `interrupted` and `sendResult`), and the relay must be gone.
 * The signal is sent once the stand-in has handed the result over, so nothing here depends on timing.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath, startCli, waitUntil } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { isRunning, killAndReap, linuxPidDomain, startSleeper, startTimeOf } from "./support/worlds.js"

const standIn = path.join(import.meta.dirname, "fixtures", "relay-stand-in", "claude.mjs")
const limit = 20_000

describe.runIf(process.platform === "linux")("claude-peers send, interrupted", { timeout: 60_000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-send-signal-"))
  const sleeper = startSleeper()
  afterAll(async () => {
    await killAndReap(sleeper)
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  const home = path.join(tmp, "home")
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  fs.writeFileSync(path.join(home, "settings.json"), JSON.stringify({ crossSessionInbound: "accept" }))
  fs.writeFileSync(
    path.join(home, "sessions", `${sleeper.pid}.json`),
    recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: linuxPidDomain(), name: "app", cwd: tmp })
  )
  const sessionId = `00000000-0000-4000-8000-${String(sleeper.pid).padStart(12, "0")}`

  const interrupted = async (mode: string, name: string, args: ReadonlyArray<string>) => {
    const pidFile = path.join(tmp, `${name}.pid`)
    const handed = path.join(tmp, `${name}.handed`)
    const cli = startCli(["send", sessionId, "hello there", "--claude-home", home, ...args], undefined, {
      HOME: tmp,
      CLAUDE_PEERS_CLAUDE_BIN: standIn,
      STAND_IN_MODE: mode,
      STAND_IN_PID_FILE: pidFile,
      STAND_IN_RESULT_FILE: handed
    })
    const watched = mode === "stall-after-result" ? handed : pidFile
    await waitUntil(`the relay stand-in to write ${watched}`, limit, () => fs.existsSync(watched) && fs.readFileSync(watched, "utf8") !== "" || undefined)
    cli.child.kill("SIGINT")
    const code = await cli.exited
    return { code, stdout: cli.stdout(), stderr: cli.stderr(), relay: Number(fs.readFileSync(pidFile, "utf8")) }
  }

  it("after SendMessage's result: exit 130, and the error says the message is in the inbox", async () => {
    const { code, relay, stdout } = await interrupted("stall-after-result", "json", ["--json"])
    expect(code).toBe(130)
    const error = JSON.parse(stdout).error
    expect(error).toMatchObject({ reason: "delivery_failed", cause: "interrupted", session: { pid: sleeper.pid } })
    expect(error.sendResult).toContain("in that session's inbox")
    expect(error.message).toContain("sending it again would deliver it twice")
    expect(isRunning(relay)).toBe(false)
  })

  it("after SendMessage's result, with a stdout that cannot be written: exit 130, and stderr says the message is in the inbox", async () => {
    const pidFile = path.join(tmp, "full.pid")
    const handed = path.join(tmp, "full.handed")
    const full = fs.openSync("/dev/full", "w")
    const child = spawn(process.execPath, [binPath, "send", sessionId, "hello there", "--claude-home", home, "--json"], {
      env: {
        PATH: process.env.PATH,
        HOME: tmp,
        CLAUDE_PEERS_CLAUDE_BIN: standIn,
        STAND_IN_MODE: "stall-after-result",
        STAND_IN_PID_FILE: pidFile,
        STAND_IN_RESULT_FILE: handed
      },
      stdio: ["ignore", full, "pipe"]
    })
    fs.closeSync(full)
    let stderr = ""
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    await waitUntil(`the relay stand-in to write ${handed}`, limit, () => fs.existsSync(handed) || undefined)
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(stderr).toContain("could not be written to stdout")
    expect(stderr).toContain("SendMessage had reported it in the session's inbox, so sending it again would deliver it twice")
    expect(isRunning(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false)
  })

  it("before SendMessage was called: exit 130, the sentence on stderr, nothing said of an inbox", async () => {
    const { code, relay, stderr, stdout } = await interrupted("never", "human", [])
    expect(code).toBe(130)
    expect(stdout).toBe("")
    expect(stderr).toContain("is not known to have been delivered (interrupted)")
    expect(stderr).not.toContain("inbox")
    expect(isRunning(relay)).toBe(false)
  })
})
