/**
 * The send phases of `npm run check:claude` judge plain data: what `claude-peers send --json` and
 * `claude-peers policy --json` printed, read into one word each, and a scenario's expectations held
 * against what was seen. Tested here without Claude Code, on outputs in the shapes the command prints.
 */
import { describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

type Json = Record<string, unknown>
interface Run {
  readonly exit: number
  readonly stdout: string
  readonly stderr?: string
}
interface SendAnswer {
  readonly exit: number
  readonly answer: string
  readonly refusal: string | undefined
  readonly predicted: string | undefined
  readonly pid: number | null
  readonly text: string
}
interface PolicyAnswer {
  readonly answer: string
  readonly effective: string | undefined
  readonly decidedBy?: string | undefined
  readonly certainty?: string | undefined
}
interface Expected {
  readonly exit: number
  readonly answer: string
  readonly relays: number
  readonly arrivals?: Record<string, number>
  readonly heldOnScreen?: string
  readonly policy?: string
  readonly withinMs?: number
  readonly decidedBy?: string
  readonly certainty?: string
  readonly fate?: string
}
interface Seen {
  readonly send: SendAnswer
  readonly policy: PolicyAnswer
  readonly relays: number
  readonly arrivals: Record<string, number>
  readonly heldOnScreen?: Record<string, boolean>
  readonly ms?: number
  readonly fate?: string
}

const root = join(import.meta.dirname, "..")
const { isPreStartedWorker, judgeJobFlags, judgeSend, judgeSharedIdListing, readPolicyAnswer, readProbeAnswer, readSendAnswer, renderSendTable } =
  (await import(
    pathToFileURL(join(root, "scripts/check-claude/send-judgement.mjs")).href
  )) as {
    isPreStartedWorker: (argv: ReadonlyArray<string>) => boolean
    judgeJobFlags: (state: unknown, flags: ReadonlyArray<string>) => ReadonlyArray<string>
    judgeSend: (expected: Expected, seen: Seen) => ReadonlyArray<string>
    judgeSharedIdListing: (listing: unknown, pids: ReadonlyArray<number>, sessionId: string) => ReadonlyArray<string>
    readPolicyAnswer: (run: Run, pid?: number | null) => PolicyAnswer
    readProbeAnswer: (run: Run) => string
    readSendAnswer: (run: Run) => SendAnswer
    renderSendTable: (rows: ReadonlyArray<Json>) => string
  }

const printed = (exit: number, value: unknown): Run => ({ exit, stdout: `${JSON.stringify(value)}\n`, stderr: "" })
const session = { pid: 4242, sessionId: "aa0f6eae-1841-417f-963a-88082a735a98", name: "api" }
const predicted = (effective: string | null) => ({ effective, decidedBy: "default", certainty: "certain" })
const result = (outcome: string, effective: string) =>
  printed(0, { outcome, receipt: { outcome, text: `${outcome} text` }, predicted: predicted(effective), session, mismatch: null })
const failure = (exit: number, error: Json) => printed(exit, { error: { message: `${String(error.reason)} message`, ...error } })
/** What was seen of a send refused with `reason` before relaying, and policy's answer to it. */
const refusedSeen = (exit: number, reason: string, policyAnswer: string, relays = 0): Seen => ({
  send: readSendAnswer(failure(exit, { reason })),
  policy: { answer: policyAnswer, effective: undefined },
  relays,
  arrivals: {}
})
const policyOf = (pid: number, prompting: string | null, effective: string | null = prompting): Json => ({
  pid,
  effective,
  decidedBy: effective === null ? "default" : "flagSettings",
  certainty: "certain",
  forSender: [{ senderMode: "bypass", outcome: "hold", certainty: "certain" }, { senderMode: "prompting", outcome: prompting, certainty: "certain" }]
})

describe("reading a send's answer", () => {
  it("is the receipt's outcome, its prediction and the session resolved", () => {
    expect(readSendAnswer(result("held", "hold"))).toEqual({
      exit: 0,
      answer: "held",
      refusal: undefined,
      predicted: "hold",
      pid: 4242,
      text: "held text"
    })
  })

  it("counts a refusal by the policy as the receipt it predicts, and says it was not relayed", () => {
    const refused = readSendAnswer(failure(9, { reason: "inbound_refused", session, predicted: predicted("refuse") }))
    expect([refused.answer, refused.refusal, refused.predicted, refused.pid]).toEqual(["refused", "inbound_refused", "refuse", 4242])
    const held = readSendAnswer(failure(10, { reason: "would_be_held", session, predicted: predicted("hold") }))
    expect([held.answer, held.refusal]).toEqual(["held", "would_be_held"])
  })

  it("is the reason of any other refusal, and a failed delivery's cause", () => {
    const notLive = readSendAnswer(failure(3, { reason: "not_live", reasons: [] }))
    expect([notLive.answer, notLive.refusal, notLive.predicted, notLive.pid]).toEqual(["not_live", undefined, undefined, null])
    const failed = readSendAnswer(failure(11, { reason: "delivery_failed", cause: "timed_out", session, predicted: predicted("accept") }))
    expect(failed.answer).toBe("delivery_failed (timed_out)")
  })

  it("says so when the command printed no JSON", () => {
    expect(readSendAnswer({ exit: 1, stdout: "", stderr: "boom\nlast line\n" })).toMatchObject({ answer: "no JSON (exit 1)", text: "last line" })
  })
})

describe("reading policy's prediction", () => {
  const flag = { decidedBy: "flagSettings", certainty: "certain" }
  const none = { effective: undefined, decidedBy: undefined, certainty: undefined }

  it("is the outcome for the relay's prompting class, in the receipt's words, with what decided it", () => {
    expect(readPolicyAnswer(printed(0, policyOf(1, "accept")))).toEqual({ answer: "delivered", effective: "accept", ...flag })
    // Nothing set: effective null, the permission-mode classes decide.
    expect(readPolicyAnswer(printed(0, policyOf(1, "hold", null)))).toEqual({
      answer: "held",
      effective: "hold",
      decidedBy: "default",
      certainty: "certain"
    })
    expect(readPolicyAnswer(printed(0, policyOf(1, "refuse")))).toEqual({ answer: "refused", effective: "refuse", ...flag })
    expect(readPolicyAnswer(printed(0, { pid: 1, effective: "refuse" }))).toEqual({
      answer: "refused",
      effective: "refuse",
      decidedBy: undefined,
      certainty: undefined
    })
  })

  it("is the refusal's reason when policy refuses the query", () => {
    expect(readPolicyAnswer(failure(4, { reason: "identity_mismatch" }))).toEqual({ answer: "identity_mismatch", ...none })
  })

  it("takes the session's entry from the listing", () => {
    const listing = printed(0, [policyOf(1, "hold"), policyOf(2, "accept")])
    expect(readPolicyAnswer(listing, 2)).toEqual({ answer: "delivered", effective: "accept", ...flag })
    expect(readPolicyAnswer(listing, 3)).toEqual({ answer: "pid 3 not in the listing", ...none })
  })
})

describe("judging a send scenario", () => {
  const delivered: Seen = {
    send: readSendAnswer(result("delivered", "accept")),
    policy: { answer: "delivered", effective: "accept" },
    relays: 1,
    arrivals: { mine: 1, other: 0 }
  }
  const expected: Expected = { exit: 0, answer: "delivered", relays: 1, arrivals: { mine: 1, other: 0 } }

  it("passes what was expected", () => {
    expect(judgeSend(expected, delivered)).toEqual([])
  })

  it("fails a message in the other session, or twice in the one meant", () => {
    expect(judgeSend(expected, { ...delivered, arrivals: { mine: 1, other: 1 } })).toEqual(["1 arrivals in other's transcript, expected 0"])
    expect(judgeSend(expected, { ...delivered, arrivals: { mine: 2, other: 0 } })).toHaveLength(1)
  })

  it("fails a relay started for a target that is not live", () => {
    const notLive = refusedSeen(3, "not_live", "not_live", 1)
    expect(judgeSend({ exit: 3, answer: "not_live", relays: 0 }, notLive)).toEqual(["1 relays started, expected 0"])
  })

  it("fails a receipt that policy did not predict, even one the scenario expected", () => {
    const problems = judgeSend(expected, { ...delivered, policy: { answer: "held", effective: "hold" } })
    expect(problems).toEqual(["policy predicts held, the send answered delivered", "the send predicted accept, policy hold"])
  })

  it("fails a send that refuses otherwise than policy", () => {
    const seen = refusedSeen(4, "identity_mismatch", "not_live")
    expect(judgeSend({ exit: 4, answer: "identity_mismatch", relays: 0 }, seen)).toEqual(["policy predicts not_live, the send answered identity_mismatch"])
  })

  it("holds policy to the answer expected where the send refuses for what no policy decides", () => {
    const stopped: Seen = {
      send: readSendAnswer(failure(11, { reason: "delivery_failed", cause: "target_stopped", predicted: predicted("accept") })),
      policy: { answer: "delivered", effective: "accept" },
      relays: 0,
      arrivals: { r: 0 },
      ms: 400
    }
    const expectStopped: Expected = { exit: 11, answer: "delivery_failed (target_stopped)", relays: 0, arrivals: { r: 0 }, policy: "delivered" }
    expect(judgeSend(expectStopped, stopped)).toEqual([])
    expect(judgeSend(expectStopped, { ...stopped, policy: { answer: "held", effective: "hold" } })).toEqual([
      "policy predicts held, expected delivered",
      "the send predicted accept, policy hold"
    ])
    expect(judgeSend({ exit: 11, answer: "delivery_failed (target_stopped)", relays: 0, arrivals: { r: 0 } }, stopped)).toEqual([
      "policy predicts delivered, the send answered delivery_failed (target_stopped)"
    ])
  })

  it("fails a send slower than the scenario allows, or not timed", () => {
    const base = refusedSeen(3, "not_live", "not_live")
    const quick: Expected = { exit: 3, answer: "not_live", relays: 0, withinMs: 5000 }
    expect(judgeSend(quick, { ...base, ms: 5000 })).toEqual([])
    expect(judgeSend(quick, { ...base, ms: 5001 })).toEqual(["took 5001 ms, expected at most 5000"])
    expect(judgeSend(quick, base)).toEqual(["took undefined ms, expected at most 5000"])
  })

  it("holds policy to the source that must decide, and to its certainty, where the scenario names them", () => {
    const refused: Seen = {
      send: readSendAnswer(failure(9, { reason: "inbound_refused", predicted: predicted("refuse") })),
      policy: { answer: "refused", effective: "refuse", decidedBy: "flagSettings", certainty: "certain" },
      relays: 0,
      arrivals: {}
    }
    const fromFlags: Expected = { exit: 9, answer: "refused", relays: 0, decidedBy: "flagSettings", certainty: "certain" }
    expect(judgeSend(fromFlags, refused)).toEqual([])
    // The right outcome from the wrong source (a user file that happens to say refuse) is still wrong.
    expect(judgeSend(fromFlags, { ...refused, policy: { ...refused.policy, decidedBy: "userSettings" } })).toEqual([
      "policy's decidedBy is userSettings, expected flagSettings"
    ])
    expect(judgeSend(fromFlags, { ...refused, policy: { ...refused.policy, certainty: "partial" } })).toEqual([
      "policy's certainty is partial, expected certain"
    ])
    expect(judgeSend({ exit: 9, answer: "refused", relays: 0 }, { ...refused, policy: { answer: "refused", effective: "refuse" } })).toEqual([])
  })

  it("holds a refusal before relaying to the receiver's own answer, where it was relayed anyway", () => {
    const refused: Seen = {
      send: readSendAnswer(failure(9, { reason: "inbound_refused", predicted: predicted("refuse") })),
      policy: { answer: "refused", effective: "refuse" },
      relays: 0,
      arrivals: { r: 0 }
    }
    const expectRefused: Expected = { exit: 9, answer: "refused", relays: 0, arrivals: { r: 0 }, fate: "refused" }
    expect(judgeSend(expectRefused, { ...refused, fate: "refused" })).toEqual([])
    // The receiver delivered what policy refused: the prediction was wrong, though the send agreed with it.
    expect(judgeSend(expectRefused, { ...refused, fate: "delivered" })).toEqual([
      "the receiver's own answer was delivered, expected refused",
      "policy predicts refused, the receiver's own answer was delivered"
    ])
    expect(judgeSend(expectRefused, refused)).toEqual(["the receiver's own answer was not asked, expected refused"])
  })

  it("fails a held message that the receiver does not show", () => {
    const held: Seen = { send: readSendAnswer(result("held", "hold")), policy: { answer: "held", effective: "hold" }, relays: 1, arrivals: {} }
    const expectHeld: Expected = { exit: 0, answer: "held", relays: 1, heldOnScreen: "r" }
    expect(judgeSend(expectHeld, { ...held, heldOnScreen: { r: true } })).toEqual([])
    expect(judgeSend(expectHeld, { ...held, heldOnScreen: { r: false } })).toEqual(["r's screen does not show the held message"])
  })

  it("renders a row per scenario, its problems in the judgement", () => {
    const table = renderSendTable([
      { scenario: "a | b", ...delivered, ms: 12, problems: [] },
      { scenario: "c", ...delivered, send: readSendAnswer(failure(9, { reason: "inbound_refused" })), ms: 3, problems: ["x"] }
    ]).split("\n")
    expect(table).toHaveLength(4)
    expect(table[2]).toBe("| a \\| b | 0 | delivered | delivered | 1 | mine: 1, other: 0 | 12 ms | agrees |")
    expect(table[3]).toContain("| refused (inbound_refused, not relayed) |")
    expect(table[3]).toContain("| WRONG: x |")
  })
})

describe("reading the probe's answer", () => {
  it("is the receipt's outcome, or the cause of a failed relay", () => {
    expect(readProbeAnswer({ exit: 0, stdout: "{\"outcome\":\"refused\",\"text\":\"was refused\"}\n" })).toBe("refused")
    expect(readProbeAnswer({ exit: 0, stdout: "{\"failed\":\"timed_out\",\"detail\":\"no receipt\"}\n" })).toBe("delivery_failed (timed_out)")
    expect(readProbeAnswer({ exit: 1, stdout: "" })).toBe("no JSON from the probe (exit 1)")
  })

  it("shows in the send's row", () => {
    const row = {
      scenario: "refuse",
      send: readSendAnswer(failure(9, { reason: "inbound_refused" })),
      policy: { answer: "refused", effective: "refuse", decidedBy: "policySettings", certainty: "certain" },
      fate: "refused",
      relays: 0,
      arrivals: {},
      ms: 5,
      problems: []
    }
    expect(renderSendTable([row]).split("\n")[2]).toBe(
      "| refuse | 9 | refused (inbound_refused, not relayed; relayed anyway: refused) | refused (policySettings, certain) | 0 | - | 5 ms | agrees |"
    )
  })
})

describe("a background job on a pre-started worker", () => {
  it("is told by the worker's own arguments", () => {
    expect(isPreStartedWorker(["/opt/claude", "bg-spare", "--bg-spare", "/tmp/cc-daemon-0/ab/claim-1.sock"])).toBe(true)
    expect(isPreStartedWorker(["claude bg-spare"])).toBe(true)
    expect(isPreStartedWorker(["/opt/claude", "--session-id", "64831718-7053-44e8-892c-5f8938dcdd1a", "SEND-BG-WARM-UP"])).toBe(false)
  })

  it("keeps the job's flags in its job state", () => {
    const settings = "{\"crossSessionInbound\":\"refuse\"}"
    expect(judgeJobFlags({ respawnFlags: ["--settings", settings] }, ["--settings", settings])).toEqual([])
    expect(judgeJobFlags({ respawnFlags: ["--name", "x", "--dangerously-skip-permissions"] }, ["--dangerously-skip-permissions"])).toEqual([])
    expect(judgeJobFlags({ respawnFlags: ["--name", "x"] }, ["--settings", settings])).toEqual([
      `respawnFlags ["--name","x"] do not hold ${JSON.stringify(["--settings", settings])}`
    ])
    // The value must follow its flag.
    expect(judgeJobFlags({ respawnFlags: ["--settings", "{}", settings] }, ["--settings", settings])).toHaveLength(1)
    expect(judgeJobFlags({}, ["--settings", settings])).toEqual(["the job state has no respawnFlags list (undefined)"])
    expect(judgeJobFlags(undefined, ["--settings", settings])).toHaveLength(1)
  })
})

describe("two live processes of one session id (--continue)", () => {
  const id = "aa0f6eae-1841-417f-963a-88082a735a98"
  const listed = (pid: number, address: string | null, sessionId = id) => ({ pid, sessionId, socketPath: `/run/cc-socks/${pid}.sock`, address })

  it("passes both listed with the id, each addressed by its own socket", () => {
    const listing = [listed(1, "uds:/run/cc-socks/1.sock"), listed(2, "uds:/run/cc-socks/2.sock"), listed(3, "other", "b")]
    expect(judgeSharedIdListing(listing, [1, 2], id)).toEqual([])
  })

  it("fails a name offered as the address, a process missing or another id", () => {
    expect(judgeSharedIdListing([listed(1, "send-continued"), listed(2, "uds:/run/cc-socks/2.sock")], [1, 2], id)).toEqual([
      "pid 1's address is \"send-continued\", expected uds:/run/cc-socks/1.sock"
    ])
    expect(judgeSharedIdListing([listed(1, "uds:/run/cc-socks/1.sock")], [1, 2], id)).toEqual(["pid 2 is not listed"])
    expect(judgeSharedIdListing([listed(1, "uds:/run/cc-socks/1.sock"), listed(2, "uds:/run/cc-socks/2.sock", "b")], [1, 2], id)).toEqual([
      `pid 2 is listed with session id b, expected ${id}`
    ])
    expect(judgeSharedIdListing({ error: {} }, [1, 2], id)).toEqual(["list printed no array"])
  })
})
