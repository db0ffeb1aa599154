/**
 * `claude-peers send` over the memory world and its memory relay, through the mounted command (the
 * same walk, parser and handler as the standalone command): exit codes, the JSON result and errors
 * with their evidence, standard input as bytes, message validation as usage errors that never echo
 * the message, terminal-safe human output.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Console, Duration, Effect, Exit, Fiber, Layer, Ref, TestClock } from "effect"
import { command, ExitCode } from "../src/cli.js"
import { StandardInput } from "../src/cli/Input.js"
import { DeliveryFailed } from "../src/domain/Errors.js"
import { maxMessageLength } from "../src/domain/Message.js"
import { layerMemory, makeMemoryWorld, type MemoryWorld, RelayAnswer } from "../src/testing.js"
import { recordText, sessionJsonKeys } from "./support/records.js"

const host = Command.make("my-tool").pipe(Command.withSubcommands([command]))
const runHost = Command.run(host, { name: "my-tool", version: "1.0.0" })

const newWorld = (policy?: string) => {
  const world = makeMemoryWorld()
  world.tree.makeDirectory(world.home.root, 0o700)
  world.tree.makeDirectory(world.home.sessionsDirectory, 0o700)
  world.tree.writeFile(world.home.settingsFile, policy === undefined ? "{}" : JSON.stringify({ crossSessionInbound: policy }))
  return world
}

const register = (world: MemoryWorld, name: string, options: { socket?: boolean } = {}) => {
  const proc = world.processes.spawn()
  world.tree.writeFile(
    `${world.home.sessionsDirectory}/${proc.pid}.json`,
    recordText(proc.pid, {
      procStart: proc.startTime,
      sessionId: `session-${proc.pid}`,
      name,
      messagingSocketPath: options.socket === false ? undefined : `/tmp/cc-socks/${proc.pid}.sock`
    })
  )
  return { pid: proc.pid, sessionId: `session-${proc.pid}`, socketPath: `/tmp/cc-socks/${proc.pid}.sock` }
}

/** Runs `my-tool claude-peers ARGS…` on the world; `stdin` is what standard input holds. */
const run = (
  world: MemoryWorld,
  args: ReadonlyArray<string>,
  stdin?: Uint8Array,
  { stderr, stdout }: { readonly stdout: Array<string>; readonly stderr: Array<string> } = { stdout: [], stderr: [] }
) =>
  Effect.gen(function*() {
    const base = yield* Effect.console
    const captured: Console.Console = {
      ...base,
      log: (...parts) => Effect.sync(() => void stdout.push(parts.join(" "))),
      error: (...parts) => Effect.sync(() => void stderr.push(parts.join(" ")))
    }
    const exit = yield* runHost(["node", "my-tool", "claude-peers", ...args]).pipe(
      Console.withConsole(captured),
      Effect.provideService(StandardInput, {
        read: (maxBytes) => Effect.sync(() => (stdin ?? new Uint8Array()).subarray(0, maxBytes + 1))
      }),
      Effect.provide(Layer.merge(layerMemory(world), NodeContext.layer)),
      Effect.exit
    )
    const code = Exit.isSuccess(exit) ? 0 : exit.cause._tag === "Fail" && exit.cause.error instanceof ExitCode ? exit.cause.error.code : undefined
    return { code, stdout, stderr, sent: yield* Ref.get(world.relay.sent) }
  })

const jsonOf = (lines: ReadonlyArray<string>) => JSON.parse(lines.join("\n")) as Record<string, any>

