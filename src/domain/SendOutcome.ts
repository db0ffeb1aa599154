/**
 * The two halves of a send's answer that errors and results share: what the receiver's policy
 * predicted before relaying, and what Claude Code's `SendMessage` reported.
 */
import * as Schema from "effect/Schema"

/** The prediction a send rests on: the receiver's policy in effect (`policy`) for a message from the relay. */
export const Prediction = Schema.Struct({
  effective: Schema.NullOr(Schema.Literal("accept", "hold", "refuse")),
  decidedBy: Schema.String,
  certainty: Schema.Literal("certain", "partial")
})
export type Prediction = typeof Prediction.Type

/** What `SendMessage` reported: delivered, held for the receiver's approval, or refused. */
export const DeliveryOutcome = Schema.Literal("delivered", "held", "refused")
export type DeliveryOutcome = typeof DeliveryOutcome.Type

/** What Claude Code's `SendMessage` reported to the relay: its outcome and its result text. */
export const Receipt = Schema.Struct({
  outcome: DeliveryOutcome,
  text: Schema.String
})
export type Receipt = typeof Receipt.Type
