#!/usr/bin/env node
/**
 * Captures what the real Claude Code 2.1.332 sends to a relay's model endpoint, for the fixtures of
 * `test/RelayEndpoint.test.ts` (`test/fixtures/relay/`): `node scripts/check-claude/relay-capture.mjs
 * [--out DIR]`.
 *
 * Real receivers run in a private tmux server on the check's mock API, in one throw-away home, with
 * their policy given on their command line (`--settings`): accept, hold, refuse. For each scenario a
 * `claude -p` relay runs with claude-peers' relay flags against a recording endpoint of its own here
 * (plain code, independent of `src/layers/RelayEndpoint.ts`), which answers with the relay's three
 * scripted turns (load SendMessage, call it, then rounds of ToolSearch that give Claude Code the
 * chance to hand over a `[Cross-session delivery notice]`) and writes down every request. In the
 * fixtures the key is `{{key}}` and the ids this endpoint gave its tool calls are `{{tool1}}`,
 * `{{tool2}}`, … in the order it gave them, so that a test can replay a conversation against the
 * endpoint under test with the ids that endpoint chose.
 *
 * Every process it starts carries the run's marker and is killed at the end, by pid.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { relayArguments, relayEnvironment } from "../../dist/domain/RelayLaunch.js"
import { claudeCodeVersion } from "./claude-code.mjs"
import { makeDriver } from "./driver.mjs"
import { killMarked } from "./processes.mjs"
import { makeRegistry } from "./registry.mjs"
import { makeLog, runProgram, waitFor } from "./tools.mjs"
import { makeCheckWorld } from "./world.mjs"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const log = makeLog()
const outIndex = process.argv.indexOf("--out")
const out = outIndex > 0 ? process.argv[outIndex + 1] : join(repoRoot, "test", "fixtures", "relay")

const toolSearchId = "toolu_capture_1"
const sendMessageId = "toolu_capture_2"
/** After the send, rounds of `ToolSearch` (harmless) let Claude Code hand the relay a delivery notice. */
const waitIdPrefix = "toolu_capture_w"
const waitRounds = 6

const eventStream = (model, id, blocks, stop) => {
  const events = []
  const add = (name, data) => events.push(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  add("message_start", {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 }
    }
  })
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      add("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } })
      add("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } })
    } else {
      add("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } })
      add("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } })
    }
    add("content_block_stop", { type: "content_block_stop", index })
  })
  add("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } })
  add("message_stop", { type: "message_stop" })
  return events.join("")
}

/** The recording endpoint: the three scripted turns, every request written down. */
const startRecorder = ({ address, key, message }) =>
  new Promise((resolvePromise) => {
    const requests = []
    let replies = 0
    const server = http.createServer((request, response) => {
      const chunks = []
      request.on("data", (chunk) => chunks.push(chunk))
      request.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        let body = raw
        try {
          body = raw === "" ? null : JSON.parse(raw)
        } catch {
          // kept as text
        }
        requests.push({ at: Date.now(), method: request.method, url: request.url, headers: request.headers, body })
        const reply = (status, text, type = "application/json") => {
          response.writeHead(status, { "content-type": type })
          response.end(text)
        }
        if (request.headers["x-api-key"] !== key) {
          return reply(401, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}")
        }
        if (request.method !== "POST" || !request.url.startsWith("/v1/messages")) {
          return reply(404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"none\"}}")
        }
        if (request.url.startsWith("/v1/messages/count_tokens")) {
          return reply(200, "{\"input_tokens\":1}")
        }
        const last = body.messages.at(-1)
        const results = Array.isArray(last?.content) ? last.content.filter((block) => block.type === "tool_result") : []
        const ids = results.map((block) => block.tool_use_id)
        const waits = body.messages.filter((m) => m.role === "assistant" && JSON.stringify(m.content).includes(waitIdPrefix)).length
        const sent = body.messages.some((m) => m.role === "user" && JSON.stringify(m.content).includes(sendMessageId))
        const noticed = body.messages.some((m) =>
          m.role === "user" &&
          (typeof m.content === "string" ? [m.content] : m.content.map((b) => b.text ?? "")).some((t) => t.startsWith("[Cross-session delivery notice]"))
        )
        const turn = sent && !noticed && waits < waitRounds
          ? {
            blocks: [{ type: "tool_use", id: `${waitIdPrefix}${waits + 3}`, name: "ToolSearch", input: { query: "select:SendMessage", max_results: 1 } }],
            stop: "tool_use"
          }
          : sent
          ? { blocks: [{ type: "text", text: "Relayed." }], stop: "end_turn" }
          : ids.includes(toolSearchId)
          ? { blocks: [{ type: "tool_use", id: sendMessageId, name: "SendMessage", input: { to: address, message } }], stop: "tool_use" }
          : { blocks: [{ type: "tool_use", id: toolSearchId, name: "ToolSearch", input: { query: "select:SendMessage", max_results: 1 } }], stop: "tool_use" }
        replies++
        if (sent) return setTimeout(() => reply(200, eventStream(body.model, `msg_capture_${replies}`, turn.blocks, turn.stop), "text/event-stream"), 250)
        reply(200, eventStream(body.model, `msg_capture_${replies}`, turn.blocks, turn.stop), "text/event-stream")
      })
    })
    server.listen(
      0,
      "127.0.0.1",
      () => resolvePromise({ url: `http://127.0.0.1:${server.address().port}`, requests, close: () => (server.closeAllConnections(), server.close()) })
    )
  })

