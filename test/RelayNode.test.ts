/**
 * The Node relay's process handling, against a stand-in executable that talks to the endpoint as
 * Claude Code does (`test/fixtures/relay-stand-in/claude.mjs`): receipts, a relay that never calls,
 * one that fails, a foreign request, a timeout and an interruption (the relay is killed and
 * reaped: its pid is gone), and a binary that is not there. No assertion depends on timing.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Either, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { findClaudeBinary, make, relayWorkingDirectory } from "../src/layers/RelayNode.js"
import type { RelayRequest } from "../src/services/Relay.js"
import { isRunning } from "./support/worlds.js"

const standIn = path.join(import.meta.dirname, "fixtures", "relay-stand-in", "claude.mjs")
const address = "uds:/tmp/cc-socks/4242.sock"

/** A temporary directory of this test's, removed after it. */
const scratches: Array<string> = []
const scratch = () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "relay-node-test-"))
  scratches.push(directory)
  return directory
}
afterEach(() => {
  for (const directory of scratches.splice(0)) fs.rmSync(directory, { recursive: true, force: true })
})

const setUp = (
  mode: string,
  noticeRound = 1,
  rounds: { readonly noticeRounds?: number; readonly expectedNoticeRounds?: number } = { noticeRounds: 3, expectedNoticeRounds: 8 }
) => {
  const directory = scratch()
  const pidFile = path.join(directory, "pid")
  const relay = make({
    claudeBinary: standIn,
    environment: {
      ...process.env,
      STAND_IN_MODE: mode,
      STAND_IN_PID_FILE: pidFile,
      STAND_IN_RESULT_FILE: path.join(directory, "handed"),
      STAND_IN_ADDRESS: address,
      STAND_IN_NOTICE_ROUND: String(noticeRound)
    },
    killGrace: "1 second",
    ...rounds,
    noticeRoundDelay: "10 millis"
  })
  const request: RelayRequest = { address, message: "hello there", claudeHome: path.join(directory, "home"), timeout: Duration.seconds(60) }
  const pid = () => Number(fs.readFileSync(pidFile, "utf8"))
  return { relay, request, pid, pidFile, handed: path.join(directory, "handed") }
}

const waitForFile = (file: string) =>
  Effect.gen(function*() {
    while (!fs.existsSync(file) || fs.readFileSync(file, "utf8") === "") yield* Effect.sleep("20 millis")
  })

