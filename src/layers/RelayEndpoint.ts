/**
 * The model endpoint claude-peers serves for one relay run: `node:http` on loopback, a random port,
 * and a random key that every request must carry (Claude Code sends `ANTHROPIC_API_KEY` as
 * `x-api-key`). It answers the Messages API with `RelayScript`'s turns only.
 *
 * A request without the key is refused (401) and fails the run (`endpoint_refused`): the endpoint
 * speaks for the user's Claude Code for the length of one send, and anything else on the machine
 * that talks to it is at best a mistake. A key-less `HEAD` (a connectivity probe, which carries no
 * body) is refused without failing the run.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { randomBytes, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import type { RelayReceipt } from "../services/Relay.js"
import { RelayScript, type ScriptAnswer, type ScriptReply, type SendProgress } from "./RelayScript.js"

export type { SendProgress }

export interface EndpointFailure {
  readonly cause: "no_send_tool" | "relay_failed" | "endpoint_refused"
  readonly detail: string
}

export interface RelayEndpointOptions {
  readonly address: string
  readonly message: string
  /** The relay's `-p` prompt: what marks a request as the relay's own conversation. */
  readonly prompt: string
  /** How many `ToolSearch` rounds after the send wait for a hold or refusal notice (default 4). */
  readonly noticeRounds?: number | undefined
  /** How long each of those rounds' answers is held back, on the `Clock` (default 250 ms). */
  readonly noticeRoundDelay?: Duration.DurationInput | undefined
}

export interface RelayEndpoint {
  /** `http://127.0.0.1:<port>`: the relay's `ANTHROPIC_BASE_URL`. */
  readonly url: string
  /** The run's key: the relay's `ANTHROPIC_API_KEY`. */
  readonly key: string
  /** The run's outcome, once a request decided it. */
  readonly outcome: Effect.Effect<RelayReceipt, EndpointFailure>
  /** How many requests reached the endpoint so far (refused ones included). */
  readonly requests: Effect.Effect<number>
  /** How far the send got, whatever the outcome (`RelayScript`'s `progress`). */
  readonly send: Effect.Effect<SendProgress>
}

/** Request bodies larger than this are refused: Claude Code's requests are tens of kilobytes. */
const maxBody = 32 * 1024 * 1024

const errorBody = (type: string, message: string): string => JSON.stringify({ type: "error", error: { type, message } })

/** The reply as one Messages API message. */
const messageOf = (reply: ScriptReply, id: string, model: string) => ({
  id,
  type: "message",
  role: "assistant",
  model,
  content: reply._tag === "ToolUse"
    ? [{ type: "tool_use", id: reply.id, name: reply.name, input: reply.input }]
    : [{ type: "text", text: reply.text }],
  stop_reason: reply._tag === "ToolUse" ? "tool_use" : "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 0, output_tokens: 0 }
})

