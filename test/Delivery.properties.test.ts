/**
 * `Delivery.send` over the shipped memory world and its memory relay, against an oracle that reads
 * the generated intent (the receiver's user setting, whether it resolves, what the relay answers,
 * whether the session is replaced at its socket during the send), never the code under test:
 * - never `delivered` unless the relay reported delivered and the session resolved is still the one
 *   at its socket;
 * - nothing relayed (the relay's record stays empty) for refuse, hold, not_live, identity_mismatch,
 *   not_addressable, or an invalid message;
 * - the address handed to the relay is always `uds:<the resolved session's socket path>`;
 * - a session replaced at the socket between the send and the confirmation is `target_changed`,
 *   its receipt kept as evidence.
 * Timeouts run on the TestClock: nothing here waits for real.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, FastCheck as fc, Fiber, Ref, TestClock } from "effect"
import { type DeliveryCause, DeliveryFailed } from "../src/domain/Errors.js"
import { unreadable } from "../src/domain/Observed.js"
import type { InboundPolicy } from "../src/domain/Settings.js"
import { Delivery, type SendOptions } from "../src/services/Delivery.js"
import { defaults } from "../src/services/Timing.js"
import { layerMemory, makeMemoryWorld, type MemoryWorld, RelayAnswer } from "../src/testing.js"
import { recordText } from "./support/records.js"

const newWorld = () => {
  const world = makeMemoryWorld()
  world.tree.makeDirectory(world.home.root, 0o700)
  world.tree.makeDirectory(world.home.sessionsDirectory, 0o700)
  return world
}

interface Registered {
  readonly pid: number
  readonly sessionId: string
  readonly socketPath: string
}

/** A live session's record, as Claude Code writes it, for a new process of the world (or the given one). */
const register = (
  world: MemoryWorld,
  options: { name: string; sessionId?: string; socket?: boolean; proc?: { pid: number; startTime: string }; startedAt?: number }
): Registered => {
  const proc = options.proc ?? world.processes.spawn()
  const sessionId = options.sessionId ?? `session-${proc.pid}`
  const socketPath = `/tmp/cc-socks/${proc.pid}.sock`
  world.tree.writeFile(
    `${world.home.sessionsDirectory}/${proc.pid}.json`,
    recordText(proc.pid, {
      procStart: proc.startTime,
      sessionId,
      name: options.name,
      messagingSocketPath: options.socket === false ? undefined : socketPath,
      startedAt: options.startedAt ?? 1796007021392
    })
  )
  return { pid: proc.pid, sessionId, socketPath }
}

const setUserPolicy = (world: MemoryWorld, value: InboundPolicy | undefined) =>
  world.tree.writeFile(world.home.settingsFile, value === undefined ? "{}" : JSON.stringify({ crossSessionInbound: value }))

const send = (world: MemoryWorld, query: { sessionId: string } | { name: string }, message: string, options?: SendOptions) =>
  Effect.flatMap(Delivery, (delivery) => delivery.send(query, message, options)).pipe(Effect.provide(layerMemory(world)))

const sentOf = (world: MemoryWorld) => Ref.get(world.relay.sent)

type Target = "live" | "dead" | "no_socket" | "other_user" | "shared_name" | "unknown"
type Answer = "delivered" | "held" | "refused" | { readonly failed: DeliveryCause }

const scenario = fc.record({
  policy: fc.constantFrom<InboundPolicy | undefined>("accept", "hold", "refuse", undefined),
  target: fc.constantFrom<Target>("live", "live", "live", "dead", "no_socket", "other_user", "shared_name", "unknown"),
  byName: fc.boolean(),
  answer: fc.oneof(
    fc.constantFrom<Answer>("delivered", "held", "refused"),
    fc.constantFrom<DeliveryCause>("no_send_tool", "relay_failed", "endpoint_refused", "relay_not_found").map((cause): Answer => ({ failed: cause }))
  ),
  replaced: fc.constantFrom("no", "no", "pid_reused", "other_process", "gone"),
  allowHold: fc.boolean(),
  message: fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom("", "   ", "\ud800"))
})
type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

