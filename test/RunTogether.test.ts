/**
 * `scripts/run-together.mjs`, which `npm test` runs: a failing check must fail the run whatever the
 * tests say, its output must come after the tests' own and in one piece, and the tests' exit code
 * (or the signal that ended them) must come through when every check passed. Real npm scripts in a
 * scratch project, real child processes.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const script = path.resolve(import.meta.dirname, "..", "scripts", "run-together.mjs")
const project = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-run-together-"))
fs.writeFileSync(
  path.join(project, "package.json"),
  JSON.stringify({
    name: "scratch",
    private: true,
    scripts: { ok: "echo ok-out", bad: "echo bad-out && echo bad-err >&2 && exit 3", worse: "exit 4" }
  })
)
afterAll(() => fs.rmSync(project, { recursive: true, force: true }))

const runTogether = (...args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: project, encoding: "utf8", timeout: 60_000 })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

describe("run-together", { timeout: 120_000 }, () => {
  it("exits with the first failing script's code, after running every script and the command", () => {
    const run = runTogether("ok", "bad", "worse", "--", process.execPath, "-e", "console.log('tests-out')")
    expect(run.code).toBe(3)
    // The command's output first, then each script's, in the order they were named.
    const out = run.stdout
    expect(out.indexOf("tests-out")).toBeGreaterThanOrEqual(0)
    expect(out.indexOf("tests-out")).toBeLessThan(out.indexOf("ok-out"))
    expect(out.indexOf("ok-out")).toBeLessThan(out.indexOf("bad-out"))
    expect(run.stderr).toContain("bad-err")
  })

  it("exits with the command's code when every script passed, and names a signal that ended it", () => {
    expect(runTogether("ok", "--", process.execPath, "-e", "process.exit(5)").code).toBe(5)
    expect(runTogether("ok", "--", process.execPath, "-e", "process.exit(0)").code).toBe(0)
    const killed = runTogether("ok", "--", process.execPath, "-e", "process.kill(process.pid, 'SIGTERM')")
    expect(killed.code).toBe(128 + os.constants.signals.SIGTERM)
    expect(killed.stderr).toContain("ended by SIGTERM")
  })

  it("without a command, exits with the first failing script's code; a bare -- is a usage error", () => {
    expect(runTogether("ok").code).toBe(0)
    expect(runTogether("worse", "ok").code).toBe(4)
    const bare = runTogether("ok", "--")
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain("no command after --")
  })
})
