/**
 * Sending a message into one live session, and telling the truth about what became of it. Two
 * rules earn their place here:
 * - The message is addressed to the socket of the session resolved (`uds:<socketPath>`), never to
 *   its name: a name can move to another session between the resolve and the send, and the socket
 *   is held by one process only.
 * - "delivered" is said only when `SendMessage` reported it *and* the session resolved is, after
 *   the receipt, still the one live at that socket (same pid, session id, socket and start time).
 *   Otherwise the receipt is kept as evidence of a `target_changed` failure.
 * Nothing is relayed for a session that does not resolve, or whose policy refuses or would hold
 * the message (unless the caller allows a held one).
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { type DeliveryResult, invalidMessage, mismatchOf } from "../domain/Delivery.js"
import { DeliveryFailed, InboundRefused, type InvalidMessage, NotAddressable, WouldBeHeld } from "../domain/Errors.js"
import type { PermissionModeClass } from "../domain/PermissionMode.js"
import { senderOutcome, type SessionPolicy } from "../domain/Policy.js"
import type { Prediction } from "../domain/SendOutcome.js"
import type { Session } from "../domain/Session.js"
import { candidateOf, queryOf } from "../domain/SessionIdentity.js"
import { ClaudeHome } from "./ClaudeHome.js"
import { Policy } from "./Policy.js"
import { Registry, type ResolveError, type ResolveQuery } from "./Registry.js"
import { sameProvenSession } from "./RegistryScan.js"
import { failWhenCancelled, Relay } from "./Relay.js"
import { Timing } from "./Timing.js"

export interface SendOptions {
  /**
   * Relay a message the receiver's policy would hold for its user's approval. A held message waits
   * unseen and may expire, so without this a predicted `hold` is `WouldBeHeld`, nothing relayed.
   */
  readonly allowHold?: boolean | undefined
  /** Resolve a session id whose name another live session shares (as `Registry.resolve`'s option). */
  readonly allowSharedName?: boolean | undefined
  /** How long the relay may take, from its start to the receipt (default `Timing`'s `sendTimeout`). */
  readonly timeout?: Duration.DurationInput | undefined
  /**
   * Completes when the send should stop (a signal, a shutdown): the relay is stopped as at the
   * timeout and the send fails with `DeliveryFailed`, cause `interrupted`, carrying `sendResult` when
   * Claude Code had already reported the message in the inbox. Interrupting the send's fiber stops
   * it as well, but leaves nobody to tell what became of the message.
   */
  readonly cancel?: Effect.Effect<void> | undefined
}

export type SendError = ResolveError | InvalidMessage | InboundRefused | WouldBeHeld | DeliveryFailed

export interface Delivery {
  /**
   * Sends `message` to the one live session `query` resolves to, through the relay, and returns
   * what Claude Code's `SendMessage` reported for it, confirmed for that session; or refuses before
   * relaying (`InvalidMessage`, the resolve's refusals, `InboundRefused`, `WouldBeHeld`); or fails
   * with `DeliveryFailed` and its evidence.
   */
  readonly send: (query: ResolveQuery, message: string, options?: SendOptions) => Effect.Effect<DeliveryResult, SendError>
}

export const Delivery = Context.GenericTag<Delivery>("claude-peers/Delivery")

/**
 * What the receiver's policy predicts for a message from a sender of `senderClass`: the policy in
 * effect when a setting decides it; with nothing set, Claude Code's rule for the two sessions'
 * permission-mode classes (same class: delivered, else held), null where the receiver's class is
 * unknown. Sure only when every input to it is.
 */
export const predictionFor = (policy: SessionPolicy, senderClass: PermissionModeClass): Prediction => {
  const outcome = senderOutcome(policy, senderClass)
  return { effective: outcome.outcome, decidedBy: policy.decidedBy, certainty: outcome.certainty }
}

/** Whether `now` is the process resolved: the fields that together name one process and its inbox, and its proven start. */
const sameProcess = (resolved: Session, now: Session): boolean =>
  sameProvenSession(resolved, now) && now.socketPath === resolved.socketPath && now.startedAtMs === resolved.startedAtMs

