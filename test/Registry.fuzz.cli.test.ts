/**
 * The registry parser against hostile files on the real OS, through the built command as a user runs
 * it (`node bin/claude-peers.js --claude-home DIR list|inspect|resolve …`, with and without `--json`):
 * the files of `support/hostileRecords.ts` on real processes (live sleepers, and pids above the
 * kernel's `pid_max`, which no process can have). Every run ends with the code its answer has (never
 * 1, never a hang), `inspect` prints every file with the contract's verdict and a short detail, and
 * human output is terminal-safe. A running `watch` outlives such records.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { normalizeName } from "../src/domain/Names.js"
import { binPath, startCli } from "./support/cli.js"
import {
  bytesOf,
  type Context,
  describePlan,
  expectedVerdict,
  fileNameOf,
  type FilePlan,
  filePlan,
  maxDetailLength,
  registryPlan,
  terminalUnsafe
} from "./support/hostileRecords.js"
import { recordText } from "./support/records.js"
import { killAndReap, linuxPidDomain, startSleeper, startTimeOf } from "./support/worlds.js"

/** The command under test; another build can be checked with `CLAUDE_PEERS_TEST_BIN=…/bin/claude-peers.js`. */
const bin = process.env.CLAUDE_PEERS_TEST_BIN ?? binPath

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-fuzz-cli-"))
const sleepers = Array.from({ length: 4 }, startSleeper)
afterAll(async () => {
  await Promise.all(sleepers.map(killAndReap))
  fs.rmSync(tmp, { recursive: true, force: true })
})
const here = linuxPidDomain()
/** Pids past the kernel's limit: no process can have them, so their records are dead for good. */
const deadPidBase = Number(fs.readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 1000

let homes = 0
/** Writes the planned files into a fresh Claude home: file i on sleeper i when live, on an impossible pid when dead. */
const build = (plans: ReadonlyArray<FilePlan>) => {
  const home = path.join(tmp, `home-${homes++}`)
  const sessions = path.join(home, "sessions")
  fs.mkdirSync(sessions, { recursive: true })
  const files = plans.map((plan, index) => {
    const live = plan.target === "live"
    const pid = live ? sleepers[index]!.pid : deadPidBase + index
    const context: Context = { pid, alive: live, startTime: live ? startTimeOf(pid) : "0", here }
    const name = fileNameOf(plan, pid, index)
    const bytes = bytesOf(plan, context, index)
    fs.writeFileSync(path.join(sessions, name), bytes)
    let record: Record<string, unknown> | null = null
    try {
      record = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Record<string, unknown>
    } catch {
      record = null
    }
    return { name, plan, record, expected: expectedVerdict(bytes, plan.nameKind === "canonical" ? pid : null, context), pid }
  })
  return { home, files }
}

interface Run {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the command to its end (killed after 30 s: a hang is a failure), without blocking the test's event loop. */
const run = (home: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "--claude-home", home, ...args], {
      env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("error", reject)
    child.once("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8") })
    })
  })

const firstUnsafe = (text: string): string | null => {
  const unsafe = terminalUnsafe.exec(text.replaceAll("\n", ""))
  return unsafe === null ? null : `U+${unsafe[0].codePointAt(0)!.toString(16)}`
}

const query = fc.constantFrom(
  { args: ["resolve", "00000000-0000-4000-8000-000000000000"], sessionId: "00000000-0000-4000-8000-000000000000" },
  { args: ["resolve", "00000000-0000-4000-8000-000000000001"], sessionId: "00000000-0000-4000-8000-000000000001" },
  { args: ["resolve", "--name", "app"], name: "app" },
  { args: ["resolve", "--name", "docs"], name: "docs" }
)
const command = fc.oneof(
  fc.constant({ args: ["list"] }),
  fc.constant({ args: ["inspect"] }),
  fc.constant({ args: ["policy", "--managed-dir", path.join(tmp, "no-managed-settings")] }),
  query
)

