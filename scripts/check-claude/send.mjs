/**
 * The send phase of `npm run check:claude`: real receivers in the check's tmux server on its mock
 * API (policy on their command line: accept, hold, refuse), a message sent to each with the built
 * claude-peers relay, and each receiver's own transcript read to see what arrived:
 * accept → delivered and in the transcript exactly once; hold → held; refuse → refused, and
 * nothing arrived. Runs alone too: `node scripts/check-claude/send.mjs` (its own home and tmux).
 *
 * Each message is sent with the built `claude-peers send --json`, its relay the Claude Code under test.
 */
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { claudeEnvironment, ensureClaudeCode, writeClaudeHome } from "./claude-code.mjs"
import { makeDriver } from "./driver.mjs"
import { startMockApi } from "./mock-api.mjs"
import { killMarked } from "./processes.mjs"
import { makeRegistry } from "./registry.mjs"
import { makeTmux } from "./tmux.mjs"
import { CheckFailed, makeLog, runProgram, waitFor } from "./tools.mjs"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

/**
 * One send with the built command, `claude-peers send SESSION_ID MESSAGE --allow-hold --json`:
 * `{ outcome, text, predicted }` for a receipt, `{ outcome: "refused", predicted }` for a refusal
 * predicted before relaying (nothing relayed), or `{ failed: reason or cause, detail }`, with its wall time.
 */
const sendWith = async ({ claude, env, home }, sessionId, message) => {
  const started = Date.now()
  const run = await runProgram(process.execPath, [
    join(repoRoot, "bin", "claude-peers.js"),
    "--claude-home",
    home,
    "send",
    sessionId,
    message,
    "--allow-hold",
    "--json"
  ], {
    env: { ...env, CLAUDE_PEERS_CLAUDE_BIN: claude },
    timeoutMs: 120_000
  })
  const ms = Date.now() - started
  let printed
  try {
    printed = JSON.parse(run.stdout)
  } catch {
    return { failed: `exit ${run.exit}`, detail: run.stderr.trim().split("\n").at(-1) ?? "", ms }
  }
  if (printed.error === undefined) return { outcome: printed.outcome, text: printed.receipt.text, predicted: printed.predicted, ms }
  if (printed.error.reason === "inbound_refused") {
    return { outcome: "refused", text: printed.error.message, predicted: printed.error.predicted, relayed: false, ms }
  }
  return { failed: printed.error.cause ?? printed.error.reason, detail: printed.error.message, ms }
}

const transcriptOf = (home, record) => join(home, "projects", record.cwd.replace(/[^A-Za-z0-9]/g, "-"), `${record.sessionId}.jsonl`)

/** How many transcript lines hold `message` as a message that reached the receiver's conversation. */
const arrivals = (home, record, message) => {
  const file = transcriptOf(home, record)
  if (!existsSync(file)) return 0
  return readFileSync(file, "utf8").split("\n").filter((line) => {
    if (!line.includes(message)) return false
    try {
      const entry = JSON.parse(line)
      return entry.type === "user"
    } catch {
      return false
    }
  }).length
}

/**
 * Starts the three receivers in `work`, sends to each and judges. Returns the rows (one per
 * receiver) and whether every one passed.
 */
export const checkSend = async ({ claude, driver, env, home, log, work }) => {
  const policies = ["accept", "hold", "refuse"]
  for (const policy of policies) driver.start(`send-${policy}`, work, ["--settings", JSON.stringify({ crossSessionInbound: policy })])
  const receivers = Object.fromEntries(await Promise.all(policies.map(async (policy) => [policy, await driver.up(`send-${policy}`)])))
  const expected = { accept: "delivered", hold: "held", refuse: "refused" }
  const rows = []
  for (const policy of policies) {
    const { record } = receivers[policy]
    const message = `claude-peers send check ${policy} ${randomBytes(4).toString("hex")}`
    const result = await sendWith({ claude, env, home }, record.sessionId, message)
    // The receiver writes its transcript as it takes the message in; a held or refused one must never arrive.
    if (policy === "accept") {
      await waitFor(`the message in ${policy}'s transcript`, () => arrivals(home, record, message) > 0, { timeoutMs: 20_000 }).catch(() => false)
    } else {
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 3000))
    }
    const arrived = arrivals(home, record, message)
    const outcome = result.outcome ?? `failed: ${result.failed}`
    // `policy`'s prediction must be the receipt: a send is never predicted one way and reported another.
    const predictedRight = result.predicted?.effective === { delivered: "accept", held: "hold", refused: "refuse" }[outcome]
    const ok = outcome === expected[policy] && arrived === (policy === "accept" ? 1 : 0) && predictedRight
    rows.push({ policy, outcome, arrived, ms: result.ms, ok })
    log(
      `send to ${policy}: ${outcome} in ${result.ms} ms, ${arrived} arrival(s) in its transcript: ${ok ? "ok" : "WRONG"} (${
        (result.text ?? result.detail ?? "").slice(0, 160)
      })`
    )
  }
  process.stdout.write(
    `\n## send\n\n| receiver policy | outcome | arrivals in its transcript | time | judgement |\n| --- | --- | --- | --- | --- |\n${
      rows.map((row) => `| ${row.policy} | ${row.outcome} | ${row.arrived} | ${row.ms} ms | ${row.ok ? "agrees" : "WRONG"} |`).join("\n")
    }\n`
  )
  return { rows, ok: rows.every((row) => row.ok) }
}

// Alone: its own run directory, home, mock API and tmux server, removed at the end.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const log = makeLog()
  const run = { directory: null, marker: null, tmux: null, api: null }
  process.on("exit", () => {
    try {
      run.tmux?.killServer()
    } catch {
      // gone
    }
    if (run.marker !== null) killMarked(run.marker)
    run.api?.close()
    if (run.directory !== null) rmSync(run.directory, { recursive: true, force: true })
  })
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))
  const main = async () => {
    if (!existsSync(join(repoRoot, "dist", "node.js"))) throw new CheckFailed("claude-peers is not built: run `npm run build` first")
    run.directory = realpathSync(mkdtempSync(join(tmpdir().length <= 40 ? tmpdir() : "/tmp", "cps-")))
    run.marker = `CLAUDE_PEERS_CHECK_RUN=${randomBytes(8).toString("hex")}`
    const directory = (name, mode = 0o755) => {
      const path = join(run.directory, name)
      mkdirSync(path, { recursive: true, mode })
      return path
    }
    const home = directory("home")
    const work = directory("work")
    run.api = await startMockApi({ backgroundShellCommand: "sleep 100000" })
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
    writeClaudeHome({ home, workDirectories: [work] })
    run.tmux = makeTmux({ socketPath: join(run.directory, "tmux.sock"), configFile: join(run.directory, "tmux.conf"), env })
    const registry = makeRegistry(home)
    const driver = makeDriver({ tmux: run.tmux, registry, claude, log })
    const { ok } = await checkSend({ claude, driver, env, home, log, registry, work })
    return ok ? 0 : 1
  }
  main().then((code) => process.exit(code), (error) => {
    log(`the send check failed: ${error?.stack ?? error}`)
    process.exit(2)
  })
}
