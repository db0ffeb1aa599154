/**
 * A local stand-in for the Anthropic Messages API, so that the real Claude Code runs offline and its
 * sessions can be driven into the states the check needs:
 *
 * - a turn whose text contains `HOLD-BUSY` is never answered: the session stays `busy` until the
 *   check ends (the connection is closed when the server stops);
 * - a turn containing `RUN-BACKGROUND-SHELL` gets a Bash tool call that starts `sleep` in the
 *   background, so the session waits at its prompt while a shell runs (status `shell`);
 * - a turn carrying a tool result gets the text `done`; anything else gets `ok`.
 *
 * Every other endpoint (remote settings, telemetry …) answers 404 at once, which Claude Code treats
 * as "nothing configured" instead of retrying for seconds as it does without a network.
 */
import * as http from "node:http"

const textOf = (content) => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((block) => block?.type === "text" ? String(block.text ?? "") : block?.type === "tool_result" ? "TOOL_RESULT" : "")
    .join("\n")
}

/** The text of the trailing user turn (Claude Code may split one turn into several user messages). */
const lastUserText = (messages) => {
  const tail = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message?.role === "assistant") break
    if (message?.role === "user") tail.unshift(textOf(message.content))
  }
  return tail.join("\n")
}

const replyBlocks = (text, backgroundShellCommand) => {
  if (text.includes("TOOL_RESULT")) return { blocks: [{ type: "text", text: "done" }], stop: "end_turn" }
  if (text.includes("RUN-BACKGROUND-SHELL")) {
    return {
      blocks: [{
        type: "tool_use",
        id: `toolu_check_${Date.now()}`,
        name: "Bash",
        input: { command: backgroundShellCommand, description: "wait in the background", run_in_background: true }
      }],
      stop: "tool_use"
    }
  }
  return { blocks: [{ type: "text", text: "ok" }], stop: "end_turn" }
}

/**
 * Each reply has its own message id: Claude Code merges streamed messages that share an id into one,
 * so replies with one id made a turn that chains tool calls see its first reply again and loop.
 */
let replies = 0
const messageId = () => `msg_check_${process.pid}_${++replies}`

const eventStream = (model, blocks, stop) => {
  const events = []
  const add = (name, data) => events.push(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  add("message_start", {
    type: "message_start",
    message: {
      id: messageId(),
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 }
    }
  })
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      add("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } })
      add("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } })
    } else {
      add("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
      })
      add("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
      })
    }
    add("content_block_stop", { type: "content_block_stop", index })
  })
  add("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } })
  add("message_stop", { type: "message_stop" })
  return events.join("")
}

const send = (response, status, body, contentType = "application/json") => {
  const data = Buffer.from(body)
  response.writeHead(status, { "content-type": contentType, "content-length": data.length })
  response.end(data)
}

/**
 * Starts the server on a free port of 127.0.0.1. `backgroundShellCommand` is what the background
 * Bash call runs. Resolves to `{ url, requests, close }`; `requests` counts answered and held turns.
 */
export const startMockApi = ({ backgroundShellCommand }) =>
  new Promise((resolvePromise, reject) => {
    const held = new Set()
    const requests = { answered: 0, held: 0 }
    const server = http.createServer((request, response) => {
      const chunks = []
      request.on("data", (chunk) => chunks.push(chunk))
      request.on("end", () => {
        const path = request.url ?? ""
        if (request.method !== "POST" || !path.startsWith("/v1/messages")) {
          return send(response, 404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"mock\"}}")
        }
        if (path.startsWith("/v1/messages/count_tokens")) return send(response, 200, "{\"input_tokens\":10}")
        let body = {}
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}")
        } catch {
          body = {}
        }
        const text = lastUserText(Array.isArray(body.messages) ? body.messages : [])
        if (text.includes("HOLD-BUSY") && !text.includes("TOOL_RESULT")) {
          requests.held++
          held.add(response)
          response.on("close", () => held.delete(response))
          return
        }
        requests.answered++
        const { blocks, stop } = replyBlocks(text, backgroundShellCommand)
        const model = typeof body.model === "string" ? body.model : "claude-mock"
        if (!body.stream) {
          return send(
            response,
            200,
            JSON.stringify({
              id: messageId(),
              type: "message",
              role: "assistant",
              model,
              content: blocks,
              stop_reason: stop,
              stop_sequence: null,
              usage: { input_tokens: 10, output_tokens: 5 }
            })
          )
        }
        send(response, 200, eventStream(model, blocks, stop), "text/event-stream")
      })
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      resolvePromise({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () => {
          for (const response of held) response.destroy()
          server.closeAllConnections?.()
          server.close()
        }
      })
    })
  })
