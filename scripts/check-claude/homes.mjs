/**
 * The check's phase for several Claude homes and transcripts: two homes of its own, each with real
 * sessions started under their own `CLAUDE_CONFIG_DIR` (one in a plain directory, one in a directory
 * whose name Claude Code cuts at 200 characters, one in a non-ASCII directory), each sent a prompt so
 * that it writes its transcript. Then claude-peers, run with neither home in its environment, must
 * find all three with `--all-homes` (from the processes' environments) and with `--claude-home A
 * --claude-home B`, each labelled with its home and addressed by its socket; `resolve` must name the
 * transcript Claude Code wrote; `settings get` over two homes is a usage error.
 *
 * Run alone: `node scripts/check-claude/homes.mjs` (after `npm run build`).
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { claudeEnvironment, ensureClaudeCode, writeClaudeHome } from "./claude-code.mjs"
import { makeDriver } from "./driver.mjs"
import { startMockApi } from "./mock-api.mjs"
import { isRunning } from "./processes.mjs"
import { makeRegistry } from "./registry.mjs"
import { makeTmux } from "./tmux.mjs"
import { CheckFailed, makeLog, parseJson, runProgram, waitFor } from "./tools.mjs"

/** The transcript Claude Code wrote for `sessionId` under `home`, found by looking, or undefined. */
const writtenTranscript = (home, sessionId) => {
  const projects = join(home, "projects")
  let entries = []
  try {
    entries = readdirSync(projects)
  } catch {
    return undefined
  }
  for (const entry of entries) {
    const file = join(projects, entry, `${sessionId}.jsonl`)
    try {
      if (statSync(file).isFile()) return file
    } catch {
      // not this project
    }
  }
  return undefined
}

/**
 * The phase. `env` is the check's session environment (its `CLAUDE_CONFIG_DIR` is replaced per
 * home), `directory` a scratch directory of the run, `commandPath` claude-peers' bin.
 */
export const checkHomes = async ({ claude, commandPath, directory, env, log }) => {
  const failures = []
  const expect = (ok, what) => {
    if (!ok) failures.push(what)
    log(`homes: ${ok ? "ok" : "FAILED"}: ${what}`)
  }
  const made = (path) => (mkdirSync(path, { recursive: true }), realpathSync(path))
  const homeA = made(join(directory, "homes", "a"))
  const homeB = made(join(directory, "homes", "b"))
  const plain = made(join(directory, "w", "plain"))
  let long = join(directory, "w", "long")
  while (long.length < 230) long = join(long, "a-rather-long-directory-name")
  long = made(long)
  const unicode = made(join(directory, "w", "naïve-日本-🙂"))
  writeClaudeHome({ home: homeA, workDirectories: [plain, long] })
  writeClaudeHome({ home: homeB, workDirectories: [unicode] })

  const tmuxes = []
  const sessions = []
  try {
    for (const [label, home, cwd] of [["home-a-plain", homeA, plain], ["home-a-long", homeA, long], ["home-b-unicode", homeB, unicode]]) {
      const homeEnv = { ...env, CLAUDE_CONFIG_DIR: home }
      const tmux = makeTmux({ socketPath: join(directory, `${label}.sock`), configFile: join(directory, `${label}.conf`), env: homeEnv })
      tmuxes.push(tmux)
      const registry = makeRegistry(home)
      const driver = makeDriver({ claude, log, registry, tmux })
      driver.start(label, cwd)
      sessions.push({ label, home, cwd, driver, registry })
    }
    for (const session of sessions) {
      const window = await session.driver.up(session.label)
      session.pid = window.pid
      await session.driver.submit(session.label, "hello")
    }
    for (const session of sessions) {
      const { sessionId } = session.registry.windowOf(session.label).record
      session.sessionId = sessionId
      session.transcript = await waitFor(`${session.label}'s transcript`, () => writtenTranscript(session.home, sessionId), { timeoutMs: 60_000 })
      log(`homes: ${session.label} writes ${session.transcript}`)
    }

    // claude-peers with neither home in its environment: only the processes' environments name them.
    const callerEnv = { PATH: process.env.PATH, HOME: made(join(directory, "caller-home")) }
    const peers = async (args) => {
      const run = await runProgram(process.execPath, [commandPath, ...args], { env: callerEnv })
      return { ...run, json: run.exit === 0 ? parseJson(run.stdout, `claude-peers ${args.join(" ")}`) : undefined }
    }
    const listsAll = (listed, how) => {
      for (const session of sessions) {
        const found = listed?.find((s) => s.pid === session.pid)
        expect(found !== undefined && found.home === session.home, `${how} lists ${session.label} with home ${session.home}`)
        expect(found !== undefined && found.address === `uds:${found.socketPath}`, `${how} addresses ${session.label} by its socket`)
      }
    }
    listsAll((await peers(["--all-homes", "list", "--json"])).json, "list --all-homes")
    listsAll((await peers(["--claude-home", homeA, "--claude-home", homeB, "list", "--json"])).json, "list --claude-home A --claude-home B")
    for (const session of sessions) {
      const resolved = (await peers(["--claude-home", session.home, "resolve", session.sessionId, "--json"])).json
      expect(resolved?.transcriptPath === session.transcript, `resolve names ${session.label}'s transcript (${resolved?.transcriptPath})`)
      expect(
        typeof resolved?.transcriptUpdatedAtMs === "number" && Math.abs(resolved.transcriptUpdatedAtMs - statSync(session.transcript).mtimeMs) < 1,
        `resolve gives ${session.label}'s transcript's last write`
      )
    }
    const settings = await peers(["--claude-home", homeA, "--claude-home", homeB, "settings", "get"])
    expect(settings.exit === 2, "settings get over two homes is a usage error (exit 2)")
  } finally {
    for (const tmux of tmuxes) tmux.killServer()
    // The sessions end with their panes; the home is removed only once none of them writes there.
    await waitFor("the homes' sessions to end", () => sessions.every((s) => s.pid === undefined || !isRunning(s.pid)), { timeoutMs: 30_000 })
      .catch((error) => log(`homes: ${error.message}`))
  }
  if (failures.length > 0) throw new CheckFailed(`several homes: ${failures.join("; ")}`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const log = makeLog()
  const repoRoot = join(import.meta.dirname, "..", "..")
  const directory = realpathSync(mkdtempSync(join(tmpdir().length <= 40 ? tmpdir() : "/tmp", "cph-")))
  const api = await startMockApi({ backgroundShellCommand: "sleep 100000" })
  const run = (name, mode = 0o755) => made(join(directory, name), mode)
  const made = (path, mode) => (mkdirSync(path, { recursive: true, mode }), path)
  const env = claudeEnvironment({
    base: process.env,
    home: run("unused-home"),
    fakeHome: run("fake-home"),
    runtimeDirectory: run("run", 0o700),
    temporaryDirectory: run("tmp"),
    apiUrl: api.url,
    marker: `CLAUDE_PEERS_CHECK_RUN=homes-${process.pid}`
  })
  const claude = ensureClaudeCode({ cacheDirectory: join(repoRoot, ".cache", "claude-code"), env, log })
  try {
    await checkHomes({ claude, commandPath: join(repoRoot, "bin", "claude-peers.js"), directory, env, log })
    log("homes: every check passed")
  } finally {
    api.close?.()
    rmSync(directory, { recursive: true, force: true, maxRetries: 5 })
  }
  process.exit(0)
}
