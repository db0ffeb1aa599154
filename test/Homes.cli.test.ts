/**
 * Several Claude homes through the built command, on the real machine: real processes that carry
 * their own `CLAUDE_CONFIG_DIR` (started as `claude`, so that `--all-homes` takes them for Claude
 * Code), their records in temporary homes, never the real `~/.claude`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, startTimeOf } from "./support/worlds.js"

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cp-homes-")))
const children: Array<ChildProcess> = []
afterAll(async () => {
  await Promise.all(children.map(killAndReap))
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** A process named `claude` whose environment names `home`, and its record there. */
const startInHome = (home: string, options: { readonly sessionId?: string; readonly name?: string } = {}) => {
  const child = spawn("bash", ["-c", "exec -a claude sleep 3600"], {
    env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: home, HOME: path.join(tmp, "nobody") },
    stdio: "ignore"
  })
  children.push(child)
  const pid = child.pid!
  // The process is `claude` once bash has exec'd.
  for (let i = 0; i < 2000 && !fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith("claude\0"); i++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
  }
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  fs.writeFileSync(path.join(home, "sessions", `${pid}.json`), recordText(pid, { procStart: startTimeOf(pid), ...options }))
  return pid
}

const homeA = path.join(tmp, "a")
const homeB = path.join(tmp, "b")
const callerHome = path.join(tmp, "caller")
fs.mkdirSync(path.join(callerHome, ".claude"), { recursive: true })
const env = { HOME: callerHome }

describe("several Claude homes (the command, real processes)", () => {
  const a = startInHome(homeA, { sessionId: "id-a", name: "alpha" })
  const b = startInHome(homeB, { sessionId: "id-b", name: "beta" })
  const twinA = startInHome(homeA, { sessionId: "twin", name: "twin-a" })
  const twinB = startInHome(homeB, { sessionId: "twin", name: "twin-b" })
  const mine = (listed: Array<{ pid: number }>) => listed.filter((s) => [a, b, twinA, twinB].includes(s.pid))

  it("--claude-home twice: every session once with its home, addressed by its socket; a link to a home is that home", () => {
    fs.symlinkSync(homeA, path.join(tmp, "a-link"))
    const run = runCli(["--claude-home", homeA, "--claude-home", homeB, "--claude-home", path.join(tmp, "a-link"), "list", "--json"], env)
    expect(run.status).toBe(0)
    const listed = JSON.parse(run.stdout) as Array<{ pid: number; home: string; address: string; socketPath: string }>
    expect(listed.map((s) => [s.pid, s.home])).toEqual(
      [[a, homeA], [b, homeB], [twinA, homeA], [twinB, homeB]].sort((x, y) => (x[0] as number) - (y[0] as number))
    )
    for (const s of listed) expect(s.address).toBe(`uds:${s.socketPath}`)
    const table = runCli(["--claude-home", homeA, "--claude-home", homeB, "list"], env)
    expect(table.stdout.split("\n")[0]).toMatch(/HOME$/)
    expect(table.stdout).toContain(homeB)
  })

  it("--all-homes finds both homes from the processes' environments", () => {
    const run = runCli(["--all-homes", "list", "--json"], env)
    expect(run.status).toBe(0)
    const listed = mine(JSON.parse(run.stdout) as Array<{ pid: number; home: string }>) as Array<{ pid: number; home: string }>
    expect(new Map(listed.map((s) => [s.pid, s.home]))).toEqual(new Map([[a, homeA], [b, homeB], [twinA, homeA], [twinB, homeB]]))
  })

  it("one home keeps today's output: no home key; a name is the address from the caller's own home", () => {
    const run = runCli(["list", "--json"], { HOME: callerHome, CLAUDE_CONFIG_DIR: homeA })
    const listed = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    expect(listed.map((s) => s.pid)).toEqual([a, twinA].sort((x, y) => x - y))
    for (const s of listed) {
      expect("home" in s).toBe(false)
      expect(s.address).toBe(s.name)
    }
    // From another home than the caller's, only the socket reaches a session.
    const other = JSON.parse(runCli(["--claude-home", homeA, "list", "--json"], env).stdout) as Array<Record<string, unknown>>
    for (const s of other) expect(s.address).toBe(`uds:${String(s.socketPath)}`)
  })

  it("resolve: an id carried in two homes is identity_mismatch naming both; one carried once resolves with its home", () => {
    const twin = runCli(["--claude-home", homeA, "--claude-home", homeB, "resolve", "twin", "--json"], env)
    expect(twin.status).toBe(4)
    const error = (JSON.parse(twin.stdout) as { error: { reason: string; message: string; candidates: Array<{ home: string }> } }).error
    expect(error.reason).toBe("identity_mismatch")
    expect(error.candidates.map((c) => c.home).sort()).toEqual([homeA, homeB])
    expect(error.message).toContain(homeA)
    expect(error.message).toContain(homeB)
    const one = runCli(["--all-homes", "resolve", "id-b", "--json"], env)
    expect(one.status).toBe(0)
    expect(JSON.parse(one.stdout)).toMatchObject({ pid: b, home: homeB, transcriptPath: null, transcriptUpdatedAtMs: null })
  })

  it("inspect and policy over several homes carry home; settings over several homes is a usage error", () => {
    const entries = JSON.parse(runCli(["--claude-home", homeA, "--claude-home", homeB, "inspect", "--json"], env).stdout) as Array<
      { file: string; home: string }
    >
    for (const entry of entries) expect(entry.home).toBe(path.dirname(path.dirname(entry.file)))
    const policies = JSON.parse(runCli(["--claude-home", homeA, "--claude-home", homeB, "policy", "--json"], env).stdout) as Array<
      { pid: number; home: string }
    >
    expect(new Map(policies.map((p) => [p.pid, p.home]))).toEqual(new Map([[a, homeA], [b, homeB], [twinA, homeA], [twinB, homeB]]))
    for (const args of [["settings", "get"], ["settings", "set", "hold"], ["settings", "reset"]]) {
      for (const homes of [["--claude-home", homeA, "--claude-home", homeB], ["--all-homes"]]) {
        const run = runCli([...homes, ...args], env)
        expect(run.status).toBe(2)
        expect(run.stderr).toContain("one Claude home")
      }
    }
    expect(fs.existsSync(path.join(homeA, "settings.json"))).toBe(false)
  })
})