/** A request as a fixture: the key and the tool ids as placeholders, the headers that vary per run dropped. */
const fixtureOf = (request, key) => {
  const { "content-length": _length, host: _host, ...headers } = request.headers
  const text = JSON.stringify({ ...request, headers })
  return JSON.parse(text.split(key).join("{{key}}").replace(/toolu_capture_w?(\d+)/g, "{{tool$1}}"))
}

const run = { directory: null, marker: null, tmux: null, api: null }
const cleanup = () => {
  try {
    run.tmux?.killServer()
  } catch {
    // gone
  }
  if (run.marker !== null) killMarked(run.marker)
  run.api?.close()
  if (run.directory !== null) rmSync(run.directory, { recursive: true, force: true })
}
process.on("exit", cleanup)
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))

const main = async () => {
  const { claude, env, home, works: [work] } = await makeCheckWorld(run, { log, prefix: "cpr-", repoRoot })
  const registry = makeRegistry(home)
  const driver = makeDriver({ tmux: run.tmux, registry, claude, log })

  const policies = ["accept", "hold", "refuse"]
  for (const policy of policies) driver.start(policy, work, ["--settings", JSON.stringify({ crossSessionInbound: policy })])
  const receivers = Object.fromEntries(await Promise.all(policies.map(async (policy) => [policy, await driver.up(policy)])))

  const scenarios = [
    { name: "delivered", address: `uds:${receivers.accept.record.messagingSocketPath}` },
    { name: "held", address: `uds:${receivers.hold.record.messagingSocketPath}` },
    { name: "refused", address: `uds:${receivers.refuse.record.messagingSocketPath}` },
    { name: "no-such-socket", address: `uds:${join(run.directory, "run", "nobody.sock")}` },
    { name: "bare", address: `uds:${receivers.accept.record.messagingSocketPath}`, extra: ["--bare"] }
  ]
  mkdirSync(out, { recursive: true })
  for (const scenario of scenarios) {
    const key = `sk-ant-relay-${randomBytes(16).toString("hex")}`
    const message = `capture ${scenario.name} ${randomBytes(4).toString("hex")}`
    const recorder = await startRecorder({ key, address: scenario.address, message })
    const cwd = mkdtempSync(join(run.directory, "relay-"))
    const args = [...relayArguments(), ...(scenario.extra ?? [])]
    const started = Date.now()
    const result = await runProgram(claude, args, {
      env: { ...relayEnvironment({ base: env, claudeHome: home, userHome: env.HOME, baseUrl: recorder.url, apiKey: key }), PWD: cwd },
      cwd,
      timeoutMs: 60_000
    })
    recorder.close()
    log(`${scenario.name}: exit ${result.exit} after ${Date.now() - started} ms, ${recorder.requests.length} requests`)
    const sendResult = recorder.requests
      .flatMap((request) => request.body?.messages?.at(-1)?.content ?? [])
      .find((block) => block?.type === "tool_result" && block.tool_use_id === sendMessageId)
    log(`${scenario.name}: SendMessage said ${JSON.stringify(sendResult?.content ?? null)}`)
    writeFileSync(
      join(out, `${scenario.name}.json`),
      `${
        JSON.stringify(
          {
            claudeCode: claudeCodeVersion,
            arguments: args,
            address: scenario.address,
            message,
            exit: result.exit,
            stdout: result.stdout,
            requests: recorder.requests.map((request) => fixtureOf(request, key))
          },
          null,
          1
        )
      }\n`
    )
  }
  // What arrived: each receiver's transcript.
  await new Promise((resolvePromise) => setTimeout(resolvePromise, 3000))
  for (const policy of policies) {
    const { record } = receivers[policy]
    const dir = join(home, "projects", record.cwd.replace(/[^A-Za-z0-9]/g, "-"))
    let lines = []
    try {
      lines = readFileSync(join(dir, `${record.sessionId}.jsonl`), "utf8").split("\n").filter((line) => line.includes("capture "))
    } catch (error) {
      lines = [`(no transcript: ${error.message}; ${readdirSync(join(home, "projects")).join(", ")})`]
    }
    log(`${policy}: transcript lines naming the capture: ${lines.length}\n${lines.map((line) => line.slice(0, 600)).join("\n")}`)
    log(`${policy}: screen:\n${run.tmux.screen(policy).split("\n").filter((line) => line.trim() !== "").slice(-15).join("\n")}`)
  }
  await waitFor("nothing", () => true)
}

main().then(
  () => process.exit(0),
  (error) => {
    log(`capture failed: ${error?.stack ?? error}`)
    process.exit(2)
  }
)