type Built = ReturnType<typeof build>
const liveFiles = (built: Built) => built.files.filter((f) => f.expected === "live")

describe("registry fuzz through the built command (Node layer)", () => {
  it("any record, any bytes, any command: its own exit code, every verdict, terminal-safe human output", { timeout: 900_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(registryPlan, command, fc.boolean(), async (plans, chosen, json) => {
        const built = build(plans)
        const args = json ? [...chosen.args, "--json"] : chosen.args
        const result = await run(built.home, args)
        const context = `${args.join(" ")}\n${built.files.map((f) => `${JSON.stringify(f.name)}: ${describePlan(f.plan)} → ${f.expected}`).join("\n")}\n${
          result.stderr.slice(0, 2000)
        }`
        expect(result.status, context).not.toBe(null)
        expect(result.status, context).not.toBe(1)
        // Human output, and JSON too: its strings carry the same characters as `\uXXXX` escapes.
        expect(firstUnsafe(result.stdout), context).toBe(null)
        expect(firstUnsafe(result.stderr), context).toBe(null)
        const sortedNames = built.files.map((f) => f.name).sort()
        switch (chosen.args[0]) {
          case "inspect": {
            expect(result.status, context).toBe(0)
            if (json) {
              const rows = JSON.parse(result.stdout) as Array<{ file: string; verdict: string; detail: string }>
              expect(rows.map((r) => path.basename(r.file)), context).toEqual(sortedNames)
              expect(rows.map((r) => [path.basename(r.file), r.verdict]), context).toEqual(
                sortedNames.map((name) => [name, built.files.find((f) => f.name === name)!.expected])
              )
              for (const row of rows) expect(row.detail.length, context).toBeLessThanOrEqual(maxDetailLength)
            } else {
              // A header, then one row per file: no verdict is left out.
              expect(result.stdout.trimEnd().split("\n"), context).toHaveLength(built.files.length + 1)
            }
            break
          }
          case "policy": {
            expect(result.status, context).toBe(0)
            const pids = liveFiles(built).map((f) => f.pid).sort((a, b) => a - b)
            if (json) expect((JSON.parse(result.stdout) as Array<{ pid: number }>).map((s) => s.pid), context).toEqual(pids)
            break
          }
          case "list": {
            expect(result.status, context).toBe(0)
            const pids = liveFiles(built).map((f) => f.pid).sort((a, b) => a - b)
            if (json) expect((JSON.parse(result.stdout) as Array<{ pid: number }>).map((s) => s.pid), context).toEqual(pids)
            else expect(result.stdout.trimEnd().split("\n"), context).toHaveLength(pids.length === 0 ? 1 : pids.length + 1)
            break
          }
          default: {
            const asked = chosen as { readonly sessionId?: string; readonly name?: string }
            const carriers = liveFiles(built).filter((f) =>
              asked.sessionId !== undefined
                ? f.record?.sessionId === asked.sessionId
                : typeof f.record?.name === "string" && normalizeName(f.record.name) === normalizeName(asked.name!)
            )
            expect([0, 3, 4, 8], context).toContain(result.status)
            expect(result.status === 3, context).toBe(carriers.length === 0)
            if (json) {
              const answer = JSON.parse(result.stdout) as { readonly error?: { readonly reason: string; readonly message: string } }
              if (result.status === 0) expect(answer, context).not.toHaveProperty("error")
              else expect(answer.error?.message.length, context).toBeLessThanOrEqual(2_000)
            }
          }
        }
        fs.rmSync(built.home, { recursive: true, force: true })
      }),
      { numRuns: 60 }
    )
  })

  it("a record nested 5,000 levels deep on a live pid (the issue's 10 KB file) and a 256 KiB one: every command answers", { timeout: 120_000 }, async () => {
    const sleeper = sleepers[0]!
    const home = path.join(tmp, `home-${homes++}`)
    fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
    const parked = recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), pidDomain: here, sessionId: "deep" })
    fs.writeFileSync(
      path.join(home, "sessions", `${sleeper.pid}.json`),
      `${parked.slice(0, -1)},"parkedJobId":${"[".repeat(5000)}${"]".repeat(5000)}}`
    )
    const other = sleepers[1]!
    fs.writeFileSync(
      path.join(home, "sessions", `${other.pid}.json`),
      recordText(other.pid, { procStart: startTimeOf(other.pid), pidDomain: here, sessionId: "other", name: "other" })
    )
    // Exactly 256 KiB: read, parsed, and an array, not a record.
    const depth = 128 * 1024
    fs.writeFileSync(path.join(home, "sessions", `${sleepers[2]!.pid}.json`), "[".repeat(depth) + "]".repeat(depth))
    for (const json of [[], ["--json"]]) {
      const inspect = await run(home, ["inspect", ...json])
      expect(inspect.status).toBe(0)
      expect(inspect.stdout).toMatch(/parked/)
      expect(inspect.stdout).toMatch(/malformed/)
      expect(await run(home, ["list", ...json])).toMatchObject({ status: 0, stdout: expect.stringContaining("other") })
      const refused = await run(home, ["resolve", "deep", ...json])
      expect(refused.status).toBe(3)
      expect(refused.stdout + refused.stderr).toMatch(/parked/)
      expect((await run(home, ["resolve", "other", ...json])).status).toBe(0)
    }
  })

  it("a running watch outlives hostile records written into its directory, and reports the next session", { timeout: 120_000 }, async () => {
    for (const json of [false, true]) {
      const home = path.join(tmp, `home-${homes++}`)
      const sessions = path.join(home, "sessions")
      fs.mkdirSync(sessions, { recursive: true })
      const { child, exited, stderr, stdout } = startCli(["--claude-home", home, "watch", "--interval", "200", ...(json ? ["--json"] : [])], bin)
      try {
        await new Promise((resolve) => setTimeout(resolve, 300))
        // Live pids, so that each is read and judged: parked, malformed, escapes in names, huge strings.
        fc.sample(filePlan.filter((plan) => plan.target === "live"), { numRuns: 12, seed: json ? 7 : 11 }).forEach((plan, index) => {
          const sleeper = sleepers[index % 3]!
          const context: Context = { pid: sleeper.pid, alive: true, startTime: startTimeOf(sleeper.pid), here }
          fs.writeFileSync(path.join(sessions, fileNameOf(plan, sleeper.pid, index)), bytesOf(plan, context, index))
        })
        // The issue's own: a record whose parkedJobId is nested 5,000 levels deep, on a live pid.
        const deep = sleepers[2]!
        const parked = recordText(deep.pid, { procStart: startTimeOf(deep.pid), pidDomain: here })
        fs.writeFileSync(path.join(sessions, `${deep.pid}.json`), `${parked.slice(0, -1)},"parkedJobId":${"[".repeat(5000)}${"]".repeat(5000)}}`)
        await new Promise((resolve) => setTimeout(resolve, 600))
        const last = sleepers[3]!
        fs.writeFileSync(
          path.join(sessions, `${last.pid}.json`),
          recordText(last.pid, { procStart: startTimeOf(last.pid), pidDomain: here, name: "after" })
        )
        const deadline = Date.now() + 20_000
        while (!stdout().includes("after") && Date.now() < deadline && child.exitCode === null) {
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        expect(child.exitCode, stderr()).toBe(null)
        expect(stdout(), stderr()).toContain("after")
        if (json) { for (const line of stdout().trimEnd().split("\n")) JSON.parse(line) }
        expect(firstUnsafe(stdout())).toBe(null)
      } finally {
        child.kill("SIGTERM")
      }
      expect(await exited).toBe(0)
      expect(stderr()).toBe("")
    }
  })
})