describe("RelayNode against a stand-in Claude Code", () => {
  it.live("delivered: the receipt, and the relay has exited", () =>
    Effect.gen(function*() {
      const { pid, relay, request } = setUp("deliver")
      const receipt = yield* relay.send(request)
      expect(receipt.outcome).toBe("delivered")
      expect(receipt.text).toContain("hello there")
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("held and refused: what the notice said", () =>
    Effect.gen(function*() {
      const held = setUp("hold")
      expect((yield* held.relay.send(held.request)).outcome).toBe("held")
      const refused = setUp("refuse")
      expect((yield* refused.relay.send(refused.request)).outcome).toBe("refused")
    }), 60_000)

  it.live("a notice later than the rounds reads as delivered, unless the request expects one: then more rounds wait for it", () =>
    Effect.gen(function*() {
      const late = setUp("hold", 5)
      expect((yield* late.relay.send(late.request)).outcome).toBe("delivered")
      const expected = setUp("hold", 5)
      expect((yield* expected.relay.send({ ...expected.request, noticeExpected: true })).outcome).toBe("held")
    }), 60_000)

  it.live("where a notice is expected the rounds are never fewer than noticeRounds, and by default three times as many", () =>
    Effect.gen(function*() {
      const tripled = setUp("hold", 15, { noticeRounds: 6 })
      expect((yield* tripled.relay.send({ ...tripled.request, noticeExpected: true })).outcome).toBe("held")
      const atLeast = setUp("hold", 9, { noticeRounds: 10, expectedNoticeRounds: 5 })
      expect((yield* atLeast.relay.send({ ...atLeast.request, noticeExpected: true })).outcome).toBe("held")
      const unexpected = setUp("hold", 9, { noticeRounds: 6 })
      expect((yield* unexpected.relay.send(unexpected.request)).outcome).toBe("delivered")
    }), 60_000)

  it.live("a relay that never calls: timed_out, and it is killed and reaped", () =>
    Effect.gen(function*() {
      const { pid, relay, request } = setUp("never")
      const failed = yield* Effect.flip(relay.send({ ...request, timeout: Duration.seconds(3) }))
      expect(failed.cause).toBe("timed_out")
      expect(failed.relay?.signal).toBe("SIGTERM")
      // It never got as far as SendMessage: no result, and nothing said of an inbox.
      expect([failed.sendResult, failed.detail.includes("inbox")]).toEqual([null, false])
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("cancelled after SendMessage's result: interrupted, with the result, and the relay is killed and reaped", () =>
    Effect.gen(function*() {
      const { handed, pid, relay, request } = setUp("stall-after-result")
      const cancel = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Effect.flip(relay.send({ ...request, cancel: Deferred.await(cancel) })))
      yield* waitForFile(handed)
      yield* Deferred.succeed(cancel, undefined)
      const failed = yield* Fiber.join(fiber)
      expect(failed.cause).toBe("interrupted")
      expect(failed.sendResult).toContain("in that session's inbox")
      expect(failed.message).toContain("sending it again would deliver it twice")
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("cancelled before SendMessage was called: interrupted, nothing said of an inbox", () =>
    Effect.gen(function*() {
      const { pid, pidFile, relay, request } = setUp("never")
      const cancel = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(Effect.flip(relay.send({ ...request, cancel: Deferred.await(cancel) })))
      yield* waitForFile(pidFile)
      yield* Deferred.succeed(cancel, undefined)
      const failed = yield* Fiber.join(fiber)
      expect([failed.cause, failed.sendResult, failed.detail.includes("inbox")]).toEqual(["interrupted", null, false])
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("a relay that ignores SIGTERM is killed after the grace", () =>
    Effect.gen(function*() {
      const { pid, relay, request } = setUp("stubborn")
      const result = yield* Effect.either(relay.send({ ...request, timeout: Duration.seconds(3) }))
      expect(Either.isLeft(result) && result.left.relay?.signal).toBe("SIGKILL")
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("interrupted: the relay is killed and reaped before the interruption completes", () =>
    Effect.gen(function*() {
      const { pid, pidFile, relay, request } = setUp("never")
      const fiber = yield* Effect.fork(relay.send(request))
      yield* waitForFile(pidFile)
      yield* Fiber.interrupt(fiber)
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("a relay that exits non-zero: relay_failed with its exit code and last stderr line, terminal-safe", () =>
    Effect.gen(function*() {
      const { relay, request } = setUp("fail")
      const failed = yield* Effect.flip(relay.send(request))
      expect(failed.cause).toBe("relay_failed")
      expect(failed.relay?.exitCode).toBe(3)
      expect(failed.relay?.lastStderrLine).toBe("Error: the stand-in \\u{1b}[31mfailed\\u{1b}[0m on purpose")
      expect(failed.relay?.executable).toBe(standIn)
    }), 60_000)

  it.live("a foreign request without the key: endpoint_refused, and the relay is stopped", () =>
    Effect.gen(function*() {
      const { pid, relay, request } = setUp("foreign")
      const result = yield* Effect.either(relay.send(request))
      expect(Either.isLeft(result) && result.left.cause).toBe("endpoint_refused")
      expect(isRunning(pid())).toBe(false)
    }), 60_000)

  it.live("a relay that exits after SendMessage put the message in the inbox: relay_failed, with SendMessage's result", () =>
    Effect.gen(function*() {
      const { relay, request } = setUp("exit-after-result")
      const failed = yield* Effect.flip(relay.send(request))
      expect(failed.cause).toBe("relay_failed")
      expect(failed.detail).toBe("the relay exited (code 0) before a hold or refusal could be told")
      expect(failed.sendResult).toContain("in that session's inbox")
      expect(failed.message).toContain("sending it again would deliver it twice")
    }), 60_000)

  it.live("a relay that exits after running SendMessage, before its result reached the endpoint: the message may be there", () =>
    Effect.gen(function*() {
      const { relay, request } = setUp("exit-after-send")
      const failed = yield* Effect.flip(relay.send(request))
      expect(failed.cause).toBe("relay_failed")
      expect(failed.detail).toBe(
        "the relay exited (code 0) before SendMessage's result reached the endpoint; the relay had been told to call SendMessage, so the message may be in the session's inbox"
      )
      expect(failed.sendResult).toBe(null)
    }), 60_000)

  it.live("no binary: relay_not_found naming what was looked for", () =>
    Effect.gen(function*() {
      const empty = scratch()
      const relay = make({ environment: { PATH: empty } })
      const result = yield* Effect.either(relay.send({ address, message: "m", claudeHome: empty, timeout: Duration.seconds(10) }))
      expect(Either.isLeft(result) && result.left.cause).toBe("relay_not_found")
      if (Either.isLeft(result)) {
        expect(result.left.detail).toContain("\"claude\"")
        expect(result.left.detail).toContain(empty)
        expect(result.left.relay).toBe(null)
      }
      const named = findClaudeBinary({ claudeBinary: path.join(empty, "nope"), environment: {} })
      expect(Either.isLeft(named) && named.left.detail).toContain("the claudeBinary option")
      const fromEnv = findClaudeBinary({ environment: { CLAUDE_PEERS_CLAUDE_BIN: standIn } })
      expect(fromEnv).toEqual(Either.right(standIn))
    }), 60_000)

  it.live("the relay sends from the prompting class", () => Effect.sync(() => expect(make().senderClass).toBe("prompting")))
})

describe.runIf(process.getuid !== undefined)("the relay's working directory", () => {
  const uid = process.getuid?.() ?? 0
  const used = (root: string) => Effect.runSync(Effect.scoped(Effect.map(relayWorkingDirectory(root), ({ directory }) => directory)))

  it("is one directory per user, closed to others, that outlives each send", () => {
    const root = scratch()
    const shared = path.join(root, `claude-peers-relay-${uid}`)
    expect(used(root)).toBe(shared)
    expect(used(root)).toBe(shared)
    expect(fs.statSync(shared).mode & 0o777).toBe(0o700)
    expect(fs.readdirSync(root)).toEqual([`claude-peers-relay-${uid}`])
  })

  it("is a temporary one, removed after the send, when the shared one is open to others, a link, or not empty", () => {
    const cases: Record<string, (shared: string, root: string) => void> = {
      "open to others": (shared) => fs.mkdirSync(shared, { mode: 0o755 }),
      "a link": (shared, root) => {
        fs.mkdirSync(path.join(root, "elsewhere"), { mode: 0o700 })
        fs.symlinkSync(path.join(root, "elsewhere"), shared)
      },
      "mode 0600 (no way in)": (shared) => fs.mkdirSync(shared, { mode: 0o600 }),
      "not empty": (shared) => {
        fs.mkdirSync(path.join(shared, ".claude"), { recursive: true, mode: 0o700 })
        fs.chmodSync(shared, 0o700)
      }
    }
    for (const [label, stage] of Object.entries(cases)) {
      const root = scratch()
      const shared = path.join(root, `claude-peers-relay-${uid}`)
      stage(shared, root)
      const before = fs.readdirSync(root).sort()
      const directory = used(root)
      expect(directory, label).not.toBe(shared)
      expect(path.dirname(directory), label).toBe(root)
      expect(fs.readdirSync(root).sort(), label).toEqual(before)
    }
  })

  it.runIf(uid === 0)("is a temporary one under a root that others may write and that is not sticky", () => {
    // Anyone could rename a fixed name away there between its checks and the relay's start.
    const root = scratch()
    fs.chownSync(root, 65534, 65534)
    fs.chmodSync(root, 0o777)
    const directory = used(root)
    expect(path.basename(directory)).not.toBe(`claude-peers-relay-${uid}`)
    expect(fs.readdirSync(root)).toEqual([])
  })
})
