#!/usr/bin/env node
/**
 * The real fate of a message that `claude-peers send` refused to relay: claude-peers' own relay
 * (the built library's `makeRelay`, a headless Claude Code whose `SendMessage` does the sending; no
 * socket is written here) run without `send`'s policy step, so that the receiver itself answers.
 * Only the check runs it, on its own receivers, to hold a refusal before relaying against what the
 * receiver does with the message.
 *
 * `node scripts/check-claude/relay-probe.mjs <claude home> <address> <message>`, in the check's
 * session environment (its HOME is the run's fake home); the relay's Claude Code is
 * `$CLAUDE_PEERS_CLAUDE_BIN`. Prints one line of JSON: `{ outcome, text }` (the receipt), or
 * `{ failed: <cause>, detail }`; exit 0 either way, 2 on a usage error.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeRelay } from "../../dist/node.js"

const [home, address, message] = process.argv.slice(2)
if (home === undefined || address === undefined || message === undefined) {
  process.stderr.write("usage: relay-probe.mjs <claude home> <address> <message>\n")
  process.exit(2)
}
const root = mkdtempSync(join(tmpdir(), "probe-"))
try {
  const relay = makeRelay({ environment: process.env, workingDirectoryRoot: root })
  const result = await Effect.runPromise(Effect.either(relay.send({ address, message, claudeHome: home, timeout: Duration.seconds(90) })))
  const printed = Either.isRight(result)
    ? { outcome: result.right.outcome, text: result.right.text }
    : { failed: result.left.cause, detail: result.left.detail }
  process.stdout.write(`${JSON.stringify(printed)}\n`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
