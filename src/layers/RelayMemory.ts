/**
 * A relay in memory, for the tests of programs that send: each send gets the answer the test
 * scripted (delivered, held, refused, failed with a cause, no answer, or an answer after a delay on
 * Effect's `Clock`), and every request handed to it is recorded, so a test can check what was sent
 * to whom, and that nothing was sent at all.
 *
 * It keeps the real relay's one rule a caller can observe: the request's timeout bounds the whole
 * send, on Effect's `Clock` (a `TestClock` drives it), and past it the send is `timed_out`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { type DeliveryCause, DeliveryFailed, type RelayRun } from "../domain/Errors.js"
import type { PermissionModeClass } from "../domain/PermissionMode.js"
import { failWhenCancelled, Relay, type RelayReceipt, type RelayRequest } from "../services/Relay.js"

/** What the memory relay answers to one send. */
export type RelayAnswer =
  | { readonly _tag: "delivered" | "held" | "refused"; readonly text: string }
  | {
    readonly _tag: "failed"
    readonly cause: DeliveryCause
    readonly detail: string
    readonly relay: RelayRun | null
    /** `SendMessage`'s result, for a failure after Claude Code reported the message in the inbox. */
    readonly sendResult: string | null
  }
  /** Never answers: the send ends at its timeout, `timed_out`, as a relay that hangs does. */
  | { readonly _tag: "noAnswer" }
  /** `answer`, once `delay` has passed on Effect's `Clock`. */
  | { readonly _tag: "slow"; readonly delay: Duration.Duration; readonly answer: RelayAnswer }
  /**
   * Whatever `run` does, for a test that acts during the send (replaces the session at the socket,
   * say). It gets the request, `cancel` included, and answers a cancelled send as it likes; every
   * other answer is raced against the `cancel`, raced first, so that one already done wins.
   */
  | { readonly _tag: "run"; readonly run: (request: RelayRequest) => Effect.Effect<RelayReceipt, DeliveryFailed> }

/** The answers, built. */
export const RelayAnswer = {
  delivered: (text = "Message delivered."): RelayAnswer => ({ _tag: "delivered", text }),
  held: (text = "Held peer message for the receiver's approval."): RelayAnswer => ({ _tag: "held", text }),
  refused: (text = "The message was refused by the receiving session."): RelayAnswer => ({ _tag: "refused", text }),
  failed: (
    cause: DeliveryCause,
    detail = `the memory relay was scripted to fail (${cause})`,
    relay: RelayRun | null = null,
    sendResult: string | null = null
  ): RelayAnswer => ({ _tag: "failed", cause, detail, relay, sendResult }),
  noAnswer: { _tag: "noAnswer" } as RelayAnswer,
  slow: (delay: Duration.DurationInput, answer: RelayAnswer): RelayAnswer => ({ _tag: "slow", delay: Duration.decode(delay), answer }),
  run: (run: (request: RelayRequest) => Effect.Effect<RelayReceipt, DeliveryFailed>): RelayAnswer => ({ _tag: "run", run })
} as const

/** One request the relay was handed: what was sent to whom. */
export interface SentMessage {
  readonly address: string
  readonly message: string
  readonly claudeHome: string
  readonly timeout: Duration.Duration
  /** Whether the send expected a hold or refusal notice (`RelayRequest.noticeExpected`). */
  readonly noticeExpected: boolean
}

export interface MemoryRelay {
  readonly senderClass: PermissionModeClass
  /** Every request handed to the relay, in order, answered or not. */
  readonly sent: Ref.Ref<ReadonlyArray<SentMessage>>
  /** The answers the next sends get, in order, whatever their address; they come before `answerTo`'s. */
  readonly answerNext: (...answers: ReadonlyArray<RelayAnswer>) => void
  /** The answer every send to `address` gets (once the queued answers are used up); `undefined` removes it. */
  readonly answerTo: (address: string, answer: RelayAnswer | undefined) => void
  /** The answer of any other send (initially `delivered`). */
  readonly answerOthers: (answer: RelayAnswer) => void
  /** The answer a send to `address` gets now, used up if it was a queued one: what the relay layer asks for each send. */
  readonly takeAnswer: (address: string) => RelayAnswer
}

export interface MemoryRelayOptions {
  /** The permission-mode class the relay sends from (default `prompting`, as a `claude -p` run's default mode). */
  readonly senderClass?: PermissionModeClass | undefined
}

export const makeMemoryRelay = (options: MemoryRelayOptions = {}): MemoryRelay => {
  const queued: Array<RelayAnswer> = []
  const byAddress = new Map<string, RelayAnswer>()
  let others = RelayAnswer.delivered()
  return {
    senderClass: options.senderClass ?? "prompting",
    sent: Ref.unsafeMake<ReadonlyArray<SentMessage>>([]),
    answerNext: (...answers) => {
      for (const answer of answers) queued.push(answer)
    },
    answerTo: (address, answer) => void (answer === undefined ? byAddress.delete(address) : byAddress.set(address, answer)),
    answerOthers: (answer) => void (others = answer),
    takeAnswer: (address) => queued.shift() ?? byAddress.get(address) ?? others
  }
}

const answered = (answer: RelayAnswer, request: RelayRequest): Effect.Effect<RelayReceipt, DeliveryFailed> => {
  switch (answer._tag) {
    case "delivered":
    case "held":
    case "refused":
      return Effect.succeed({ outcome: answer._tag, text: answer.text })
    case "failed":
      return Effect.fail(new DeliveryFailed({ cause: answer.cause, detail: answer.detail, session: null, relay: answer.relay, sendResult: answer.sendResult }))
    case "noAnswer":
      return Effect.never
    case "slow":
      return Effect.zipRight(Effect.sleep(answer.delay), answered(answer.answer, request))
    case "run":
      return answer.run(request)
  }
}

/** A send stopped by its caller's `cancel`, as the Node relay reports one that came before the receipt. */
const cancelled = (request: RelayRequest): Effect.Effect<never, DeliveryFailed> =>
  failWhenCancelled(
    request.cancel,
    () => new DeliveryFailed({ cause: "interrupted", detail: "the send was interrupted before its outcome was known", session: null, relay: null })
  )

/** The `Relay` over a memory relay. */
export const make = (relay: MemoryRelay): Relay =>
  Relay.of({
    senderClass: relay.senderClass,
    send: (request) =>
      Effect.suspend(() => {
        const answer = relay.takeAnswer(request.address)
        const { address, claudeHome, message, timeout } = request
        const noticeExpected = request.noticeExpected === true
        return Ref.update(relay.sent, (sent) => [...sent, { address, message, claudeHome, timeout, noticeExpected }]).pipe(
          Effect.zipRight(answer._tag === "run" ? answer.run(request) : Effect.raceFirst(cancelled(request), answered(answer, request))),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new DeliveryFailed({
                cause: "timed_out",
                detail: `no receipt from the relay within ${Duration.format(timeout)}`,
                session: null,
                relay: null
              })
          })
        )
      })
  })

export const layer = (relay: MemoryRelay): Layer.Layer<Relay> => Layer.sync(Relay, () => make(relay))
