/**
 * What became of a message sent to one live session, as `Delivery.send` returns it and `send --json`
 * prints it. The outcome is what Claude Code's `SendMessage` reported, never an inference; the
 * prediction made before relaying is carried beside it, and where the two disagree the result says
 * so (a prediction that a receipt contradicts is a bug of the prediction, not a second truth).
 */
import * as Schema from "effect/Schema"
import { InvalidMessage, Prediction, Receipt } from "./Errors.js"
import { Session } from "./Session.js"
import { type InboundPolicy } from "./Settings.js"

/** Where the prediction and the receipt disagree: the outcome the policy predicted, and the one Claude Code reported. */
export const Mismatch = Schema.Struct({
  predicted: Schema.Literal("accept", "hold", "refuse"),
  reported: Receipt.fields.outcome
})
export type Mismatch = typeof Mismatch.Type

export const DeliveryResult = Schema.Struct({
  /** `SendMessage`'s outcome for the one session resolved, confirmed still the one live at its socket. */
  outcome: Receipt.fields.outcome,
  receipt: Receipt,
  /** The receiver's policy as predicted before relaying; `certainty: "partial"` means the send went ahead on an uncertain answer. */
  predicted: Prediction,
  /** The session, as `resolve` gave it. */
  session: Session,
  /** Null when the receipt is what the prediction said, or when nothing was predicted (`effective: null`). */
  mismatch: Schema.NullOr(Mismatch)
})
export type DeliveryResult = typeof DeliveryResult.Type

/** The receipt each prediction stands for. */
const expectedOutcome: Record<InboundPolicy, Receipt["outcome"]> = { accept: "delivered", hold: "held", refuse: "refused" }

/** Where `receipt` contradicts `predicted`, the two; null otherwise. */
export const mismatchOf = (predicted: Prediction, receipt: Receipt): Mismatch | null =>
  predicted.effective === null || expectedOutcome[predicted.effective] === receipt.outcome
    ? null
    : { predicted: predicted.effective, reported: receipt.outcome }

/**
 * The longest message sent in one piece, in UTF-16 code units. Claude Code 2.1.332's `SendMessage`
 * refuses only an empty or white-space message and states no length limit of its own, so this bound
 * is claude-peers' own, conservative: the message travels as one tool argument of a model turn and
 * one frame on the receiver's socket, and a receiver shows a very long text only in part.
 */
export const maxMessageLength = 100_000

/** An unpaired UTF-16 surrogate: a string holding one has no UTF-8 encoding. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Why `message` cannot be sent, or undefined: empty or white space only (what `SendMessage` itself
 * refuses), over `maxMessageLength`, or not representable as UTF-8. Decided before anything resolves or
 * runs, so that a bad message costs nothing and relays nothing.
 */
export const invalidMessage = (message: string): InvalidMessage | undefined => {
  const at = (problem: InvalidMessage["problem"]) => new InvalidMessage({ problem, length: message.length, limit: maxMessageLength })
  if (message.trim().length === 0) return at("empty")
  if (loneSurrogate.test(message)) return at("not_utf8")
  if (message.length > maxMessageLength) return at("too_long")
  return undefined
}

/**
 * A message read as bytes (standard input): valid UTF-8 or `not_utf8`. A byte-order mark is not
 * part of the message.
 */
export const messageFromBytes = (bytes: Uint8Array): { readonly message: string } | InvalidMessage => {
  try {
    return { message: new TextDecoder("utf-8", { fatal: true }).decode(bytes) }
  } catch {
    return new InvalidMessage({ problem: "not_utf8", length: bytes.length, limit: maxMessageLength })
  }
}