const expectedOutcome = { accept: "delivered", hold: "held", refuse: "refused" } as const

describe("Delivery.send over the memory world", () => {
  it("tells the truth about every generated send", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s: Scenario) => {
        const world = newWorld()
        setUserPolicy(world, s.policy)
        world.processes.spawn() // a bystander process, so pids differ from the first ones
        const other = register(world, { name: "bystander" })
        const target = s.target === "unknown"
          ? undefined
          : register(world, {
            name: s.target === "shared_name" ? "bystander" : "target",
            socket: s.target !== "no_socket",
            ...(s.target === "other_user" ? { proc: world.processes.spawn({ uid: 0 }) } : {})
          })
        // Root's session, in a home root owns, read by uid 1000: it runs, but its inbox is not this user's.
        if (s.target === "other_user") {
          for (const at of [world.home.root, world.home.sessionsDirectory]) world.tree.chmod(at, 0o755)
          for (const at of [world.home.root, world.home.sessionsDirectory, `${world.home.sessionsDirectory}/${target!.pid}.json`]) {
            world.tree.chown(at, 0, 0)
          }
        }
        if (s.target === "dead") world.processes.kill(target!.pid)
        // The session at the socket is replaced while the relay sends (as a restarted job or a reused pid would).
        world.relay.answerNext(RelayAnswer.run(() =>
          Effect.suspend(() => {
            if (target !== undefined && s.replaced !== "no") {
              world.processes.kill(target.pid)
              if (s.replaced === "pid_reused") {
                const startTime = world.processes.reuse(target.pid)
                register(world, { name: "target", sessionId: target.sessionId, proc: { pid: target.pid, startTime }, startedAt: 1796007099999 })
              } else if (s.replaced === "other_process") {
                world.tree.remove(`${world.home.sessionsDirectory}/${target.pid}.json`)
                register(world, { name: "target", sessionId: target.sessionId })
              }
            }
            return typeof s.answer === "string"
              ? Effect.succeed({ outcome: s.answer, text: `scripted ${s.answer}` })
              : Effect.fail(new DeliveryFailed({ cause: s.answer.failed, detail: "scripted", session: null, relay: null }))
          })
        ))
        const query = s.byName ? { name: s.target === "shared_name" ? "bystander" : "target" } : { sessionId: target?.sessionId ?? "session-none" }
        const result = await Effect.runPromise(Effect.either(send(world, query, s.message, { allowHold: s.allowHold })))
        const sent = await Effect.runPromise(sentOf(world))

        const reason = Either.isLeft(result) ? ("reason" in result.left ? result.left.reason : result.left._tag) : "ok"
        // The oracle, in the order the contract gives.
        const validMessage = s.message.trim() !== "" && s.message !== "\ud800"
        if (!validMessage) {
          expect(reason).toBe("invalid_message")
          expect(sent).toEqual([])
          return
        }
        if (s.target === "unknown" || s.target === "dead") {
          expect(reason).toBe("not_live")
          expect(sent).toEqual([])
          return
        }
        if (s.target === "shared_name") {
          // By name: two live sessions answer; by id: its name is shared with the bystander.
          expect(reason).toBe("identity_mismatch")
          expect(sent).toEqual([])
          return
        }
        if (s.target === "no_socket" || s.target === "other_user") {
          expect(reason).toBe("not_addressable")
          expect(sent).toEqual([])
          return
        }
        if (s.policy === "refuse") {
          expect(reason).toBe("inbound_refused")
          expect(sent).toEqual([])
          return
        }
        if (s.policy === "hold" && !s.allowHold) {
          expect(reason).toBe("would_be_held")
          expect(sent).toEqual([])
          return
        }
        // Relayed, once, to the socket of the session resolved; never to the bystander.
        expect(sent.map((m) => m.address)).toEqual([`uds:${target!.socketPath}`])
        expect(sent[0]!.address).not.toBe(`uds:${other.socketPath}`)
        expect(sent[0]!.message).toBe(s.message)
        expect(sent[0]!.claudeHome).toBe(world.home.root)
        if (typeof s.answer !== "string") {
          expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" && result.left.cause).toBe(s.answer.failed)
          return
        }
        if (s.replaced !== "no") {
          expect(Either.isLeft(result)).toBe(true)
          const failed = Either.isLeft(result) && result.left._tag === "DeliveryFailed" ? result.left : undefined
          expect(failed?.cause).toBe("target_changed")
          expect(failed?.receipt?.outcome).toBe(s.answer)
          // The message was relayed all the same: the sentence must not read as nothing sent.
          expect(failed?.message.includes(`SendMessage had reported it ${s.answer} at the session's socket`)).toBe(s.answer !== "refused")
          return
        }
        expect(Either.isRight(result)).toBe(true)
        const delivered = Either.getOrThrow(result)
        expect(delivered.outcome).toBe(s.answer)
        expect(delivered.session.pid).toBe(target!.pid)
        // Nothing set: the permission-mode classes decide, and the world's sessions prompt, as the relay does.
        const predicted = s.policy ?? "accept"
        expect(delivered.predicted.effective).toBe(predicted)
        const disagrees = expectedOutcome[predicted] !== s.answer
        expect(delivered.mismatch).toEqual(disagrees ? { predicted, reported: s.answer } : null)
      }),
      { numRuns: 200 }
    )
  }, 120_000)
})

