/**
 * What became of a message sent to one live session, as `Delivery.send` returns it and `send --json`
 * prints it. The outcome is what Claude Code's `SendMessage` reported, never an inference; the
 * prediction made before relaying is carried beside it, and where the two disagree the result says
 * so (a prediction that a receipt contradicts is a bug of the prediction, not a second truth).
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { InvalidMessage } from "./Errors.js"
import { maxMessageLength, messageProblem } from "./Message.js"
import { DeliveryOutcome, Prediction, Receipt } from "./SendOutcome.js"
import { Session } from "./Session.js"
import { type InboundPolicy } from "./Settings.js"

/** Where the prediction and the receipt disagree: the outcome the policy predicted, and the one Claude Code reported. */
export const Mismatch = Schema.Struct({
  predicted: Schema.Literal("accept", "hold", "refuse"),
  reported: DeliveryOutcome
})
export type Mismatch = typeof Mismatch.Type

export const DeliveryResult = Schema.Struct({
  /** `SendMessage`'s outcome for the one session resolved, confirmed still the one live at its socket. */
  outcome: DeliveryOutcome,
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
 * Why `message` cannot be sent (`Message.ts`'s rules), as the error a caller gets, or undefined.
 */
export const invalidMessage = (message: string): InvalidMessage | undefined => {
  const problem = messageProblem(message)
  return problem === undefined ? undefined : new InvalidMessage({ problem, length: message.length, limit: maxMessageLength })
}

/**
 * A message read as bytes (standard input): its text when it is valid UTF-8, else `not_utf8`. A
 * byte-order mark is not part of the message.
 */
export const messageFromBytes = (bytes: Uint8Array): Either.Either<string, InvalidMessage> => {
  try {
    return Either.right(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return Either.left(new InvalidMessage({ problem: "not_utf8", length: bytes.length, limit: maxMessageLength }))
  }
}
