/**
 * The send phases' judgement, plain data in and out (tested in `test/CheckClaudeSend.test.ts`):
 * what `claude-peers send --json` and `claude-peers policy --json` answered, read into one word
 * each, and a scenario's expectations held against what was seen.
 *
 * The word is what became of the message, or why nothing was tried: `delivered`, `held` or
 * `refused` for a receipt; a refusal before relaying by the policy counts as the receipt the policy
 * predicted (`inbound_refused` is `refused`, `would_be_held` is `held`), since the prediction is
 * what must equal the receipt; any other error is its reason (`not_live`, `identity_mismatch` …),
 * with the cause of a `delivery_failed`. `policy` predicts in the same words: the outcome it gives
 * for a sender of the relay's permission-mode class, or the reason it refuses to answer for the
 * query, which a send must then refuse with too.
 */

/** Claude-peers' relay runs in the default permission mode, of the prompting class (README, "The relay"). */
export const relaySenderClass = "prompting"

const receiptOf = { accept: "delivered", hold: "held", refuse: "refused" }
const refusedBeforeRelaying = { inbound_refused: "refused", would_be_held: "held" }

const parsed = (stdout) => {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

const lastLine = (text) => text.trim().split("\n").at(-1) ?? ""

/**
 * `claude-peers send … --json` run to its end (`{ exit, stdout, stderr }`):
 * `{ exit, answer, refusal, predicted, pid, text }`: `refusal` the reason of a refusal by the policy
 * before relaying (undefined otherwise), `predicted` the send's own `predicted.effective`
 * (undefined where it made none), `pid` the session it resolved (null where none).
 */
export const readSendAnswer = ({ exit, stderr, stdout }) => {
  const printed = parsed(stdout)
  if (printed === undefined || printed === null || typeof printed !== "object") {
    return { exit, answer: `no JSON (exit ${exit})`, predicted: undefined, pid: null, text: lastLine(stderr ?? "") }
  }
  const predicted = (printed.error ?? printed).predicted?.effective
  if (printed.error === undefined) {
    return { exit, answer: printed.outcome, predicted, pid: printed.session?.pid ?? null, text: printed.receipt?.text ?? "" }
  }
  const { cause, message, reason, session } = printed.error
  const answer = refusedBeforeRelaying[reason] ?? (reason === "delivery_failed" ? `delivery_failed (${cause})` : reason)
  const refusal = refusedBeforeRelaying[reason] === undefined ? undefined : reason
  return { exit, answer, refusal, predicted, pid: session?.pid ?? null, text: message ?? "" }
}

/**
 * `claude-peers policy [QUERY] --json` run to its end: `{ answer, effective, decidedBy, certainty }`.
 * For the listing (no query), the entry of `pid`: `policy` takes no `--allow-shared-name`, so a
 * session whose name another shares has its prediction only there. `effective` is the policy's
 * outcome for the relay's class (`accept`, `hold`, `refuse`), undefined for a refusal; `decidedBy`
 * and `certainty` are the entry's (undefined for a refusal), so that a scenario can hold `policy`
 * to the source that must decide (a job's `--settings`, a namespace's managed file), not only to
 * the outcome, which a wrong source can give by chance.
 */
export const readPolicyAnswer = ({ exit, stdout }, pid = null) => {
  const none = { effective: undefined, decidedBy: undefined, certainty: undefined }
  const printed = parsed(stdout)
  if (printed === undefined || printed === null || typeof printed !== "object") {
    return { answer: `no JSON (exit ${exit})`, ...none }
  }
  if (printed.error !== undefined) return { answer: printed.error.reason, ...none }
  const entry = Array.isArray(printed) ? printed.find((p) => p.pid === pid) : printed
  if (entry === undefined) return { answer: `pid ${pid} not in the listing`, ...none }
  const effective = entry.forSender?.find((f) => f.senderMode === relaySenderClass)?.outcome ?? entry.effective
  return {
    answer: receiptOf[effective] ?? `no outcome (${JSON.stringify(effective)})`,
    effective,
    decidedBy: entry.decidedBy ?? undefined,
    certainty: entry.certainty ?? undefined
  }
}

/**
 * `relay-probe.mjs` run to its end: the message's real fate in the receipt's words (`delivered`,
 * `held`, `refused`), `delivery_failed (<cause>)` where the relay gave no receipt, or why there is
 * no answer.
 */
export const readProbeAnswer = ({ exit, stdout }) => {
  const printed = parsed(lastLine(stdout ?? ""))
  if (printed === undefined || printed === null || typeof printed !== "object") return `no JSON from the probe (exit ${exit})`
  if (typeof printed.outcome === "string") return printed.outcome
  return `delivery_failed (${printed.failed})`
}

/**
 * What a scenario expected against what was seen; a list of what differs, empty when it passed.
 * `expected`: `{ exit, answer, relays, arrivals?: { label: count }, heldOnScreen?: label, policy?,
 * withinMs?, decidedBy?, certainty? }`. `seen`: `{ send (readSendAnswer), policy (readPolicyAnswer), relays, arrivals: {
 * label: count }, heldOnScreen: { label: boolean }, ms? }`; `expected.decidedBy` and
 * `expected.certainty`, where given, are what `policy`'s entry must say; `seen.fate`, where the
 * message refused before relaying was relayed anyway (`relay-probe.mjs`), is the receiver's own
 * answer, which must be `policy`'s prediction (and `expected.fate`). `policy`'s prediction must be the send's
 * answer, or `expected.policy` where the send refuses for what no policy decides (`policy` still
 * answers for a stopped process and another user's session; the send is `delivery_failed` and
 * `not_addressable`); the send's own prediction
 * must be `policy`'s; `withinMs` bounds the send's time.
 */
export const judgeSend = (expected, seen) => {
  const problems = []
  if (seen.send.exit !== expected.exit) problems.push(`exit ${seen.send.exit}, expected ${expected.exit}`)
  if (seen.send.answer !== expected.answer) problems.push(`${seen.send.answer}, expected ${expected.answer}`)
  if (seen.relays !== expected.relays) problems.push(`${seen.relays} relays started, expected ${expected.relays}`)
  for (const [label, count] of Object.entries(expected.arrivals ?? {})) {
    if (seen.arrivals[label] !== count) problems.push(`${seen.arrivals[label] ?? "no"} arrivals in ${label}'s transcript, expected ${count}`)
  }
  if (expected.heldOnScreen !== undefined && seen.heldOnScreen?.[expected.heldOnScreen] !== true) {
    problems.push(`${expected.heldOnScreen}'s screen does not show the held message`)
  }
  if (expected.withinMs !== undefined && !(seen.ms <= expected.withinMs)) problems.push(`took ${seen.ms} ms, expected at most ${expected.withinMs}`)
  if (expected.policy !== undefined) {
    if (seen.policy.answer !== expected.policy) problems.push(`policy predicts ${seen.policy.answer}, expected ${expected.policy}`)
  } else if (seen.policy.answer !== seen.send.answer) {
    problems.push(`policy predicts ${seen.policy.answer}, the send answered ${seen.send.answer}`)
  }
  if (seen.send.predicted !== undefined && seen.send.predicted !== seen.policy.effective) {
    problems.push(`the send predicted ${seen.send.predicted}, policy ${seen.policy.effective ?? seen.policy.answer}`)
  }
  // A refusal before relaying is `policy`'s own word: where the message was relayed anyway, the receiver's answer is the fate.
  if (expected.fate !== undefined && seen.fate !== expected.fate) {
    problems.push(`the receiver's own answer was ${seen.fate ?? "not asked"}, expected ${expected.fate}`)
  }
  if (seen.fate !== undefined && seen.fate !== seen.policy.answer) {
    problems.push(`policy predicts ${seen.policy.answer}, the receiver's own answer was ${seen.fate}`)
  }
  for (const key of ["decidedBy", "certainty"]) {
    if (expected[key] !== undefined && seen.policy[key] !== expected[key]) {
      problems.push(`policy's ${key} is ${seen.policy[key] ?? "absent"}, expected ${expected[key]}`)
    }
  }
  return problems
}

/**
 * Whether a process's arguments (`/proc/<pid>/cmdline`, split) are those of a worker Claude Code's
 * background service pre-started (`claude bg-spare --bg-spare <claim socket>`, the first word
 * sometimes rewritten to `claude bg-spare`): its own arguments then hold none of the job's flags.
 */
export const isPreStartedWorker = (argv) => argv.includes("--bg-spare") || argv[0] === "claude bg-spare"

/**
 * A job's `respawnFlags` (from `<home>/jobs/<jobId>/state.json`) against the flags it was launched
 * with: a list of what differs, empty when `flags` stand in the list in that order, one after another.
 */
export const judgeJobFlags = (state, flags) => {
  const respawn = state?.respawnFlags
  if (!Array.isArray(respawn)) return [`the job state has no respawnFlags list (${JSON.stringify(respawn)})`]
  const at = respawn.findIndex((_, i) => flags.every((flag, j) => respawn[i + j] === flag))
  return at === -1 ? [`respawnFlags ${JSON.stringify(respawn)} do not hold ${JSON.stringify(flags)}`] : []
}

/**
 * `claude-peers list --json` against two live processes of one session id (`--continue` beside the
 * session it continues): both listed with that id, each addressed by its own socket
 * (`uds:<socketPath>`), since a name or id would not say which of the two. A list of what differs.
 */
export const judgeSharedIdListing = (listing, pids, sessionId) => {
  if (!Array.isArray(listing)) return [`list printed no array`]
  const problems = []
  const sockets = new Set()
  for (const pid of pids) {
    const session = listing.find((s) => s.pid === pid)
    if (session === undefined) {
      problems.push(`pid ${pid} is not listed`)
      continue
    }
    if (session.sessionId !== sessionId) problems.push(`pid ${pid} is listed with session id ${session.sessionId}, expected ${sessionId}`)
    if (typeof session.socketPath !== "string") problems.push(`pid ${pid} is listed without a socket`)
    else if (session.address !== `uds:${session.socketPath}`) {
      problems.push(`pid ${pid}'s address is ${JSON.stringify(session.address)}, expected uds:${session.socketPath}`)
    }
    sockets.add(session.socketPath)
  }
  if (problems.length === 0 && sockets.size !== pids.length) problems.push(`the ${pids.length} processes share a socket`)
  return problems
}

const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\n/g, " ")

/** A phase's rows (`{ scenario, send, policy, relays, arrivals, ms, problems }`) as a Markdown table. */
export const renderSendTable = (rows) =>
  [
    "| scenario | exit | answer | `policy` predicts | relays started | arrivals | time | judgement |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((row) =>
      `| ${
        [
          row.scenario,
          row.send.exit,
          row.send.refusal === undefined
            ? row.send.answer
            : `${row.send.answer} (${row.send.refusal}, not relayed${row.fate === undefined ? "" : `; relayed anyway: ${row.fate}`})`,
          row.policy.decidedBy === undefined ? row.policy.answer : `${row.policy.answer} (${row.policy.decidedBy}, ${row.policy.certainty})`,
          row.relays,
          Object.entries(row.arrivals).map(([label, count]) => `${label}: ${count}`).join(", ") || "-",
          `${row.ms} ms`,
          row.problems.length === 0 ? "agrees" : `WRONG: ${row.problems.join("; ")}`
        ].map(cell).join(" | ")
      } |`
    )
  ].join("\n")
