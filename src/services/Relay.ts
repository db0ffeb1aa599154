/**
 * The relay: how a message reaches a live session. Nothing here writes a session's socket; a relay
 * hands the message to Claude Code's own `SendMessage` (a headless Claude Code run, in the Node
 * layer), so that Claude Code checks the endpoint's identity and the receiver applies its own
 * inbound rules. Its receipt is what `SendMessage` reported, never an inference.
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { DeliveryFailed } from "../domain/Errors.js"
import type { PermissionModeClass } from "../domain/PermissionMode.js"

export interface RelayRequest {
  /**
   * What `SendMessage` is handed as its target: `uds:<socket path>` for a session with a socket, the
   * form no other process can hold and that Claude Code delivers across homes.
   */
  readonly address: string
  /** The message, as the receiver will read it. */
  readonly message: string
  /** The Claude home the relay runs under: the receiver's, so that a name would mean what it means there. */
  readonly claudeHome: string
  /** The whole run, from start to receipt; past it the relay is stopped and the send is `timed_out`. */
  readonly timeout: Duration.Duration
  /**
   * The receiver's policy predicts a hold or a refusal, or is not certain: a relay that can only
   * tell `delivered` by the absence of a notice waits longer for one before it says so.
   */
  readonly noticeExpected?: boolean | undefined
  /**
   * Completes when the caller wants the send stopped (a signal, a shutdown). The relay is then
   * stopped as at the timeout, and the send fails with `DeliveryFailed`, cause `interrupted`, with
   * `SendMessage`'s result when Claude Code had already reported the message in the inbox. A
   * receipt that came first still counts.
   */
  readonly cancel?: Effect.Effect<void> | undefined
}

/** What `SendMessage` reported, in Claude Code's own words. */
export interface RelayReceipt {
  readonly outcome: "delivered" | "held" | "refused"
  /** `SendMessage`'s result text, as the relay received it. */
  readonly text: string
}

export interface Relay {
  /**
   * The permission-mode class the relay sends from: with `crossSessionInbound` set nowhere, the
   * receiver delivers a message only from a sender of its own class.
   */
  readonly senderClass: PermissionModeClass
  /**
   * Relays one message and returns `SendMessage`'s receipt, or `DeliveryFailed` with its cause and
   * evidence. Whatever the outcome (interrupted included), nothing the relay started outlives the call.
   */
  readonly send: (request: RelayRequest) => Effect.Effect<RelayReceipt, DeliveryFailed>
}

export const Relay = Context.GenericTag<Relay>("claude-peers/Relay")

/** Fails with `failure` once `cancel` completes; never, without one: the side of a race that a cancel wins. */
export const failWhenCancelled = <E>(cancel: Effect.Effect<void> | undefined, failure: () => E): Effect.Effect<never, E> =>
  cancel === undefined ? Effect.never : Effect.zipRight(cancel, Effect.failSync(failure))
