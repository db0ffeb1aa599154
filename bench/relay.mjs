#!/usr/bin/env node
/**
 * What a send costs, in the same rounds: `node -e 0`; a bare Claude Code start (`claude
 * --version`); a `claude -p` turn on the check's local API stand-in; a relay run through the built
 * library to an address with no session behind it (Claude Code's start, the three scripted turns
 * and its exit; no notice rounds); and `claude-peers send` of a short message to a live receiver
 * (a real interactive Claude Code in a private tmux server, on the same stand-in, whose
 * `--settings` accept), end to end: the command's start, resolve, policy, the relay with its notice
 * rounds (`noticeRounds` × `noticeRoundDelay`), and the confirmation; and the same command to a
 * receiver whose `--settings` refuse, which answers before any relay starts: the command's own part.
 *
 * Not a row of `npm run bench` (bench/run.mjs): that one times command lines over made-up
 * registries in tens of rounds against ratio targets, while this needs the 400 MB Claude Code of
 * `npm run check:claude` (`.cache/claude-code/`, installed if missing), tmux and a live session,
 * and a round takes seconds. Needs `npm run build`. `NODE_EXTRA_CA_CERTS` is unset for every timed
 * run; the machine's load (`uptime`) is printed before and after, since it moves these numbers.
 * `node bench/relay.mjs [rounds]` (default 5).
 */
import { Duration, Effect, Either } from "effect"
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeDriver } from "../scripts/check-claude/driver.mjs"
import { killMarked } from "../scripts/check-claude/processes.mjs"
import { makeRegistry } from "../scripts/check-claude/registry.mjs"
import { runProgram } from "../scripts/check-claude/tools.mjs"
import { makeCheckWorld } from "../scripts/check-claude/world.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const { makeRelay } = await import(join(root, "dist", "node.js"))
const rounds = Number(process.argv[2] ?? 5)
const log = (message) => process.stderr.write(`[bench relay] ${message}\n`)
const uptime = () => spawnSync("uptime", { encoding: "utf8" }).stdout.trim()

const run = { directory: null, marker: null, daemonDirectory: null, tmux: null, api: null }
process.on("exit", () => {
  try {
    run.tmux?.killServer()
  } catch {
    // gone
  }
  if (run.marker !== null) killMarked(run.marker)
  run.api?.close()
  for (const directory of [run.directory, run.daemonDirectory]) {
    if (directory !== null) rmSync(directory, { recursive: true, force: true })
  }
})
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))

const { claude, env, home, tmux, works: [work] } = await makeCheckWorld(run, { prefix: "cpb-", repoRoot: root, log })
const driver = makeDriver({ tmux, registry: makeRegistry(home), claude, log })
const receiverOf = async (label, policy) => {
  driver.start(label, work, ["--name", label, "--settings", JSON.stringify({ crossSessionInbound: policy })])
  return (await driver.up(label)).record
}
const [receiver, refuser] = await Promise.all([receiverOf("bench-receiver", "accept"), receiverOf("bench-refuser", "refuse")])

// Asynchronous: the API stand-in answers from this process, so a synchronous spawn would starve it.
const timed = async (file, args, check, environment = env) => {
  const started = performance.now()
  const result = await runProgram(file, args, { cwd: work, env: environment, timeoutMs: 120_000 })
  const ms = performance.now() - started
  const problem = check(result)
  if (problem !== undefined) throw new Error(`${file} ${args.join(" ")}: ${problem} (exit ${result.exit}): ${result.stderr.slice(0, 300)}`)
  return ms
}
const exitsZero = (result) => (result.exit === 0 ? undefined : "did not exit 0")
const relay = makeRelay({ claudeBinary: claude, environment: env })
const relayRun = async () => {
  const started = performance.now()
  const result = await Effect.runPromise(Effect.either(relay.send({
    address: `uds:${join(run.directory, "nobody.sock")}`,
    message: "bench",
    claudeHome: home,
    timeout: Duration.seconds(60)
  })))
  if (Either.isRight(result) || result.left.cause !== "relay_failed") throw new Error(`relay run: unexpected ${JSON.stringify(result)}`)
  return performance.now() - started
}
const commandPath = join(root, "bin", "claude-peers.js")
const send = (session, expected) =>
  timed(process.execPath, [commandPath, "--claude-home", home, "send", session.sessionId, "bench: a short message", "--json"], (result) => {
    const printed = JSON.parse(result.stdout)
    const answer = printed.outcome ?? printed.error?.reason
    return result.exit === expected.exit && answer === expected.answer ? undefined : `answered ${answer}`
  }, { ...env, CLAUDE_PEERS_CLAUDE_BIN: claude })

const rows = [
  ["node -e 0", () => timed(process.execPath, ["-e", "0"], exitsZero)],
  ["claude --version", () => timed(claude, ["--version"], exitsZero)],
  ["claude -p (one turn, local API)", () => timed(claude, ["-p", "ok", "--no-session-persistence"], exitsZero)],
  ["relay run (claude -p, 3 turns)", relayRun],
  ["claude-peers send (live receiver)", () => send(receiver, { exit: 0, answer: "delivered" })],
  ["claude-peers send (refused, no relay)", () => send(refuser, { exit: 9, answer: "inbound_refused" })]
]
const samples = rows.map(() => [])
const loadBefore = uptime()
log(`receivers pid ${receiver.pid} (accept) and ${refuser.pid} (refuse); ${rounds} rounds after one warm-up each; load: ${loadBefore}`)
for (const [, row] of rows) await row()
for (let round = 0; round < rounds; round++) {
  for (const [k, [, row]] of rows.entries()) samples[k].push(await row())
}
const loadAfter = uptime()

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const nodeMs = median(samples[0])
console.log(`Claude Code ${spawnSync(claude, ["--version"], { env, encoding: "utf8" }).stdout.trim()}, Node ${process.version}, ${rounds} rounds`)
console.log(`uptime before: ${loadBefore}`)
console.log(`uptime after:  ${loadAfter}`)
for (const [k, [label]] of rows.entries()) {
  const ms = median(samples[k])
  const sorted = [...samples[k]].sort((a, b) => a - b)
  console.log(
    `${label.padEnd(36)} ${ms.toFixed(0).padStart(6)} ms median (${sorted[0].toFixed(0)}–${sorted.at(-1).toFixed(0)})  ${(ms / nodeMs).toFixed(1)}× node -e 0`
  )
}
process.exit(0)
