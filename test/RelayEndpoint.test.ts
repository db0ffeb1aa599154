/**
 * The relay's model endpoint against conversations captured from the real Claude Code 2.1.332
 * (`test/fixtures/relay/`, written by `scripts/check-claude/relay-capture.mjs`): each captured
 * request is sent over HTTP in order, with the endpoint's own key and the ids of the tool calls
 * the endpoint itself made, until the endpoint ends the turn; the outcome is what it concluded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { relayPrompt } from "../src/domain/RelayLaunch.js"
import * as RelayEndpoint from "../src/layers/RelayEndpoint.js"

interface Captured {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: unknown
}
interface Fixture {
  readonly address: string
  readonly message: string
  readonly requests: ReadonlyArray<Captured>
}

const fixtureDirectory = path.join(import.meta.dirname, "fixtures", "relay")
const load = (name: string): Fixture => JSON.parse(fs.readFileSync(path.join(fixtureDirectory, `${name}.json`), "utf8")) as Fixture

/** The ids of the tool calls in a streamed reply, and whether it ended the turn. */
const readReply = (text: string) => {
  const ids = [...text.matchAll(/"type":"tool_use","id":"([^"]+)"/g)].map((match) => match[1]!)
  return { ids, ended: text.includes("\"stop_reason\":\"end_turn\"") }
}

/** The captured prompt differs from the relay's current one only if the flags changed: the fixture says which it had. */
const promptOf = (fixture: Fixture): string => JSON.stringify(fixture.requests).includes(relayPrompt) ? relayPrompt : "(none)"

const replay = (fixture: Fixture, edit: (body: unknown, index: number) => unknown = (body) => body) =>
  Effect.scoped(Effect.gen(function*() {
    const endpoint = yield* RelayEndpoint.start({
      address: fixture.address,
      message: fixture.message,
      prompt: promptOf(fixture),
      noticeRounds: 4,
      noticeRoundDelay: "10 millis"
    })
    const ids: Array<string> = []
    let sent = 0
    for (const [index, captured] of fixture.requests.entries()) {
      const text = JSON.stringify(captured).split("{{key}}").join(endpoint.key).replace(/\{\{tool(\d+)\}\}/g, (_, n: string) =>
        ids[Number(n) - 1] ?? `unissued-${n}`)
      const request = JSON.parse(text) as Captured
      const body = edit(request.body, index)
      const response = yield* Effect.promise(() =>
        fetch(`${endpoint.url}${request.url}`, {
          method: request.method,
          headers: Object.fromEntries(
            Object.entries(request.headers).filter(([name]) =>
              !["connection", "accept-encoding"].includes(name)
            )
          ),
          ...(request.method === "HEAD" || body === null ? {} : { body: JSON.stringify(body) })
        }).then(async (r) => ({ status: r.status, text: await r.text() }))
      )
      sent += 1
      expect(response.status).toBe(200)
      const reply = readReply(response.text)
      ids.push(...reply.ids)
      if (reply.ended) break
    }
    const outcome = yield* Effect.either(endpoint.outcome)
    return { outcome, sent, ids }
  }))