describe("send over several homes (the command, real processes)", () => {
  // Homes of their own, so that the sessions above stay the only ones in homeA and homeB.
  const sendA = path.join(tmp, "send-a")
  const sendB = path.join(tmp, "send-b")
  const b = startInHome(sendB, { sessionId: "send-b", name: "send-beta" })
  startInHome(sendA, { sessionId: "send-twin", name: "send-twin-a" })
  startInHome(sendB, { sessionId: "send-twin", name: "send-twin-b" })
  // No relay can start: what the send resolved, and in which home, is what the failure names.
  const noRelay = { ...env, CLAUDE_PEERS_CLAUDE_BIN: path.join(tmp, "no-such-claude") }
  it("resolves the receiver in the home that holds it, and an id held in two homes is refused naming both", () => {
    for (const homes of [["--claude-home", sendA, "--claude-home", sendB], ["--all-homes"]]) {
      const run = runCli([...homes, "send", "send-b", "hello", "--json"], noRelay)
      const error = (JSON.parse(run.stdout) as { error: { reason: string; cause: string; session: { pid: number; home: string } } }).error
      expect({ status: run.status, reason: error.reason, cause: error.cause, pid: error.session.pid, home: error.session.home }).toEqual({
        status: 11,
        reason: "delivery_failed",
        cause: "relay_not_found",
        pid: b,
        home: sendB
      })
      const twin = runCli([...homes, "send", "send-twin", "hello", "--json"], noRelay)
      expect(twin.status).toBe(4)
      const refusal = (JSON.parse(twin.stdout) as { error: { reason: string; candidates: Array<{ home: string }> } }).error
      expect(refusal.candidates.map((c) => c.home).sort()).toEqual([sendA, sendB])
    }
  })
})
