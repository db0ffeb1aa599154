/**
 * The command as a user runs it: the built bin, a temporary Claude home, real processes. Checks
 * the contract's output shapes, exit codes, home resolution and terminal safety.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath, runCli } from "./support/cli.js"
import { recordText, sessionJsonKeys } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-cli-"))
const sleepers = [startSleeper(), startSleeper(), startSleeper()]
afterAll(async () => {
  await Promise.all(sleepers.map(killAndReap))
  fs.rmSync(tmp, { recursive: true, force: true })
})

let homes = 0
const makeHome = (records: Record<string, string | Buffer>): string => {
  const home = path.join(tmp, `home-${homes++}`)
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  for (const [name, text] of Object.entries(records)) fs.writeFileSync(path.join(home, "sessions", name), text)
  return home
}

const [a, b, c] = sleepers.map((s) => ({ pid: s.pid, procStart: startTimeOf(s.pid) })) as [
  { pid: number; procStart: string },
  { pid: number; procStart: string },
  { pid: number; procStart: string }
]

describe("claude-peers command", { timeout: 60_000 }, () => {
  const home = makeHome({
    [`${a.pid}.json`]: recordText(a.pid, { procStart: a.procStart, sessionId: "sess-a", name: "alpha", status: "busy" }),
    [`${b.pid}.json`]: recordText(b.pid, { procStart: b.procStart, sessionId: "sess-b", name: "beta", status: "shell" }),
    [`${c.pid}.json`]: recordText(c.pid, { procStart: `${c.procStart}0`, sessionId: "sess-c", name: "gamma" }),
    "999999.json": recordText(999999, { sessionId: "sess-dead", name: "ghost" }),
    "foo.json": "{}",
    "1.abc.key": "secret"
  })

  it("list --json: the live sessions as contract objects, sorted by pid", () => {
    const run = runCli(["--claude-home", home, "list", "--json"])
    expect(run.status).toBe(0)
    const sessions = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    expect(sessions.map((s) => s.pid)).toEqual([a.pid, b.pid].sort((x, y) => x - y))
    const alpha = sessions.find((s) => s.name === "alpha")!
    expect(Object.keys(alpha)).toEqual(sessionJsonKeys)
    expect(alpha).toMatchObject({ status: "busy", rawStatus: "busy", socketPath: `/tmp/cc-socks/${a.pid}.sock`, waitingFor: null })
    expect(sessions.find((s) => s.name === "beta")).toMatchObject({ status: "idle", rawStatus: "shell" })
    expect(run.stderr).toBe("")
  })

  it("list: a human table of the same sessions", () => {
    const run = runCli(["--claude-home", home, "list"])
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^PID\s+NAME\s+STATUS/)
    expect(run.stdout).toContain("alpha")
    expect(run.stdout).not.toContain("gamma")
  })

  it("inspect --json: every *.json entry with its verdict, sorted by file", () => {
    const run = runCli(["--claude-home", home, "inspect", "--json"])
    expect(run.status).toBe(0)
    const rows = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    expect(rows.map((r) => r.file)).toEqual([...rows.map((r) => r.file as string)].sort())
    const byName = Object.fromEntries(rows.map((r) => [path.basename(r.file as string), r]))
    expect(Object.keys(byName).sort()).toEqual([`${a.pid}.json`, `${b.pid}.json`, `${c.pid}.json`, "999999.json", "foo.json"].sort())
    expect(byName[`${c.pid}.json`]).toMatchObject({ verdict: "pid_reused", pid: c.pid, sessionId: "sess-c", name: "gamma" })
    expect(byName["999999.json"]).toMatchObject({ verdict: "dead", pid: 999999 })
    expect(byName["foo.json"]).toEqual({
      file: path.join(home, "sessions", "foo.json"),
      verdict: "not_a_record",
      detail: expect.any(String),
      pid: null,
      sessionId: null,
      name: null,
      transcriptPath: null,
      transcriptUpdatedAtMs: null
    })
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(["file", "verdict", "detail", "pid", "sessionId", "name", "transcriptPath", "transcriptUpdatedAtMs"])
    }
  })

  it("resolve: 0 with the session, 3 not_live with the reason, 4 identity_mismatch", () => {
    const ok = runCli(["--claude-home", home, "resolve", "sess-a", "--json"])
    expect(ok.status).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ pid: a.pid, name: "alpha" })
    const byName = runCli(["--claude-home", home, "resolve", "--name", "beta", "--json"])
    expect(byName.status).toBe(0)
    expect(JSON.parse(byName.stdout)).toMatchObject({ pid: b.pid })

    const reused = runCli(["--claude-home", home, "resolve", "sess-c", "--json"])
    expect(reused.status).toBe(3)
    const error = JSON.parse(reused.stdout) as { error: { reason: string; message: string; reasons: ReadonlyArray<unknown> } }
    expect(Object.keys(error)).toEqual(["error"])
    // The reason and the sentence first, then the error's evidence, encoded by its schema.
    expect(Object.keys(error.error)).toEqual(["reason", "message", "query", "reasons"])
    expect(error.error.reason).toBe("not_live")
    expect(error.error.message).toMatch(/pid reused/)
    expect(error.error).toMatchObject({ query: { sessionId: "sess-c", name: null } })
    expect(error.error.reasons).toEqual([
      { file: path.join(home, "sessions", `${c.pid}.json`), verdict: "pid_reused", detail: expect.stringMatching(/^pid reused/) }
    ])

    const human = runCli(["--claude-home", home, "resolve", "sess-dead"])
    expect(human.status).toBe(3)
    expect(human.stdout).toBe("")
    expect(human.stderr).toMatch(/dead/)

    const twins = makeHome({
      [`${a.pid}.json`]: recordText(a.pid, { procStart: a.procStart, sessionId: "s1", name: "twin" }),
      [`${b.pid}.json`]: recordText(b.pid, { procStart: b.procStart, sessionId: "s2", name: "twin" })
    })
    const mismatch = runCli(["--claude-home", twins, "resolve", "s1", "--json"])
    expect(mismatch.status).toBe(4)
    expect(JSON.parse(mismatch.stdout).error).toMatchObject({
      reason: "identity_mismatch",
      shared: "name",
      candidates: [
        { pid: a.pid, sessionId: "s1", name: "twin", socketPath: `/tmp/cc-socks/${a.pid}.sock`, kind: "interactive", jobId: null },
        { pid: b.pid, sessionId: "s2", name: "twin", socketPath: `/tmp/cc-socks/${b.pid}.sock`, kind: "interactive", jobId: null }
      ].sort((x) => (x.pid === a.pid ? -1 : 1))
    })
    const shared = runCli(["--claude-home", twins, "resolve", "s1", "--allow-shared-name", "--json"])
    expect(shared.status).toBe(0)
    expect(JSON.parse(shared.stdout)).toMatchObject({ pid: a.pid, address: `uds:/tmp/cc-socks/${a.pid}.sock` })
    expect(runCli(["--claude-home", twins, "resolve", "--name", "twin"]).status).toBe(4)
  })

  it("usage errors exit 2: unknown command, unknown option, resolve with neither or both", () => {
    expect(runCli(["--claude-home", home, "frobnicate"]).status).toBe(2)
    expect(runCli(["--claude-home", home, "list", "--frob"]).status).toBe(2)
    expect(runCli(["--claude-home", home, "resolve"]).status).toBe(2)
    expect(runCli(["--claude-home", home, "resolve", "sess-a", "--name", "alpha"]).status).toBe(2)
  })

  it("usage errors with --json also print the contract's error shape on stdout; an empty --claude-home is one", () => {
    const cases: Array<Array<string>> = [
      ["--claude-home", home, "resolve", "--json"],
      ["--claude-home", home, "settings", "set", "maybe", "--json"],
      ["--claude-home", home, "settings", "set", "hold", "--expect-revision", "not-a-revision", "--json"],
      ["--claude-home", home, "watch", "--interval", "0", "--json"],
      ["--claude-home", home, "list", "--bogus", "--json"],
      ["--claude-home", "", "list", "--json"]
    ]
    for (const args of cases) {
      const run = runCli(args)
      expect(run.status, args.join(" ")).toBe(2)
      const error = JSON.parse(run.stdout) as { error: { reason: string; message: string } }
      expect(error.error.reason, args.join(" ")).toBe("usage")
      expect(error.error.message.length).toBeGreaterThan(0)
    }
    const empty = path.join(tmp, "cwd-for-empty-home")
    fs.mkdirSync(empty)
    const run = spawnSync(process.execPath, [binPath, "--claude-home", "", "settings", "set", "hold"], { cwd: empty, encoding: "utf8" })
    expect(run.status).toBe(2)
    expect(fs.readdirSync(empty)).toEqual([])
  })

  it("SIGTERM ends a waiting update with 143 and nothing written; it (and SIGHUP) ends watch with 0", async () => {
    const held = makeHome({})
    // A live holder's lock (this test process): the update waits for it.
    const ownStart = startTimeOf(process.pid)
    fs.writeFileSync(path.join(held, ".settings.json.claude-peers.lock"), `${process.pid} ${ownStart}\n`)
    /** Sends SIGTERM once the command has printed something (its handlers are in place), or after `after` ms. */
    const exitOf = (homeDir: string, args: Array<string>, after: number, signal: NodeJS.Signals = "SIGTERM") =>
      new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [binPath, "--claude-home", homeDir, ...args], { stdio: ["ignore", "pipe", "pipe"] })
        let stdout = ""
        let stderr = ""
        const term = () => child.kill(signal)
        child.stdout.on("data", (d) => {
          stdout += d
          term()
        })
        child.stderr.on("data", (d) => (stderr += d))
        setTimeout(term, after)
        child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr }))
      })
    const update = await exitOf(held, ["settings", "set", "hold"], 1500)
    // 143 once the command is running; killed by the signal itself if it had not started yet.
    expect(update.code === 143 || update.signal === "SIGTERM").toBe(true)
    expect(update.code).not.toBe(0)
    expect(fs.existsSync(path.join(held, "settings.json"))).toBe(false)

    const watched = makeHome({
      [`${a.pid}.json`]: recordText(a.pid, { procStart: a.procStart, sessionId: "sess-a", name: "alpha" })
    })
    const watch = await exitOf(watched, ["watch", "--json"], 20_000)
    expect(JSON.parse(watch.stdout.split("\n")[0]!)).toMatchObject({ type: "appeared", session: { pid: a.pid } })
    expect(watch.code).toBe(0)
    expect(watch.stderr).toBe("")
    // A closed terminal (SIGHUP) is taken over as SIGTERM is, by every command that takes signals:
    // watch's first line comes after its handlers are in place.
    const hungUp = await exitOf(watched, ["watch", "--json"], 20_000, "SIGHUP")
    expect(hungUp).toMatchObject({ code: 0, signal: null, stderr: "" })
  })

  it("the Claude home: --claude-home, then CLAUDE_CONFIG_DIR (empty: the working directory), then ~/.claude", () => {
    const other = makeHome({})
    const fakeUser = path.join(tmp, "user")
    fs.mkdirSync(path.join(fakeUser, ".claude"), { recursive: true })
    fs.cpSync(path.join(home, "sessions"), path.join(fakeUser, ".claude", "sessions"), { recursive: true })
    const count = (args: Array<string>, env: NodeJS.ProcessEnv) => (JSON.parse(runCli([...args, "list", "--json"], env).stdout) as Array<unknown>).length
    expect(count(["--claude-home", other], { CLAUDE_CONFIG_DIR: home, HOME: fakeUser })).toBe(0)
    expect(count([], { CLAUDE_CONFIG_DIR: home, HOME: fakeUser })).toBe(2)
    expect(count([], { CLAUDE_CONFIG_DIR: other, HOME: fakeUser })).toBe(0)
    expect(count([], { HOME: fakeUser })).toBe(2)
    // Set but empty: the working directory is the home, as Claude Code takes it.
    const inDirectory = (cwd: string) =>
      (JSON.parse(
        spawnSync(process.execPath, [binPath, "list", "--json"], {
          cwd,
          encoding: "utf8",
          env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: "", HOME: fakeUser }
        }).stdout
      ) as Array<unknown>).length
    expect(inDirectory(home)).toBe(2)
    expect(inDirectory(other)).toBe(0)
  })

  it("a missing registry directory is an empty list, not an error", () => {
    const run = runCli(["--claude-home", path.join(tmp, "no-such-home"), "list", "--json"])
    expect(run.status).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual([])
  })

  it("an unreadable registry directory is an io error (exit 7) with the JSON error shape", () => {
    const broken = path.join(tmp, "broken-home")
    fs.mkdirSync(broken)
    fs.writeFileSync(path.join(broken, "sessions"), "not a directory")
    const run = runCli(["--claude-home", broken, "list", "--json"])
    expect(run.status).toBe(7)
    expect(JSON.parse(run.stdout).error.reason).toBe("io")
  })

  it("human output never echoes a record's control characters", () => {
    const evil = "\u001b]0;pwned\u0007\u001b[2J\r\u009b31m\u202e\u2066evil"
    const hostile = makeHome({
      [`${a.pid}.json`]: recordText(a.pid, { procStart: a.procStart, sessionId: `s\u001b[1m`, name: evil, cwd: `/tmp/\u0007x`, status: "\u001b[5mblink" }),
      [`${c.pid}.json`]: recordText(c.pid, { procStart: "0", sessionId: "dead\u001b[31m", name: evil })
    })
    const cases: Array<[Array<string>, string]> = [
      [["list"], "evil"],
      [["inspect"], "evil"],
      [["resolve", "--name", evil], "evil"],
      [["resolve", "dead\u001b[31m"], "pid reused"]
    ]
    for (const [args, shown] of cases) {
      const run = runCli(["--claude-home", hostile, ...args])
      const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
      expect(run.stdout, args.join(" ")).not.toMatch(control)
      expect(run.stderr, args.join(" ")).not.toMatch(control)
      expect(run.stdout + run.stderr, args.join(" ")).toContain(shown)
      // The escapes are shown, not dropped: the reader sees that something was there.
      expect(run.stdout + run.stderr, args.join(" ")).toMatch(/\\u\{1b\}|\\u001b/)
    }
    // JSON output escapes them as JSON does, and keeps the exact text.
    const json = JSON.parse(runCli(["--claude-home", hostile, "list", "--json"]).stdout) as Array<{ name: string }>
    expect(json[0]!.name).toBe(evil)
  })
})