describe("RelayEndpoint, replaying Claude Code 2.1.332", () => {
  it.live("the captured conversations carry the relay's prompt", () =>
    Effect.sync(() => {
      for (const name of ["delivered", "held", "refused", "no-such-socket", "bare"]) expect(promptOf(load(name))).toBe(relayPrompt)
    }))

  it.live("accept: SendMessage put it in the inbox and no notice followed → delivered", () =>
    Effect.gen(function*() {
      const fixture = load("delivered")
      const { ids, outcome } = yield* replay(fixture)
      expect(Either.isRight(outcome)).toBe(true)
      const receipt = Either.getOrThrow(outcome)
      expect(receipt.outcome).toBe("delivered")
      expect(receipt.text).toContain(fixture.message)
      // ToolSearch, SendMessage, then the four notice rounds.
      expect(ids.length).toBe(6)
    }))

  it.live("a delivered message that itself says \"was refused\" is delivered: the quoted message is not a receipt", () =>
    Effect.gen(function*() {
      const fixture = load("delivered")
      const quoting = (body: unknown) => JSON.parse(JSON.stringify(body).split(`“${fixture.message}`).join(`“${fixture.message} was refused`))
      const { outcome } = yield* replay(fixture, quoting)
      expect(Either.isRight(outcome)).toBe(true)
      const receipt = Either.getOrThrow(outcome)
      expect(receipt.text).toContain("was refused")
      expect(receipt.outcome).toBe("delivered")
    }))

  it.live("a result without Claude Code's own notice clause is no delivery, even when the quoted message holds the clause", () =>
    Effect.gen(function*() {
      const fixture = load("delivered")
      const clause = "a [Cross-session delivery notice] follows"
      // The receiver's clause removed, and the message made to carry it: nobody would report a hold.
      const forged = (body: unknown) =>
        JSON.parse(
          JSON.stringify(body).split(clause).join("no notice can follow").split(`“${fixture.message}`).join(`“${fixture.message} ${clause}`)
        )
      const { outcome } = yield* replay(fixture, forged)
      expect(Either.isLeft(outcome)).toBe(true)
      expect(Either.isLeft(outcome) ? outcome.left.cause : undefined).toBe("relay_failed")
    }))

  it.live("hold: the receiver's notice says held → held, with the notice as the text", () =>
    Effect.gen(function*() {
      const { outcome } = yield* replay(load("held"))
      const receipt = Either.getOrThrow(outcome)
      expect(receipt.outcome).toBe("held")
      expect(receipt.text).toMatch(/^\[Cross-session delivery notice\] Your message to another session was held/)
    }))

  it.live("refuse: the receiver's notice says refused → refused", () =>
    Effect.gen(function*() {
      const { outcome } = yield* replay(load("refused"))
      const receipt = Either.getOrThrow(outcome)
      expect(receipt.outcome).toBe("refused")
      expect(receipt.text).toContain("was refused")
    }))

  it.live("a socket that is not there: SendMessage failed → relay_failed with its text, never delivered", () =>
    Effect.gen(function*() {
      const { outcome } = yield* replay(load("no-such-socket"))
      expect(Either.isLeft(outcome)).toBe(true)
      if (Either.isLeft(outcome)) {
        expect(outcome.left.cause).toBe("relay_failed")
        expect(outcome.left.detail).toContain("ENOENT")
      }
    }))

  it.live("a Claude Code without ToolSearch and SendMessage (--bare) → no_send_tool at once", () =>
    Effect.gen(function*() {
      const { outcome, sent } = yield* replay(load("bare"))
      expect(sent).toBe(1)
      expect(Either.isLeft(outcome) && outcome.left.cause).toBe("no_send_tool")
    }))

  it.live("SendMessage with an input schema it does not know → no_send_tool, and it is never called", () =>
    Effect.gen(function*() {
      const requireMore = (body: unknown) => {
        const tools = (body as { tools: Array<{ name: string; input_schema: { required: Array<string> } }> }).tools
        for (const tool of tools) if (tool.name === "SendMessage") tool.input_schema.required.push("channel")
        return body
      }
      const { ids, outcome } = yield* replay(load("delivered"), requireMore)
      expect(Either.isLeft(outcome) && outcome.left.cause).toBe("no_send_tool")
      if (Either.isLeft(outcome)) expect(outcome.left.detail).toContain("\"channel\"")
      expect(ids.length).toBe(1)
    }))

  it.live("SendMessage missing from the tools after ToolSearch → no_send_tool", () =>
    Effect.gen(function*() {
      const dropSend = (body: unknown) => {
        const typed = body as { tools: Array<{ name: string }> }
        return { ...typed, tools: typed.tools.filter((tool) => tool.name !== "SendMessage") }
      }
      const { outcome } = yield* replay(load("delivered"), dropSend)
      expect(Either.isLeft(outcome) && outcome.left.cause).toBe("no_send_tool")
    }))

  it.live("a request without the key gets 401 and fails the run (endpoint_refused); later turns get no tool", () =>
    Effect.scoped(Effect.gen(function*() {
      const fixture = load("delivered")
      const endpoint = yield* RelayEndpoint.start({ address: fixture.address, message: fixture.message, prompt: relayPrompt })
      const body = JSON.stringify(fixture.requests[0]!.body)
      const foreign = yield* Effect.promise(() => fetch(`${endpoint.url}/v1/messages`, { method: "POST", body, headers: { "x-api-key": "sk-guess" } }))
      expect(foreign.status).toBe(401)
      const outcome = yield* Effect.either(endpoint.outcome)
      expect(Either.isLeft(outcome) && outcome.left.cause).toBe("endpoint_refused")
      const own = yield* Effect.promise(() =>
        fetch(`${endpoint.url}/v1/messages`, { method: "POST", body, headers: { "x-api-key": endpoint.key } }).then((r) => r.text())
      )
      expect(readReply(own).ids).toEqual([])
    })))

  it.live("a request that is not the relay's conversation is answered without a tool and decides nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const fixture = load("delivered")
      const endpoint = yield* RelayEndpoint.start({ address: fixture.address, message: fixture.message, prompt: relayPrompt })
      const side = {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "Write a title for this conversation" }],
        tools: (fixture.requests[0]!.body as { tools: unknown }).tools
      }
      const text = yield* Effect.promise(() =>
        fetch(`${endpoint.url}/v1/messages`, { method: "POST", body: JSON.stringify(side), headers: { "x-api-key": endpoint.key } }).then((r) => r.text())
      )
      expect(readReply(text).ids).toEqual([])
      expect(JSON.parse(text).stop_reason).toBe("end_turn")
      const first = JSON.parse(JSON.stringify(fixture.requests[0]!.body))
      const reply = yield* Effect.promise(() =>
        fetch(`${endpoint.url}/v1/messages`, { method: "POST", body: JSON.stringify(first), headers: { "x-api-key": endpoint.key } }).then((r) => r.text())
      )
      expect(readReply(reply).ids.length).toBe(1)
    })))

  it.live("every reply has its own message id", () =>
    Effect.gen(function*() {
      const fixture = load("delivered")
      const seen = new Set<string>()
      yield* Effect.scoped(Effect.gen(function*() {
        const endpoint = yield* RelayEndpoint.start({ address: fixture.address, message: fixture.message, prompt: relayPrompt })
        for (let i = 0; i < 3; i++) {
          const text = yield* Effect.promise(() =>
            fetch(`${endpoint.url}/v1/messages`, { method: "POST", body: JSON.stringify(fixture.requests[0]!.body), headers: { "x-api-key": endpoint.key } })
              .then((r) => r.text())
          )
          seen.add(/"id":"(msg_[^"]+)"/.exec(text)![1]!)
        }
      }))
      expect(seen.size).toBe(3)
    }))
})
