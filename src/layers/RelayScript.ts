/**
 * The relay's conversation, as the model endpoint plays it: a pure function from the request
 * Claude Code sends to the reply, kept apart from the server so that it can be replayed against
 * requests captured from the real Claude Code (`test/fixtures/relay/`).
 *
 * The turns are scripted and nothing else is ever answered with a tool call:
 * 1. `ToolSearch` with `select:SendMessage` (`SendMessage` is a deferred tool in 2.1.332);
 * 2. `SendMessage` to the address with the message, once its schema is one this module knows;
 * 3. after a send that Claude Code reports as in the receiver's inbox, a few rounds of the same
 *    harmless `ToolSearch`: the receiver reports a hold or a refusal afterwards, as a
 *    `[Cross-session delivery notice]` that Claude Code hands the relay at its next tool round, so
 *    only a notice, or its absence after those rounds, tells held, refused or delivered;
 * 4. the end of the turn.
 * A result the module does not recognize is never taken for a delivery.
 */
import type { RelayReceipt } from "../services/Relay.js"

/** Why the endpoint ended the run without a receipt (the `DeliveryFailed` causes it can tell). */
export interface ScriptFailure {
  readonly cause: "no_send_tool" | "relay_failed"
  readonly detail: string
}

/**
 * How far a send got: whether the relay was told to call `SendMessage` (from then on the message
 * may be in the inbox), whether its result reached the endpoint since, and that result where it
 * reports the message in the receiver's inbox (else null).
 */
export interface SendProgress {
  readonly issued: boolean
  readonly answered: boolean
  readonly result: string | null
}

export type ScriptOutcome =
  | { readonly _tag: "Receipt"; readonly receipt: RelayReceipt }
  | { readonly _tag: "Failure"; readonly failure: ScriptFailure }

export type ScriptReply =
  | { readonly _tag: "ToolUse"; readonly id: string; readonly name: string; readonly input: Record<string, unknown>; readonly waitRound: boolean }
  | { readonly _tag: "EndTurn"; readonly text: string }

export interface ScriptAnswer {
  readonly reply: ScriptReply
  /** Set when this request decided the run. */
  readonly outcome?: ScriptOutcome
}

export interface ScriptOptions {
  readonly address: string
  readonly message: string
  /** The relay's prompt: a request that does not carry it is not the relay's conversation. */
  readonly prompt: string
  /** How many `ToolSearch` rounds after the send give a delivery notice the chance to arrive. */
  readonly noticeRounds: number
  /** Makes the tool-call ids this run's own. */
  readonly nonce: string
}

/** Claude Code's marker for the receiver's report on a message (a hold, a refusal, a drop). */
export const noticeMarker = "[Cross-session delivery notice]"

type Json = unknown
type Block = Record<string, Json>

const isRecord = (value: Json): value is Record<string, Json> => typeof value === "object" && value !== null && !Array.isArray(value)
const blocksOf = (content: Json): ReadonlyArray<Block> =>
  typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content.filter(isRecord) : []
const textOf = (content: Json): string => blocksOf(content).map((block) => (typeof block.text === "string" ? block.text : "")).join("\n")

const cut = (text: string, max = 600): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * The input schema of `SendMessage` this module knows: an object whose `to` and `message` are
 * strings and that requires nothing else. Anything else would be a tool whose meaning changed.
 */
const schemaProblem = (schema: Json): string | null => {
  if (!isRecord(schema) || schema.type !== "object" || !isRecord(schema.properties)) return "it is not an object schema"
  const { message, to } = schema.properties
  if (!isRecord(to) || to.type !== "string") return "its `to` is not a string"
  if (!isRecord(message) || message.type !== "string") return "its `message` is not a string"
  const required = Array.isArray(schema.required) ? schema.required : []
  const unknown = required.filter((name) => name !== "to" && name !== "message")
  if (unknown.length > 0) return `it requires ${unknown.map((name) => JSON.stringify(name)).join(", ")}, which claude-peers does not know`
  return null
}