describe("Delivery.send: the relay's timeout, on the TestClock", () => {
  it.effect("a relay that never answers is timed_out at the request's timeout, not before, with the session as evidence", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      world.relay.answerOthers(RelayAnswer.noAnswer)
      const fiber = yield* Effect.fork(Effect.either(send(world, { sessionId: target.sessionId }, "hello", { timeout: "5 seconds" })))
      yield* TestClock.adjust(Duration.millis(4999))
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(Duration.millis(1))
      const result = yield* Fiber.join(fiber)
      expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" ? [result.left.cause, result.left.session?.pid] : result).toEqual([
        "timed_out",
        target.pid
      ])
      expect((yield* sentOf(world)).map((m) => Duration.toMillis(m.timeout))).toEqual([5000])
    }))

  it.effect("without a timeout option, Timing's sendTimeout bounds the send", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      world.relay.answerOthers(RelayAnswer.noAnswer)
      const fiber = yield* Effect.fork(Effect.either(send(world, { sessionId: target.sessionId }, "hello")))
      yield* TestClock.adjust(defaults.sendTimeout)
      const result = yield* Fiber.join(fiber)
      expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" && result.left.cause).toBe("timed_out")
    }))

  it.effect("a slow relay that answers within the timeout is delivered once its delay has passed", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      world.relay.answerTo(`uds:${target.socketPath}`, RelayAnswer.slow("3 seconds", RelayAnswer.delivered("sent")))
      const fiber = yield* Effect.fork(send(world, { name: "target" }, "hello", { timeout: "10 seconds" }))
      yield* TestClock.adjust("2999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      expect([result.outcome, result.receipt.text, result.session.pid, result.mismatch]).toEqual(["delivered", "sent", target.pid, null])
    }))

  it.effect("a cancel done before the relay starts: interrupted, and nothing is handed to the relay", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      const result = yield* Effect.either(send(world, { sessionId: target.sessionId }, "hello", { cancel: Effect.void }))
      expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" ? [result.left.cause, result.left.sendResult] : result).toEqual([
        "interrupted",
        null
      ])
      expect(yield* sentOf(world)).toEqual([])
    }))

  it.effect("a cancel during the relay: interrupted, the request handed over once; a receipt that came first still counts", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      world.relay.answerNext(RelayAnswer.slow("3 seconds", RelayAnswer.delivered()), RelayAnswer.slow("1 second", RelayAnswer.delivered("first")))
      const cancelled = yield* Effect.fork(Effect.either(send(world, { sessionId: target.sessionId }, "hello", { cancel: Effect.sleep("2 seconds") })))
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(cancelled)
      expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" && result.left.cause).toBe("interrupted")
      expect((yield* sentOf(world)).length).toBe(1)
      const answered = yield* Effect.fork(send(world, { sessionId: target.sessionId }, "hello", { cancel: Effect.sleep("2 seconds") }))
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(answered)).receipt.text).toBe("first")
    }))

  it.effect("a slow relay past the timeout is timed_out", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      world.relay.answerNext(RelayAnswer.slow("3 seconds", RelayAnswer.delivered()))
      const fiber = yield* Effect.fork(Effect.either(send(world, { sessionId: target.sessionId }, "hello", { timeout: "2 seconds" })))
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(fiber)
      expect(Either.isLeft(result) && result.left._tag === "DeliveryFailed" && result.left.cause).toBe("timed_out")
    }))
})