export const make = Effect.gen(function*() {
  const policies = yield* Policy
  const registry = yield* Registry
  const relay = yield* Relay
  const home = yield* ClaudeHome
  const timings = yield* Timing

  /**
   * Whether the session resolved is still the one live at its socket, read again by its id (its
   * name may be shared by now, which does not matter for a socket). A failure to read it again
   * leaves the delivery unconfirmed, which is not "delivered" either.
   */
  const unconfirmedBecause = (resolved: Session): Effect.Effect<string | undefined> =>
    Effect.map(Effect.either(registry.resolve({ sessionId: resolved.sessionId }, { allowSharedName: true })), (now) => {
      if (Either.isLeft(now)) return `after the receipt, the session could not be resolved again: ${now.left.message}`
      if (sameProcess(resolved, now.right)) return undefined
      return `after the receipt, session id ${resolved.sessionId} is pid ${now.right.pid} at ${now.right.socketPath ?? "no socket"} (started ${
        now.right.startedAtMs ?? "?"
      }), not pid ${resolved.pid} at ${resolved.socketPath} (started ${resolved.startedAtMs ?? "?"})`
    })

  /** A cancel that came before the relay started: nothing was relayed. */
  const cancelledBeforeRelay = (cancel: Effect.Effect<void> | undefined) =>
    failWhenCancelled(cancel, () =>
      new DeliveryFailed({
        cause: "interrupted",
        detail: "the send was interrupted before the relay started: nothing was relayed",
        session: null,
        relay: null
      }))

  const send = (query: ResolveQuery, message: string, options: SendOptions = {}): Effect.Effect<DeliveryResult, SendError> =>
    // The cancel is raced first: one already done wins over a step that is done at once, so a relay
    // is never started after it.
    Effect.raceFirst(cancelledBeforeRelay(options.cancel), prepare(query, message, options)).pipe(
      Effect.flatMap((prepared) => relayed(prepared, message, options)),
      Effect.withSpan("Delivery.send")
    )

  const prepare = Effect.fnUntraced(
    function*(query: ResolveQuery, message: string, options: SendOptions) {
      const invalid = invalidMessage(message)
      if (invalid !== undefined) return yield* invalid
      // Another user's session is refused as `resolve` refuses it: its socket sits in that user's
      // private directory, so a relay of this user could only fail, or deliver where it may not.
      const { policy, session } = yield* policies.resolve(query, { allowSharedName: options.allowSharedName === true, allowOtherUser: false })
      const receiver = candidateOf(session)
      const predicted = predictionFor(policy, relay.senderClass)
      if (predicted.effective === "refuse") return yield* new InboundRefused({ query: queryOf(query), session: receiver, predicted })
      if (predicted.effective === "hold" && options.allowHold !== true) {
        return yield* new WouldBeHeld({ query: queryOf(query), session: receiver, predicted })
      }
      // The resolve refuses an unaddressable session; this holds the address to that rule.
      if (session.socketPath === null || session.unaddressable !== null) {
        return yield* new NotAddressable({ query: queryOf(query), session: receiver, because: session.unaddressable ?? "no_socket" })
      }
      // A stopped process reads nothing until continued: the relay's call would hang, or fail and deliver later.
      if (session.stopped) {
        return yield* new DeliveryFailed({
          cause: "target_stopped",
          detail: `pid ${session.pid} is stopped (SIGSTOP or a debugger); nothing was relayed: continue it (kill -CONT ${session.pid}) and send again`,
          session: receiver,
          relay: null,
          receipt: null,
          predicted
        })
      }
      return { session, socketPath: session.socketPath, receiver, predicted }
    }
  )

  const relayed = Effect.fnUntraced(
    function*(
      { predicted, receiver, session, socketPath }: {
        readonly session: Session
        readonly socketPath: string
        readonly receiver: ReturnType<typeof candidateOf>
        readonly predicted: Prediction
      },
      message: string,
      options: SendOptions
    ): Effect.fn.Return<DeliveryResult, SendError> {
      const timeout = options.timeout === undefined ? timings.sendTimeout : Duration.decode(options.timeout)
      const receipt = yield* relay.send({
        address: `uds:${socketPath}`,
        message,
        claudeHome: session.home ?? home.root,
        timeout,
        noticeExpected: predicted.effective !== "accept" || predicted.certainty !== "certain",
        cancel: options.cancel
      }).pipe(
        Effect.mapError((failed) =>
          new DeliveryFailed({
            cause: failed.cause,
            detail: failed.detail,
            session: failed.session ?? receiver,
            relay: failed.relay,
            receipt: failed.receipt,
            predicted: failed.predicted ?? predicted,
            sendResult: failed.sendResult
          })
        )
      )
      const unconfirmed = yield* unconfirmedBecause(session)
      if (unconfirmed !== undefined) {
        return yield* new DeliveryFailed({ cause: "target_changed", detail: unconfirmed, session: receiver, relay: null, receipt, predicted })
      }
      return {
        outcome: receipt.outcome,
        receipt: { outcome: receipt.outcome, text: receipt.text },
        predicted,
        session,
        mismatch: mismatchOf(predicted, receipt)
      }
    }
  )

  return Delivery.of({ send })
})

/** Delivery over the policy, the registry, the relay and the Claude home the relay runs under. */
export const layer: Layer.Layer<Delivery, never, Policy | Registry | Relay | ClaudeHome> = Layer.effect(Delivery, make)