/** Whether `value` meets a string property's `pattern`s and `maxLength` (those of its `allOf` too). */
const fitsString = (property: Record<string, Json>, value: string): boolean => {
  const parts = [property, ...(Array.isArray(property.allOf) ? property.allOf.filter(isRecord) : [])]
  return parts.every((part) => {
    if (typeof part.maxLength === "number" && [...value].length > part.maxLength) return false
    if (typeof part.pattern !== "string") return true
    try {
      return new RegExp(part.pattern, "u").test(value)
    } catch {
      return true
    }
  })
}

const toolNamed = (tools: ReadonlyArray<Block>, name: string): Block | undefined => tools.find((tool) => tool.name === name)

const parseOrNull = (text: string): Json => {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** Whether `SendMessage`'s result, parsed, reports the message sent: in the receiver's inbox. */
const reportsSent = (isError: boolean, parsed: Json): parsed is Record<string, Json> => !isError && isRecord(parsed) && parsed.success === true

/** The receipt, or the failure, that `SendMessage`'s result (`parsed` from `resultText`) and a notice after it tell. */
const classify = (
  resultText: string,
  parsed: Json,
  isError: boolean,
  notices: ReadonlyArray<string>,
  roundsDone: number,
  rounds: number,
  address: string
): ScriptOutcome | "wait" => {
  const failure = (detail: string): ScriptOutcome => ({ _tag: "Failure", failure: { cause: "relay_failed", detail } })
  const said = isRecord(parsed) && typeof parsed.message === "string" ? parsed.message : resultText
  // A sent message's result quotes the message, which may say anything: only a result that is not a
  // success is read for a refusal, and a success only by the notice that follows it.
  if (!reportsSent(isError, parsed)) {
    if (/\bwas refused\b/.test(said)) return { _tag: "Receipt", receipt: { outcome: "refused", text: said } }
    return failure(`SendMessage did not send: ${cut(said)}`)
  }
  const messageId = typeof parsed.msg_id === "string" ? parsed.msg_id : null
  const notice = notices.find((text) => messageId === null || text.includes(`msg_id: ${messageId}`))
  if (notice !== undefined) {
    if (/\bwas held\b/.test(notice)) return { _tag: "Receipt", receipt: { outcome: "held", text: notice } }
    if (/\bwas refused\b/.test(notice)) return { _tag: "Receipt", receipt: { outcome: "refused", text: notice } }
    return failure(`the receiver reported something claude-peers does not know: ${cut(notice)}`)
  }
  // Only a sender with its own inbox hears of a hold or a refusal; without one, silence proves nothing.
  // Read after Claude Code's own `” → <address>;`: the quoted message before it may say anything.
  const marker = said.lastIndexOf(`” → ${address};`)
  if (marker < 0 || !said.slice(marker).includes(`a ${noticeMarker} follows`)) {
    return failure(`SendMessage sent, but no hold or refusal could be reported back: ${cut(said)}`)
  }
  return roundsDone < rounds ? "wait" : { _tag: "Receipt", receipt: { outcome: "delivered", text: said } }
}

/**
 * One relay run's script. `answer` is called once per model request, in order; the ids it gives
 * its tool calls are how it recognizes the results Claude Code sends back.
 */
export class RelayScript {
  private issued = 0
  private decided: ScriptOutcome | null = null
  private searchId: string | null = null
  private sendId: string | null = null
  /** `SendMessage`'s result once it reached the endpoint, and whether it reports the message sent. */
  private result: { readonly text: string; readonly sent: boolean } | null = null
  private readonly waitIds = new Set<string>()

  constructor(private readonly options: ScriptOptions) {}

  get outcome(): ScriptOutcome | null {
    return this.decided
  }

  /** How far the send got, whatever the run's outcome. */
  get progress(): SendProgress {
    return {
      issued: this.sendId !== null,
      answered: this.result !== null,
      result: this.result?.sent === true ? this.result.text : null
    }
  }

  private nextId(): string {
    this.issued += 1
    return `toolu_relay_${this.options.nonce}_${this.issued}`
  }

  private decide(outcome: ScriptOutcome): ScriptAnswer {
    this.decided = outcome
    return { reply: { _tag: "EndTurn", text: "Relayed." }, outcome }
  }

  private fail(cause: ScriptFailure["cause"], detail: string): ScriptAnswer {
    return this.decide({ _tag: "Failure", failure: { cause, detail } })
  }

  private toolUse(name: string, input: Record<string, unknown>, waitRound = false): ScriptAnswer {
    const id = this.nextId()
    if (waitRound) this.waitIds.add(id)
    else if (name === "SendMessage") this.sendId = id
    else this.searchId = id
    return { reply: { _tag: "ToolUse", id, name, input, waitRound } }
  }

  private sendMessage(tools: ReadonlyArray<Block>): ScriptAnswer {
    const tool = toolNamed(tools, "SendMessage")
    if (tool === undefined) return this.fail("no_send_tool", "Claude Code loaded no SendMessage tool for the relay")
    const problem = schemaProblem(tool.input_schema)
    if (problem !== null) return this.fail("no_send_tool", `SendMessage's input schema is not one claude-peers knows: ${problem}`)
    const properties = (tool.input_schema as { properties: Record<string, Record<string, Json>> }).properties
    if (!fitsString(properties.to!, this.options.address)) {
      return this.fail("relay_failed", `the address ${cut(JSON.stringify(this.options.address), 120)} does not fit SendMessage's \`to\``)
    }
    if (!fitsString(properties.message!, this.options.message)) return this.fail("relay_failed", "the message does not fit SendMessage's `message`")
    return this.toolUse("SendMessage", { to: this.options.address, message: this.options.message })
  }

  answer(body: Json): ScriptAnswer {
    const end: ScriptAnswer = { reply: { _tag: "EndTurn", text: "" } }
    if (!isRecord(body) || !Array.isArray(body.messages)) return end
    const messages = body.messages.filter(isRecord)
    // Another request (a title, a summary): answered with nothing, never with a tool.
    if (!messages.some((message) => message.role === "user" && textOf(message.content).includes(this.options.prompt))) return end
    if (this.decided !== null) return { reply: { _tag: "EndTurn", text: "Relayed." } }
    const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : []
    const results = new Map<string, Block>()
    const notices: Array<string> = []
    for (const message of messages) {
      for (const block of blocksOf(message.content)) {
        if (block.type === "tool_result" && typeof block.tool_use_id === "string") results.set(block.tool_use_id, block)
        const text = typeof block.text === "string" ? block.text : ""
        const at = text.indexOf(noticeMarker)
        if (message.role !== "assistant" && at >= 0 && (at === 0 || text.slice(0, at).trimEnd().endsWith("]"))) notices.push(text.slice(at))
      }
    }
    if (this.issued === 0) {
      if (toolNamed(tools, "ToolSearch") !== undefined) return this.toolUse("ToolSearch", { query: "select:SendMessage", max_results: 1 })
      if (toolNamed(tools, "SendMessage") !== undefined) return this.sendMessage(tools)
      return this.fail("no_send_tool", "the relay's Claude Code offers neither ToolSearch nor SendMessage")
    }
    if (this.sendId === null) {
      const search = this.searchId === null ? undefined : results.get(this.searchId)
      if (search === undefined) return this.fail("relay_failed", "Claude Code went on without the result of ToolSearch")
      const loaded = blocksOf(search.content).some((block) => block.type === "tool_reference" && block.tool_name === "SendMessage")
      if (search.is_error === true || !loaded) {
        return this.fail("no_send_tool", `ToolSearch did not load SendMessage: ${cut(textOf(search.content) || JSON.stringify(search.content ?? null))}`)
      }
      return this.sendMessage(tools)
    }
    const send = results.get(this.sendId)
    if (send === undefined) return this.fail("relay_failed", "Claude Code went on without the result of SendMessage")
    const resultText = textOf(send.content)
    const parsed = parseOrNull(resultText)
    this.result = { text: resultText, sent: reportsSent(send.is_error === true, parsed) }
    const roundsDone = [...this.waitIds].filter((id) => results.has(id)).length
    const verdict = classify(resultText, parsed, send.is_error === true, notices, roundsDone, this.options.noticeRounds, this.options.address)
    if (verdict === "wait") return this.toolUse("ToolSearch", { query: "select:SendMessage", max_results: 1 }, true)
    return this.decide(verdict)
  }
}