describe("Delivery.send: what the result says", () => {
  it.effect("an uncertain policy is relayed, and the result says the prediction was partial", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      // The process's arguments cannot be read: a --settings there could say otherwise.
      world.processes.stage(target.pid, { arguments: unreadable("EACCES") })
      const result = yield* send(world, { sessionId: target.sessionId }, "hello")
      expect(result.predicted).toEqual({ effective: "accept", decidedBy: "userSettings", certainty: "partial" })
      expect(yield* sentOf(world)).toHaveLength(1)
    }))

  it.effect("hold with allowHold is relayed and held; a receipt that contradicts the prediction carries both", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "hold")
      const target = register(world, { name: "target" })
      world.relay.answerNext(RelayAnswer.held(), RelayAnswer.delivered())
      const held = yield* send(world, { sessionId: target.sessionId }, "hello", { allowHold: true })
      expect([held.outcome, held.mismatch]).toEqual(["held", null])
      const contradicted = yield* send(world, { sessionId: target.sessionId }, "hello again", { allowHold: true })
      expect([contradicted.outcome, contradicted.mismatch]).toEqual(["delivered", { predicted: "hold", reported: "delivered" }])
    }))

  it.effect("nothing set anywhere: the classes predict (a prompting receiver accepts the prompting relay); the receipt still decides", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, undefined)
      const target = register(world, { name: "target" })
      world.relay.answerNext(RelayAnswer.held())
      const result = yield* send(world, { sessionId: target.sessionId }, "hello")
      expect([result.outcome, result.predicted.effective, result.predicted.decidedBy, result.mismatch]).toEqual([
        "held",
        "accept",
        "default",
        { predicted: "accept", reported: "held" }
      ])
    }))

  it.effect("nothing set anywhere and a receiver in bypass mode: held for the prompting relay, so not relayed without allowHold", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, undefined)
      const target = register(world, { name: "target", proc: world.processes.spawn({ arguments: ["claude", "--dangerously-skip-permissions"] }) })
      const refused = yield* Effect.flip(send(world, { sessionId: target.sessionId }, "hello"))
      expect([refused._tag, "predicted" in refused ? refused.predicted?.effective : undefined]).toEqual(["WouldBeHeld", "hold"])
      expect(yield* Ref.get(world.relay.sent)).toEqual([])
      world.relay.answerNext(RelayAnswer.held())
      const held = yield* send(world, { sessionId: target.sessionId }, "hello", { allowHold: true })
      expect([held.outcome, held.predicted.effective, held.mismatch]).toEqual(["held", "hold", null])
    }))

  it.effect("sent by name, the relay is handed the socket: a name that moves meanwhile cannot take the message", () =>
    Effect.gen(function*() {
      const world = newWorld()
      setUserPolicy(world, "accept")
      const target = register(world, { name: "target" })
      const result = yield* send(world, { name: "Target" }, "hello")
      expect(result.session.pid).toBe(target.pid)
      expect((yield* sentOf(world)).map((m) => m.address)).toEqual([`uds:${target.socketPath}`])
    }))
})
