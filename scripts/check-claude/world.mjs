/**
 * The world every check and bench that drives the real Claude Code runs in, made one way: a run
 * directory under a short temporary path (Claude Code's sockets go under it, and a socket path
 * stays under 108 bytes), a marker every process of the run carries (so that cleanup finds them),
 * the mock API, a Claude home whose work directories are trusted, the Claude Code under test, and
 * a tmux server. What cleanup must undo is written into `run` as it is made: `directory`, `marker`,
 * `daemonDirectory`, `api`, `tmux`.
 */
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, realpathSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { claudeEnvironment, ensureClaudeCode, writeClaudeHome } from "./claude-code.mjs"
import { startMockApi } from "./mock-api.mjs"
import { makeTmux } from "./tmux.mjs"

/**
 * `{ directory, home, works, env, claude, tmux }`: `directory(name, mode)` makes a directory of the
 * run; `works` are the work directories named by `workDirectories`, in that order.
 */
export const makeCheckWorld = async (run, { log, prefix, repoRoot, workDirectories = ["work"] }) => {
  run.directory = realpathSync(mkdtempSync(join(tmpdir().length <= 40 ? tmpdir() : "/tmp", prefix)))
  run.marker = `CLAUDE_PEERS_CHECK_RUN=${randomBytes(8).toString("hex")}`
  const directory = (name, mode = 0o755) => {
    const path = join(run.directory, name)
    mkdirSync(path, { recursive: true, mode })
    return path
  }
  const home = directory("home")
  const works = workDirectories.map((name) => directory(name))
  // Claude Code's background service keeps its sockets in /tmp/cc-daemon-<uid>/<first 8 hex of
  // sha256(the Claude home)>: this run's own, since the home is.
  run.daemonDirectory = join("/tmp", `cc-daemon-${process.getuid()}`, createHash("sha256").update(home).digest("hex").slice(0, 8))
  run.api = await startMockApi({ backgroundShellCommand: "sleep 100000" })
  // claudeEnvironment drops NODE_EXTRA_CA_CERTS and NODE_OPTIONS, and every ANTHROPIC_/CLAUDE_ variable of this shell.
  const env = claudeEnvironment({
    base: process.env,
    home,
    fakeHome: directory("fake-home"),
    runtimeDirectory: directory("run", 0o700),
    temporaryDirectory: directory("tmp"),
    apiUrl: run.api.url,
    marker: run.marker
  })
  const claude = ensureClaudeCode({ cacheDirectory: join(repoRoot, ".cache", "claude-code"), env, log })
  writeClaudeHome({ home, workDirectories: works })
  run.tmux = makeTmux({ socketPath: join(run.directory, "tmux.sock"), configFile: join(run.directory, "tmux.conf"), env })
  return { directory, home, works, env, claude, tmux: run.tmux }
}
