#!/usr/bin/env node
/**
 * The relay's cost, in the same rounds: `node -e 0`, a bare `claude -p` start (`--version`), and a
 * relay run through the built library to an address with no session behind it (Claude Code's
 * start, the three scripted turns and its exit; no notice rounds, which a real send adds:
 * `noticeRounds` × `noticeRoundDelay` plus one request each). Needs `npm run build` and the Claude
 * Code of `npm run check:claude` (`.cache/claude-code/`). `node bench/relay.mjs [rounds]`.
 */
import { Duration, Effect, Either } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const { makeRelay } = await import(join(root, "dist", "node.js"))
const claude = join(root, ".cache", "claude-code", "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
const rounds = Number(process.argv[2] ?? 5)
const home = mkdtempSync(join(tmpdir(), "relay-bench-"))
const env = { ...process.env, NODE_EXTRA_CA_CERTS: "" }
delete env.NODE_EXTRA_CA_CERTS

const time = async (f) => {
  const started = performance.now()
  await f()
  return performance.now() - started
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const samples = { node: [], version: [], relay: [] }
const relay = makeRelay({ claudeBinary: claude, environment: env })
for (let round = 0; round < rounds; round++) {
  samples.node.push(await time(() => spawnSync(process.execPath, ["-e", "0"], { env })))
  samples.version.push(await time(() => spawnSync(claude, ["--version"], { env })))
  samples.relay.push(
    await time(async () => {
      const result = await Effect.runPromise(Effect.either(relay.send({
        address: `uds:${join(home, "nobody.sock")}`,
        message: "bench",
        claudeHome: home,
        timeout: Duration.seconds(60)
      })))
      if (Either.isRight(result) || result.left.cause !== "relay_failed") throw new Error(`unexpected: ${JSON.stringify(result)}`)
    })
  )
}
rmSync(home, { recursive: true, force: true })
const nodeMs = median(samples.node)
for (const [label, values] of [["node -e 0", samples.node], ["claude --version", samples.version], ["relay run (claude -p, 3 turns)", samples.relay]]) {
  const ms = median(values)
  console.log(`${label.padEnd(32)} ${ms.toFixed(0).padStart(6)} ms median of ${values.length}  ${(ms / nodeMs).toFixed(1)}× node -e 0`)
}