/** The reply as the server-sent events of a streamed message. */
export const eventStreamOf = (reply: ScriptReply, id: string, model: string): string => {
  const message = messageOf(reply, id, model)
  const events: Array<string> = []
  const add = (type: string, data: Record<string, unknown>) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  add("message_start", { message: { ...message, content: [], stop_reason: null } })
  if (reply._tag === "ToolUse") {
    add("content_block_start", { index: 0, content_block: { type: "tool_use", id: reply.id, name: reply.name, input: {} } })
    add("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) } })
  } else {
    add("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
    add("content_block_delta", { index: 0, delta: { type: "text_delta", text: reply.text } })
  }
  add("content_block_stop", { index: 0 })
  add("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 0 } })
  add("message_stop", {})
  return events.join("")
}

const sameKey = (given: string | Array<string> | undefined, key: Buffer): boolean => {
  if (typeof given !== "string") return false
  const bytes = Buffer.from(given, "utf8")
  return bytes.length === key.length && timingSafeEqual(bytes, key)
}

/**
 * Starts the endpoint for one run; it stops (every connection closed) when the scope closes.
 * Each answer gets its own message id.
 */
export const start = (options: RelayEndpointOptions): Effect.Effect<RelayEndpoint, EndpointFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const nonce = randomBytes(9).toString("hex")
    const key = `sk-ant-relay-${randomBytes(24).toString("base64url")}`
    const keyBytes = Buffer.from(key, "utf8")
    const roundDelay = Duration.decode(options.noticeRoundDelay ?? Duration.millis(250))
    const script = new RelayScript({
      address: options.address,
      message: options.message,
      prompt: options.prompt,
      noticeRounds: options.noticeRounds ?? 4,
      nonce
    })
    const outcome = yield* Deferred.make<RelayReceipt, EndpointFailure>()
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runFork(runtime)
    let requests = 0
    let replies = 0
    /** Set by a request without the key: from then on no request is answered with a tool. */
    let refused = false

    const settle = (answer: ScriptAnswer): void => {
      const decided = answer.outcome
      if (decided === undefined) return
      run(decided._tag === "Receipt" ? Deferred.succeed(outcome, decided.receipt) : Deferred.fail(outcome, decided.failure))
    }

    const handle = (request: http.IncomingMessage, response: http.ServerResponse, body: Buffer): void => {
      const send = (status: number, text: string, type = "application/json") => {
        response.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text) })
        response.end(text)
      }
      const path = request.url ?? ""
      if (!sameKey(request.headers["x-api-key"], keyBytes)) {
        if (request.method !== "HEAD") {
          refused = true
          run(Deferred.fail<RelayReceipt, EndpointFailure>(outcome, {
            cause: "endpoint_refused",
            detail: `a request without the run's key reached the relay's endpoint (${request.method ?? "?"} ${path.slice(0, 80)})`
          }))
        }
        return send(401, errorBody("authentication_error", "this endpoint serves one claude-peers relay run"))
      }
      if (request.method !== "POST" || !path.startsWith("/v1/messages")) return send(404, errorBody("not_found_error", "not served here"))
      if (path.startsWith("/v1/messages/count_tokens")) return send(200, JSON.stringify({ input_tokens: 0 }))
      let parsed: unknown = null
      try {
        parsed = JSON.parse(body.toString("utf8"))
      } catch {
        return send(400, errorBody("invalid_request_error", "the body is not JSON"))
      }
      const answer: ScriptAnswer = refused ? { reply: { _tag: "EndTurn", text: "" } } : script.answer(parsed)
      settle(answer)
      replies += 1
      const id = `msg_relay_${nonce}_${replies}`
      const model = typeof (parsed as { model?: unknown }).model === "string" ? (parsed as { model: string }).model : "claude-peers-relay"
      const stream = (parsed as { stream?: unknown }).stream === true
      const reply = () =>
        stream
          ? send(200, eventStreamOf(answer.reply, id, model), "text/event-stream")
          : send(200, JSON.stringify(messageOf(answer.reply, id, model)))
      if (answer.reply._tag === "ToolUse" && answer.reply.waitRound) {
        run(Effect.zipRight(Effect.sleep(roundDelay), Effect.sync(reply)))
      } else {
        reply()
      }
    }

    const server = http.createServer((request, response) => {
      requests += 1
      const chunks: Array<Buffer> = []
      let size = 0
      request.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size <= maxBody) chunks.push(chunk)
      })
      request.on("error", () => response.destroy())
      request.on("end", () => {
        if (size > maxBody) {
          response.writeHead(413, { "content-type": "application/json" })
          return response.end(errorBody("request_too_large", "too large"))
        }
        handle(request, response, Buffer.concat(chunks))
      })
    })

    const port = yield* Effect.acquireRelease(
      Effect.async<number, EndpointFailure>((resume) => {
        const failed = (error: Error) => resume(Effect.fail({ cause: "relay_failed", detail: `the relay's endpoint could not listen: ${error.message}` }))
        server.once("error", failed)
        server.listen(0, "127.0.0.1", () => {
          server.off("error", failed)
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )

    return {
      url: `http://127.0.0.1:${port}`,
      key,
      outcome: Deferred.await(outcome),
      requests: Effect.sync(() => requests),
      send: Effect.sync(() => script.progress)
    }
  })