describe("send", () => {
  it.effect("delivered: exit 0, the JSON result with the session as resolve gives it, sent to the socket", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      world.relay.answerNext(RelayAnswer.delivered("Message sent."))
      const { code, sent, stderr, stdout } = yield* run(world, ["send", target.sessionId, "hello there", "--json"])
      expect(code).toBe(0)
      expect(stderr).toEqual([])
      const result = jsonOf(stdout)
      expect(Object.keys(result)).toEqual(["outcome", "receipt", "predicted", "session", "mismatch"])
      expect(result).toMatchObject({
        outcome: "delivered",
        receipt: { outcome: "delivered", text: "Message sent." },
        predicted: { effective: "accept", decidedBy: "userSettings", certainty: "certain" },
        mismatch: null
      })
      expect(Object.keys(result.session)).toEqual([...sessionJsonKeys, "transcriptPath", "transcriptUpdatedAtMs"])
      expect(result.session.pid).toBe(target.pid)
      expect(sent.map((m) => [m.address, m.message, m.noticeExpected])).toEqual([[`uds:${target.socketPath}`, "hello there", false]])
    }))

  it.effect("delivered, for people: one line naming the pid and name, the receipt made terminal-safe, and never the message", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "al\u001b[31mpha")
      world.relay.answerNext(RelayAnswer.delivered("ok\u001b]0;pwned\u0007\nsecond line"))
      const { code, stdout } = yield* run(world, ["send", "--name", "al\u001b[31mpha", "secret \u001b[2J text"])
      expect(code).toBe(0)
      const text = stdout.join("\n")
      expect(text.split("\n")[0]).toBe(`delivered to pid ${target.pid} (al\\u{1b}[31mpha)`)
      expect(text).toContain("receipt: ok\\u{1b}]0;pwned\\u{7}\\u{a}second line")
      expect(text).not.toContain("secret")
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    }))

  it.effect("a refusing policy: exit 9 inbound_refused with its evidence, nothing relayed", () =>
    Effect.gen(function*() {
      const world = newWorld("refuse")
      const target = register(world, "alpha")
      const { code, sent, stdout } = yield* run(world, ["send", target.sessionId, "hello", "--json"])
      expect(code).toBe(9)
      expect(sent).toEqual([])
      expect(jsonOf(stdout).error).toMatchObject({
        reason: "inbound_refused",
        session: { pid: target.pid, name: "alpha" },
        predicted: { effective: "refuse", decidedBy: "userSettings" }
      })
    }))

  it.effect("a holding policy: exit 10 would_be_held, nothing relayed; with --allow-hold the held receipt exits 0", () =>
    Effect.gen(function*() {
      const world = newWorld("hold")
      const target = register(world, "alpha")
      const refused = yield* run(world, ["send", target.sessionId, "hello", "--json"])
      expect(refused.code).toBe(10)
      expect(refused.sent).toEqual([])
      expect(jsonOf(refused.stdout).error.reason).toBe("would_be_held")
      world.relay.answerNext(RelayAnswer.held())
      const held = yield* run(world, ["send", target.sessionId, "hello", "--allow-hold", "--json"])
      expect(held.code).toBe(0)
      expect(jsonOf(held.stdout)).toMatchObject({ outcome: "held", mismatch: null })
      // A hold is predicted: the relay waits longer for the notice that says so.
      expect(held.sent.map((m) => m.noticeExpected)).toEqual([true])
    }))

  it.effect("a receipt that says refused: the result is printed, exit 9; held without --allow-hold: exit 10", () =>
    Effect.gen(function*() {
      const world = newWorld(undefined)
      const target = register(world, "alpha")
      world.relay.answerNext(RelayAnswer.refused("The message was refused."), RelayAnswer.held())
      const refused = yield* run(world, ["send", target.sessionId, "hello", "--json"])
      expect(refused.code).toBe(9)
      expect(jsonOf(refused.stdout)).toMatchObject({ outcome: "refused", receipt: { text: "The message was refused." } })
      const held = yield* run(world, ["send", target.sessionId, "hello"])
      expect(held.code).toBe(10)
      expect(held.stdout.join("\n").split("\n")[0]).toBe(`held for its user's approval by pid ${target.pid} (alpha)`)
    }))

  it.effect("3, 4, 8 as resolve, nothing relayed", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      register(world, "twin")
      const twin = register(world, "twin")
      const mute = register(world, "mute", { socket: false })
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number, string]> = [
        [["send", "no-such-session", "hello", "--json"], 3, "not_live"],
        [["send", "--name", "twin", "hello", "--json"], 4, "identity_mismatch"],
        [["send", twin.sessionId, "hello", "--json"], 4, "identity_mismatch"],
        [["send", mute.sessionId, "hello", "--json"], 8, "not_addressable"]
      ]
      for (const [args, exitCode, reason] of cases) {
        const { code, sent, stdout } = yield* run(world, args)
        expect([code, jsonOf(stdout).error.reason], args.join(" ")).toEqual([exitCode, reason])
        expect(sent).toEqual([])
      }
      world.relay.answerNext(RelayAnswer.delivered())
      const shared = yield* run(world, ["send", twin.sessionId, "hello", "--allow-shared-name", "--json"])
      expect(shared.code).toBe(0)
      expect(shared.sent.map((m) => m.address)).toEqual([`uds:${twin.socketPath}`])
    }))

  it.effect("a relay failure: exit 11 delivery_failed with its cause and the session", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      world.relay.answerNext(
        RelayAnswer.failed("relay_failed", "the relay exited 1", { executable: "/usr/bin/claude", exitCode: 1, signal: null, lastStderrLine: "boom" })
      )
      const { code, stdout } = yield* run(world, ["send", target.sessionId, "hello", "--json"])
      expect(code).toBe(11)
      expect(jsonOf(stdout).error).toMatchObject({
        reason: "delivery_failed",
        cause: "relay_failed",
        session: { pid: target.pid },
        relay: { exitCode: 1, lastStderrLine: "boom" },
        predicted: { effective: "accept" },
        receipt: null
      })
    }))

  it.effect("a failure after SendMessage reported the message in the inbox says so: sendResult, and not to send again", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      const result = JSON.stringify({ success: true, message: "“hello” → uds:/s; in that session's inbox" })
      world.relay.answerNext(
        RelayAnswer.failed("timed_out", "no receipt within 4s; the relay was stopped", null, result),
        RelayAnswer.failed("timed_out", "no receipt within 4s; the relay was stopped", null, result)
      )
      const json = yield* run(world, ["send", target.sessionId, "hello", "--json"])
      expect(json.code).toBe(11)
      expect(jsonOf(json.stdout).error).toMatchObject({ reason: "delivery_failed", cause: "timed_out", sendResult: result })
      const human = yield* run(world, ["send", target.sessionId, "hello"])
      expect(human.code).toBe(11)
      expect(human.stderr.join("\n")).toContain("SendMessage had reported it in the session's inbox, so sending it again would deliver it twice")
    }))

  it.effect("interrupted (a signal, or the host interrupting it): the send is stopped through cancel, and what became of the message is still told", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      const result = JSON.stringify({ success: true, message: "“hello” → uds:/s; in that session's inbox" })
      // As the Node relay answers a cancel that comes after SendMessage's result.
      world.relay.answerNext(
        RelayAnswer.run((request) =>
          Effect.zipRight(
            request.cancel ?? Effect.never,
            Effect.fail(new DeliveryFailed({ cause: "interrupted", detail: "stopped", session: null, relay: null, sendResult: result }))
          )
        ),
        RelayAnswer.noAnswer
      )
      const interrupted = (args: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const sentBefore = (yield* Ref.get(world.relay.sent)).length
          const out = { stdout: [] as Array<string>, stderr: [] as Array<string> }
          const fiber = yield* Effect.fork(run(world, args, undefined, out))
          while ((yield* Ref.get(world.relay.sent)).length === sentBefore) yield* Effect.yieldNow()
          const exit = yield* Fiber.interrupt(fiber)
          return { interrupted: Exit.isInterrupted(exit), ...out }
        })
      const json = yield* interrupted(["send", target.sessionId, "hello", "--json"])
      expect(json.interrupted).toBe(true)
      expect(jsonOf(json.stdout).error).toMatchObject({ reason: "delivery_failed", cause: "interrupted", sendResult: result, session: { pid: target.pid } })
      const human = yield* interrupted(["send", target.sessionId, "hello"])
      expect(human.interrupted).toBe(true)
      expect(human.stderr.join("\n")).toContain("is not known to have been delivered (interrupted)")
      expect(human.stderr.join("\n")).not.toContain("inbox")
    }))

  it.effect("--timeout bounds the relay on the Clock: a relay that never answers is delivery_failed timed_out, exit 11", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      world.relay.answerOthers(RelayAnswer.noAnswer)
      const fiber = yield* Effect.fork(run(world, ["send", target.sessionId, "hello", "--timeout", "1500", "--json"]))
      yield* TestClock.adjust("1499 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      const { code, sent, stdout } = yield* Fiber.join(fiber)
      expect(code).toBe(11)
      expect(jsonOf(stdout).error).toMatchObject({ reason: "delivery_failed", cause: "timed_out", session: { pid: target.pid } })
      expect(sent.map((m) => Duration.toMillis(m.timeout))).toEqual([1500])
    }))

  it.effect("- reads the message from standard input, as bytes", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      const { code, sent } = yield* run(world, ["send", target.sessionId, "-", "--json"], new TextEncoder().encode("from stdin\nline 2 é"))
      expect(code).toBe(0)
      expect(sent.map((m) => m.message)).toEqual(["from stdin\nline 2 é"])
    }))

  it.effect("usage errors (2) for an empty, white-space, too long or non-UTF-8 message, which is never echoed; nothing relayed", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      const long = `secret${"x".repeat(maxMessageLength)}`
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Uint8Array | undefined]> = [
        [["send", target.sessionId, ""], undefined],
        [["send", target.sessionId, "  \n "], undefined],
        [["send", target.sessionId, long], undefined],
        [["send", target.sessionId, "-"], new Uint8Array()],
        [["send", target.sessionId, "-"], new Uint8Array([0x73, 0x65, 0x63, 0x72, 0x65, 0x74, 0xff, 0xfe])],
        [["send", target.sessionId, "-"], new TextEncoder().encode(long)],
        // What a command line makes of `secret\xff\xfe`: the bytes that are not UTF-8 arrive as U+FFFD.
        [["send", target.sessionId, Buffer.from([0x73, 0x65, 0x63, 0x72, 0x65, 0x74, 0xff, 0xfe]).toString("utf8")], undefined],
        [["send", target.sessionId], undefined],
        [["send", "--name", "alpha", target.sessionId, "hello"], undefined]
      ]
      for (const [args, stdin] of cases) {
        for (const json of [false, true]) {
          const { code, sent, stderr, stdout } = yield* run(world, json ? [...args, "--json"] : args, stdin)
          const what = `${args.map((a) => a.slice(0, 20)).join(" ")} ${json}`
          expect(code, what).toBe(2)
          expect(sent, what).toEqual([])
          expect([...stderr, ...stdout].join("\n"), what).not.toContain("secret")
          if (json) expect(jsonOf(stdout).error.reason, what).toBe("usage")
        }
      }
    }))

  it.effect("a message holding U+FFFD goes through standard input, where its bytes are known to be UTF-8", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const target = register(world, "alpha")
      world.relay.answerOthers(RelayAnswer.delivered())
      const typed = yield* run(world, ["send", target.sessionId, "a \uFFFD b"])
      expect(typed.code).toBe(2)
      expect(typed.stderr.join("\n")).toContain("give one that holds U+FFFD on standard input")
      const piped = yield* run(world, ["send", target.sessionId, "-"], new TextEncoder().encode("a \uFFFD b"))
      expect(piped.code).toBe(0)
      expect(piped.sent.map((m) => m.message)).toEqual(["a \uFFFD b"])
    }))

  it.effect("help names send's options and arguments, from the table", () =>
    Effect.gen(function*() {
      const world = newWorld("accept")
      const { stdout } = yield* run(world, ["send", "--help"])
      const help = stdout.join("\n")
      for (const word of ["--allow-hold", "--allow-shared-name", "--timeout", "MESSAGE"]) expect(help).toContain(word)
    }))
})
