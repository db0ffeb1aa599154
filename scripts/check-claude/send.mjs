/**
 * The send phases of `npm run check:claude`: real receivers in the check's tmux server (or its
 * background service) on its mock API, a message sent to each with the built `claude-peers send
 * --json`, its relay the Claude Code under test, and each receiver's own transcript (and, for a held
 * message, its screen) read to see what arrived. One table a phase:
 * - `policies`: receivers whose `--settings` say accept, hold, refuse → delivered and in the
 *   transcript exactly once; held, and the receiver shows it for approval; refused before relaying,
 *   and refused by the receiver when relayed anyway;
 * - `not-live`: a receiver killed with SIGKILL (its record stays), a window parked with ←, and a
 *   record staged on a reused pid → `not_live` (exit 3);
 * - `shared-name`: two `claude --bg --name N` jobs (Claude Code makes a job's name unique against
 *   nothing) → `identity_mismatch` (4) by name and by id; by id with `--allow-shared-name` →
 *   delivered to that job, and nothing in the other one's transcript;
 * - `parity`: nothing set anywhere, a receiver in bypassPermissions and one in default mode: held
 *   (`would_be_held`, 10, without `--allow-hold`) and delivered, as `policy` predicts for the
 *   relay's prompting class;
 * - `stopped`: a receiver stopped with SIGSTOP → `delivery_failed` (`target_stopped`, 11) at once,
 *   no relay, though `policy` still answers for it; continued with SIGCONT → delivered, once;
 * - `other-uid` (as root, with a `nobody` user): root's receiver in a home nobody can read, sent to
 *   by claude-peers run as nobody → `not_addressable` (8, another user's), no relay, nothing arrives;
 * - `bg-worker`: `claude --bg --settings '{"crossSessionInbound":"refuse"|"hold"}'` jobs that Claude
 *   Code's background service hands to a pre-started `claude bg-spare --bg-spare <claim socket>`
 *   worker, whose own arguments hold no `--settings` (only the job state's `respawnFlags` do) →
 *   refused before relaying; held (`would_be_held`), and with `--allow-hold` held by the receiver;
 *   `policy` decided by `flagSettings`, never `userSettings`; and a job in bypassPermissions with
 *   nothing set (`--dangerously-skip-permissions`, also only in its job state) → held, as `policy`
 *   predicts from the receiver's bypass class for the relay's prompting one;
 * - `mount-ns` (as root): receivers under `unshare --mount`, an overlay on `/etc` in their namespace
 *   alone holding a managed file saying refuse, a managed drop-in saying hold → refused; held, and
 *   with `--allow-hold` held by the receiver; `policy` decided by `policySettings`, read through
 *   `/proc/<pid>/root`; and one whose namespace alone has the home's `settings.json` saying refuse
 *   (a file bound over it) → refused, decided by `userSettings`;
 * - `continue`: `claude --continue` beside the live session it continues (one session id, two
 *   processes) → both listed, each addressed by its socket; `identity_mismatch` (4) by id (with or
 *   without `--allow-shared-name`) and by either name, no relay, nothing in the transcript.
 * A refusal before relaying (`inbound_refused`, `would_be_held`) is `policy`'s own word, not the
 * receiver's: where a scenario asks for it, the message is then relayed anyway by claude-peers' relay
 * without `send`'s policy step (relay-probe.mjs), and the receiver's own answer is its fate.
 * In every scenario `claude-peers policy`'s prediction must be the send's answer (send-judgement.mjs)
 * unless the scenario names what it must be instead (a stopped or another user's session),
 * and a relay must start exactly when one should: the relays' Claude Code is a wrapper that counts
 * its starts, so "no relay started" is counted, never inferred from the answer.
 *
 * Runs alone too: `node scripts/check-claude/send.mjs [policies] [not-live] [shared-name] [parity]
 * [stopped] [other-uid] [bg-worker] [mount-ns] [continue]` (its own home, mock API and tmux; every
 * phase when none is named).
 */
import { spawnSync } from "node:child_process"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { writeClaudeHome } from "./claude-code.mjs"
import { makeDriver } from "./driver.mjs"
import { startBackgroundJob } from "./policy.mjs"
import { isRunning, killMarked, processStat, startIdleProcess } from "./processes.mjs"
import { makeRegistry } from "./registry.mjs"
import {
  isPreStartedWorker,
  judgeJobFlags,
  judgeSend,
  judgeSharedIdListing,
  readPolicyAnswer,
  readProbeAnswer,
  readSendAnswer,
  renderSendTable
} from "./send-judgement.mjs"
import { CheckFailed, makeLog, runProgram, waitFor } from "./tools.mjs"
import { makeCheckWorld } from "./world.mjs"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const commandPath = join(repoRoot, "bin", "claude-peers.js")
const probePath = join(repoRoot, "scripts", "check-claude", "relay-probe.mjs")

export const sendPhaseNames = ["policies", "not-live", "shared-name", "parity", "stopped", "other-uid", "bg-worker", "mount-ns", "continue"]

/**
 * The Claude Code the relays run: a shell wrapper that appends a line to a file each time it
 * starts and then becomes the real one (`exec`: same pid, so the relay's kill and reap are the
 * real process's).
 */
const makeRelayCounter = (directory, claude) => {
  const wrapper = join(directory, "relay-claude")
  const starts = join(directory, "relay-starts")
  const quoted = (path) => {
    if (path.includes("'")) throw new CheckFailed(`a path the relay wrapper cannot quote: ${path}`)
    return `'${path}'`
  }
  writeFileSync(wrapper, `#!/bin/sh\necho "$$" >> ${quoted(starts)}\nexec ${quoted(claude)} "$@"\n`, { mode: 0o755 })
  const count = () => {
    try {
      return readFileSync(starts, "utf8").split("\n").filter(Boolean).length
    } catch {
      return 0
    }
  }
  return { wrapper, count }
}

const transcriptOf = (home, record) => join(home, "projects", record.cwd.replace(/[^A-Za-z0-9]/g, "-"), `${record.sessionId}.jsonl`)

/** How many transcript lines hold `message` as a message that reached the receiver's conversation. */
const arrivals = (home, record, message) => {
  const file = transcriptOf(home, record)
  if (!existsSync(file)) return 0
  return readFileSync(file, "utf8").split("\n").filter((line) => {
    if (!line.includes(message)) return false
    try {
      return JSON.parse(line).type === "user"
    } catch {
      return false
    }
  }).length
}

/**
 * The phases over one home. `work` is where receivers start; `runDirectory` holds the relay
 * wrapper. Each phase prints its table and resolves to `{ rows, ok }`.
 */
export const makeSendPhases = ({ claude, driver, env, home, log, registry, runDirectory, tmux, work }) => {
  const relays = makeRelayCounter(runDirectory, claude)
  const peersEnv = { ...env, CLAUDE_PEERS_CLAUDE_BIN: relays.wrapper }
  const peers = (args) => runProgram(process.execPath, [commandPath, "--claude-home", home, ...args, "--json"], { env: peersEnv, timeoutMs: 120_000 })

  /**
   * One send and its judgement. `target` is the send's query (`[SESSION_ID]` or `["--name", N]`),
   * `policyQuery` `policy`'s (the listing, `[]`, where the query has no answer there); `receivers`
   * maps a label to the record whose transcript (in `receiverHome`) `expected.arrivals` counts;
   * `run` runs claude-peers (`peers`, or as another user), whose relay starts `counter` counts.
   */
  const scenario = async ({ counter = relays, expected, flags = [], name, policyQuery, probe, receiverHome = home, receivers = {}, run = peers, target }) => {
    const message = `claude-peers send check ${randomBytes(4).toString("hex")}`
    const policyRun = await run(["policy", ...(policyQuery ?? target)])
    const before = counter.count()
    const started = Date.now()
    const send = readSendAnswer(await run(["send", ...target, message, ...flags]))
    const ms = Date.now() - started
    const relaysStarted = counter.count() - before
    const policy = readPolicyAnswer(policyRun, send.pid)
    // Refused before relaying is the prediction's word, not the receiver's: `probe` (the target's record) relays it anyway.
    const fate = probe !== undefined && send.refusal !== undefined ? (await probeFate(probe, message)).fate : undefined
    // A receiver writes its transcript as it takes the message in; what must not arrive gets a few seconds to show that it does not.
    const awaited = Object.entries(expected.arrivals ?? {}).filter(([, count]) => count > 0).map(([label]) => label)
    const shownHeld = (label) => tmux.screen(label).includes("Held") && tmux.screen(label).includes(message)
    if (awaited.length > 0) {
      await waitFor("the message in the transcript", () => awaited.every((label) => arrivals(receiverHome, receivers[label], message) > 0), {
        timeoutMs: 20_000
      })
        .catch(() => false)
    } else if (expected.heldOnScreen !== undefined) {
      await waitFor("the held message on the screen", () => shownHeld(expected.heldOnScreen), { timeoutMs: 15_000 }).catch(() => false)
    }
    if (relaysStarted > 0 || fate !== undefined) await delay(3000)
    const seen = {
      send,
      policy,
      ...(fate === undefined ? {} : { fate }),
      relays: relaysStarted,
      ms,
      arrivals: Object.fromEntries(Object.keys(expected.arrivals ?? {}).map((label) => [label, arrivals(receiverHome, receivers[label], message)])),
      heldOnScreen: expected.heldOnScreen === undefined ? {} : { [expected.heldOnScreen]: shownHeld(expected.heldOnScreen) }
    }
    const problems = judgeSend(expected, seen)
    log(
      `send: ${name}: ${send.answer} (exit ${send.exit}) in ${ms} ms, ${relaysStarted} relay(s), policy ${policy.answer}${
        fate === undefined ? "" : `, relayed anyway: ${fate}`
      }: ${problems.length === 0 ? "ok" : `WRONG: ${problems.join("; ")}`} (${send.text.slice(0, 160)})`
    )
    return { scenario: name, message, ...seen, problems }
  }

  /** The receiver's own answer to `message`, relayed by claude-peers' relay without `send`'s policy step (relay-probe.mjs). */
  const probeFate = async (record, message) => {
    const started = Date.now()
    const run = await runProgram(process.execPath, [probePath, home, record.address ?? `uds:${record.messagingSocketPath}`, message], {
      env: { ...env, CLAUDE_PEERS_CLAUDE_BIN: claude },
      timeoutMs: 150_000
    })
    const fate = readProbeAnswer(run)
    log(`send: relayed anyway to pid ${record.pid} in ${Date.now() - started} ms: ${fate} (${run.stdout.trim().slice(0, 200)})`)
    return { fate, text: run.stdout.trim() }
  }

  /** What a phase saw and does not judge, printed under its table. */
  const notes = []
  const phase = async (title, scenarios) => {
    notes.length = 0
    const rows = await scenarios()
    const seen = notes.map((note) => `\nSeen, not judged: ${note}\n`).join("")
    process.stdout.write(`\n## send: ${title}\n\n${renderSendTable(rows)}\n${seen}`)
    return { rows, ok: rows.every((row) => row.problems.length === 0) }
  }

  /** Interactive receivers in `work` (started by `through`, the driver by default), each with a name of its own (derived names collide): label → record. */
  const startReceivers = async (specs, through = driver) => {
    for (const { args = [], environment, label } of specs) through.start(label, work, ["--name", label, ...args], environment)
    const up = await Promise.all(specs.map(async ({ bypass, label }) => {
      if (bypass === true) await through.acceptBypassWarning(label)
      return [label, (await through.up(label)).record]
    }))
    return Object.fromEntries(up)
  }

  const policies = () =>
    phase("the receiver's policy (--settings)", async () => {
      const receivers = await startReceivers(
        ["accept", "hold", "refuse"].map((policy) => ({ label: `send-${policy}`, args: ["--settings", JSON.stringify({ crossSessionInbound: policy })] }))
      )
      const to = (label, name, expected) =>
        scenario({
          name,
          target: [receivers[label].sessionId],
          flags: ["--allow-hold"],
          receivers,
          probe: receivers[label],
          expected: { ...expected, arrivals: { [label]: expected.arrivals } }
        })
      return [
        await to("send-accept", "accept", { exit: 0, answer: "delivered", relays: 1, arrivals: 1 }),
        await to("send-hold", "hold, --allow-hold", { exit: 0, answer: "held", relays: 1, arrivals: 0, heldOnScreen: "send-hold" }),
        await to("send-refuse", "refuse, --allow-hold", { exit: 9, answer: "refused", relays: 0, arrivals: 0, fate: "refused" })
      ]
    })

  const notLive = () =>
    phase("a target that is not live", async () => {
      const { "send-dead": dead } = await startReceivers([{ label: "send-dead" }, { label: "send-parked" }])
      process.kill(dead.pid, "SIGKILL")
      await waitFor("send-dead to end", () => !isRunning(dead.pid), { timeoutMs: 20_000, intervalMs: 100 })
      if (!existsSync(registry.recordFile(dead.pid))) throw new CheckFailed("send-dead: its record went with SIGKILL, which Claude Code 2.1.332 leaves")
      // ← at its empty prompt: the window's record keeps its own session id and gains `parkedJobId`.
      await driver.park("send-parked")
      const parked = registry.windowOf("send-parked")
      if (typeof parked?.record.parkedJobId !== "string") throw new CheckFailed("send-parked: its window did not park")
      // The dead receiver's record (its socket file is still there) staged on a live pid that started at another time.
      const sleeper = startIdleProcess(env)
      await waitFor("the stand-in process to run", () => processStat(sleeper) !== null)
      const reused = { ...dead, sessionId: randomUUID(), name: "send-pid-reused" }
      const staged = registry.stageRecord(sleeper, reused)
      try {
        const notLiveExpected = { exit: 3, answer: "not_live", relays: 0 }
        return [
          await scenario({ name: "killed with SIGKILL, by id", target: [dead.sessionId], expected: notLiveExpected }),
          await scenario({ name: "killed with SIGKILL, by name", target: ["--name", dead.name], expected: notLiveExpected }),
          await scenario({ name: `parked window (job ${parked.record.parkedJobId}), by id`, target: [parked.record.sessionId], expected: notLiveExpected }),
          await scenario({ name: `record on a reused pid (${sleeper}), by id`, target: [reused.sessionId], expected: notLiveExpected })
        ]
      } finally {
        rmSync(staged, { force: true })
        process.kill(sleeper, "SIGKILL")
      }
    })

  const sharedName = () =>
    phase("a shared name (two --bg --name jobs)", async () => {
      const name = `send-shared-${randomBytes(2).toString("hex")}`
      const first = await startBackgroundJob({ claude, env, home, log, work }, "SEND-SHARED-ONE", ["--name", name])
      const second = await startBackgroundJob({ claude, env, home, log, work }, "SEND-SHARED-TWO", ["--name", name])
      if (first.name !== name || second.name !== name) {
        throw new CheckFailed(`the two --bg --name ${name} jobs are named ${JSON.stringify(first.name)} and ${JSON.stringify(second.name)}`)
      }
      const receivers = { [`job ${first.jobId}`]: first, [`job ${second.jobId}`]: second }
      const mismatch = { exit: 4, answer: "identity_mismatch", relays: 0 }
      return [
        await scenario({ name: `--name ${name}`, target: ["--name", name], expected: mismatch }),
        await scenario({ name: `job ${first.jobId} by id`, target: [first.sessionId], expected: mismatch }),
        await scenario({
          name: `job ${first.jobId} by id, --allow-shared-name`,
          target: [first.sessionId],
          flags: ["--allow-shared-name"],
          policyQuery: [],
          receivers,
          expected: { exit: 0, answer: "delivered", relays: 1, arrivals: { [`job ${first.jobId}`]: 1, [`job ${second.jobId}`]: 0 } }
        })
      ]
    })

  const parity = () =>
    phase("permission-mode parity (crossSessionInbound unset)", async () => {
      const receivers = await startReceivers([
        {
          label: "send-bypass",
          args: ["--dangerously-skip-permissions"],
          environment: process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {},
          bypass: true
        },
        { label: "send-default" }
      ])
      const bypass = { target: [receivers["send-bypass"].sessionId], receivers }
      return [
        await scenario({ ...bypass, name: "bypassPermissions", expected: { exit: 10, answer: "held", relays: 0, arrivals: { "send-bypass": 0 } } }),
        await scenario({
          ...bypass,
          name: "bypassPermissions, --allow-hold",
          flags: ["--allow-hold"],
          expected: { exit: 0, answer: "held", relays: 1, arrivals: { "send-bypass": 0 }, heldOnScreen: "send-bypass" }
        }),
        await scenario({
          name: "default mode",
          target: [receivers["send-default"].sessionId],
          receivers,
          expected: { exit: 0, answer: "delivered", relays: 1, arrivals: { "send-default": 1 } }
        })
      ]
    })

  const stopped = () =>
    phase("a stopped receiver (SIGSTOP, then SIGCONT)", async () => {
      // tmux continues a pane's process that it sees stop (SIGCONT to its group), so the receiver runs under a
      // shell that waits for it: the shell is tmux's child, and it does not stop.
      const underShell = join(runDirectory, "claude-under-sh")
      writeFileSync(underShell, `#!/bin/sh\n'${claude.replace(/'/g, "'\\''")}' "$@"\n`, { mode: 0o755 })
      const receivers = await startReceivers([{ label: "send-stopped" }], makeDriver({ tmux, registry, claude: underShell, log }))
      const receiver = receivers["send-stopped"]
      const target = [receiver.sessionId]
      const state = () => processStat(receiver.pid)?.state
      process.kill(receiver.pid, "SIGSTOP")
      let refused
      try {
        await waitFor("send-stopped to stop", () => state() === "T" || state() === "t", { timeoutMs: 5000, intervalMs: 50 })
          .catch((error) => {
            throw new CheckFailed(`${error.message}: pid ${receiver.pid} is in state ${state()}`)
          })
        refused = await scenario({
          name: `stopped (SIGSTOP, pid ${receiver.pid})`,
          target,
          receivers,
          // `policy` answers for the session (a stopped process keeps its policy); the send refuses it rather than hang.
          expected: { exit: 11, answer: "delivery_failed (target_stopped)", relays: 0, arrivals: { "send-stopped": 0 }, policy: "delivered", withinMs: 5000 }
        })
      } finally {
        process.kill(receiver.pid, "SIGCONT")
      }
      await waitFor("send-stopped to run again", () => state() !== "T" && state() !== "t", { timeoutMs: 5000, intervalMs: 50 })
      const delivered = await scenario({
        name: "continued (SIGCONT)",
        target,
        receivers,
        expected: { exit: 0, answer: "delivered", relays: 1, arrivals: { "send-stopped": 1 } }
      })
      // Nothing was relayed while it was stopped, so nothing arrives once it runs again either.
      const late = arrivals(home, receiver, refused.message)
      if (late !== 0) {
        refused.problems.push(`${late} arrivals of the refused message once continued, expected 0`)
        log(`send: ${refused.scenario}: WRONG: the refused message arrived once the receiver was continued`)
      }
      return [refused, delivered]
    })

  /** Why `other-uid` cannot run here (null when it can): it needs root, a `nobody` user and setpriv. */
  const otherUserUnavailable = () => {
    if (process.getuid?.() !== 0) return "not running as root"
    const id = (flag) => spawnSync("id", [flag, "nobody"], { encoding: "utf8" })
    const [uid, gid] = [id("-u"), id("-g")]
    if (uid.status !== 0 || gid.status !== 0) return "no user nobody"
    if (spawnSync("setpriv", ["--version"]).status !== 0) return "no setpriv"
    return { uid: uid.stdout.trim(), gid: gid.stdout.trim() }
  }

  const otherUid = async () => {
    const title = "another user's receiver (claude-peers run as nobody)"
    const nobody = otherUserUnavailable()
    if (typeof nobody === "string") {
      log(`send phase other-uid: skipped: ${nobody}`)
      process.stdout.write(`\n## send: ${title}\n\nskipped: ${nobody}\n`)
      return { rows: [], ok: true }
    }
    // A home of root's that nobody can read (the run's directory is root's alone), its receiver root's.
    const root = realpathSync(mkdtempSync(join("/tmp", "cps-other-")))
    const label = "send-other-uid"
    let receiverPid = null
    try {
      chmodSync(root, 0o755)
      const otherHome = join(root, "home")
      const otherWork = join(root, "work")
      mkdirSync(otherWork, { recursive: true })
      writeClaudeHome({ home: otherHome, workDirectories: [otherWork] })
      // Relays nobody would start are counted too: the wrapper and its count are nobody's to run and write.
      const counter = makeRelayCounter(root, claude)
      writeFileSync(join(root, "relay-starts"), "", { mode: 0o666 })
      chmodSync(join(root, "relay-starts"), 0o666)
      const otherDriver = makeDriver({ tmux, registry: makeRegistry(otherHome), claude, log })
      otherDriver.start(label, otherWork, ["--name", label], { CLAUDE_CONFIG_DIR: otherHome })
      const { record } = await otherDriver.up(label)
      receiverPid = record.pid
      spawnSync("chmod", ["-R", "a+rX", otherHome])
      const nobodyEnv = { ...peersEnv, HOME: root, CLAUDE_PEERS_CLAUDE_BIN: counter.wrapper }
      delete nobodyEnv.XDG_RUNTIME_DIR
      delete nobodyEnv.TMPDIR
      const asNobody = (args) =>
        runProgram(
          "setpriv",
          ["--reuid", nobody.uid, "--regid", nobody.gid, "--clear-groups", process.execPath, commandPath, "--claude-home", otherHome, ...args, "--json"],
          { cwd: root, env: nobodyEnv, timeoutMs: 120_000 }
        )
      const receivers = { [label]: record }
      // `policy` answers for another user's session too (Policy.resolve allows it: the session has a policy); the send refuses it.
      const expected = { exit: 8, answer: "not_addressable", relays: 0, arrivals: { [label]: 0 }, policy: "delivered" }
      const rows = [
        await scenario({
          name: `root's session (pid ${record.pid}) by id, sent by nobody`,
          target: [record.sessionId],
          receivers,
          receiverHome: otherHome,
          run: asNobody,
          counter,
          expected
        }),
        await scenario({
          name: `root's session by name, sent by nobody`,
          target: ["--name", label],
          receivers,
          receiverHome: otherHome,
          run: asNobody,
          counter,
          expected
        })
      ]
      // The refusal must say why: the session is another user's.
      for (const row of rows) {
        if (!/another user|other_user/.test(row.send.text)) row.problems.push(`the refusal does not say the session is another user's: ${row.send.text}`)
      }
      process.stdout.write(`\n## send: ${title}\n\n${renderSendTable(rows)}\n`)
      return { rows, ok: rows.every((row) => row.problems.length === 0) }
    } finally {
      // Its home goes with the phase, so the receiver goes first.
      if (receiverPid !== null && isRunning(receiverPid)) {
        process.kill(receiverPid, "SIGKILL")
        await waitFor(`${label} to end`, () => !isRunning(receiverPid), { timeoutMs: 10_000, intervalMs: 100 }).catch(() => false)
      }
      rmSync(root, { recursive: true, force: true })
    }
  }

  /** The pid's arguments, split, or [] when they cannot be read. */
  const argvOf = (pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((word) => word !== "")
    } catch {
      return []
    }
  }

  /**
   * A spare worker of the home's background service waits to be claimed: its claim socket is in the
   * service's `spare/` directory (`/tmp/cc-daemon-<uid>/<8 hex of sha256(home)>/spare/<id>.claim.sock`,
   * gone once a job claims it). Such a worker writes no registry record until then.
   */
  const spareDirectory = () => join("/tmp", `cc-daemon-${process.getuid()}`, createHash("sha256").update(home).digest("hex").slice(0, 8), "spare")
  const spareReady = () => {
    try {
      return readdirSync(spareDirectory()).some((file) => file.endsWith(".claim.sock"))
    } catch {
      return false
    }
  }

  /** The environment of the process that would take the next job: a spare worker waiting on its claim socket (null when none). */
  const spareEnvironment = () => {
    const claims = (() => {
      try {
        return readdirSync(spareDirectory()).filter((file) => file.endsWith(".claim.sock")).map((file) => join(spareDirectory(), file))
      } catch {
        return []
      }
    })()
    for (const name of readdirSync("/proc")) {
      if (!/^[1-9][0-9]*$/.test(name)) continue
      const argv = argvOf(name)
      if (!argv.includes("--bg-spare") || !claims.some((claim) => argv.includes(claim))) continue
      try {
        return readFileSync(`/proc/${name}/environ`, "latin1").split("\0")
      } catch {
        continue
      }
    }
    return null
  }

  const bgWorker = () =>
    phase("a --bg job on a pre-started worker (its flags only in its job state)", async () => {
      // As root, Claude Code runs bypassPermissions only with IS_SANDBOX=1, and a worker has the environment
      // of the background service that pre-started it, not its job's: the service is started with it.
      const asRoot = process.getuid?.() === 0
      const job = { claude, env: asRoot ? { ...env, IS_SANDBOX: "1" } : env, home, log, work }
      // The first `--bg` job starts Claude Code's background service, which runs that job as a process of
      // its own and from then on keeps a spare worker ready: each later job claims one.
      if (!spareReady()) await startBackgroundJob(job, "SEND-BG-WARM-UP", [])
      const onSpare = async (prompt, flags) => {
        await waitFor("a spare background worker", spareReady, { timeoutMs: 90_000, intervalMs: 500 })
          .catch((error) => log(`send: bg-worker: ${error.message}; starting ${prompt} anyway`))
        const record = await startBackgroundJob(job, prompt, flags)
        const argv = argvOf(record.pid)
        // What makes the case: the process's own arguments hold none of the job's flags; only the job state does.
        const problems = [
          ...(isPreStartedWorker(argv) ? [] : [`job ${record.jobId} is not on a pre-started worker: its arguments are ${JSON.stringify(argv)}`]),
          ...(argv.includes(flags[0]) ? [`job ${record.jobId}'s own arguments hold ${flags[0]}`] : []),
          ...judgeJobFlags(registry.jobState(record.jobId), flags)
        ]
        log(
          `send: bg-worker: job ${record.jobId} (pid ${record.pid}) runs as ${argv.join(" ")}; respawnFlags ${
            JSON.stringify(registry.jobState(record.jobId)?.respawnFlags)
          }`
        )
        return { record, problems }
      }
      const refusing = await onSpare("SEND-BG-REFUSE", ["--settings", JSON.stringify({ crossSessionInbound: "refuse" })])
      const holding = await onSpare("SEND-BG-HOLD", ["--settings", JSON.stringify({ crossSessionInbound: "hold" })])
      const label = (record) => `job ${record.jobId}`
      const receivers = { [label(refusing.record)]: refusing.record, [label(holding.record)]: holding.record }
      const withWorker = (row, worker) => ({ ...row, problems: [...worker.problems, ...row.problems] })
      // A worker's environment is the one it was pre-started with, not its job's (seen nowhere): `refuse` stands
      // whatever it holds, `hold` would be `refuse` were messaging switched off there, so it is `partial`.
      // A worker that holds: refused before relaying (and held when relayed anyway), then held with --allow-hold.
      const heldRows = async (title, worker, decided) => {
        const { record } = worker
        const arrivals = { [label(record)]: 0 }
        return [
          withWorker(
            await scenario({
              name: `${title} (${label(record)}, pid ${record.pid})`,
              target: [record.sessionId],
              receivers,
              probe: record,
              expected: { exit: 10, answer: "held", relays: 0, arrivals, fate: "held", ...decided }
            }),
            worker
          ),
          withWorker(
            await scenario({
              name: `${title} (${label(record)}), --allow-hold`,
              target: [record.sessionId],
              flags: ["--allow-hold"],
              receivers,
              expected: { exit: 0, answer: "held", relays: 1, arrivals, ...decided }
            }),
            worker
          )
        ]
      }
      const fromFlags = { decidedBy: "flagSettings", certainty: "certain" }
      const fromFlagsPartly = { decidedBy: "flagSettings", certainty: "partial" }
      const rows = [
        withWorker(
          await scenario({
            name: `refuse (${label(refusing.record)}, pid ${refusing.record.pid}), --allow-hold`,
            target: [refusing.record.sessionId],
            flags: ["--allow-hold"],
            receivers,
            probe: refusing.record,
            expected: { exit: 9, answer: "refused", relays: 0, arrivals: { [label(refusing.record)]: 0 }, fate: "refused", ...fromFlags }
          }),
          refusing
        ),
        ...(await heldRows("hold", holding, fromFlagsPartly))
      ]
      // Nothing set, a job in bypassPermissions: its mode is in its job state alone, and a prompting sender is held.
      const spareEnv = await waitFor("a spare background worker", spareEnvironment, { timeoutMs: 90_000, intervalMs: 500 }).catch(() => null)
      if (asRoot && !(spareEnv ?? []).includes("IS_SANDBOX=1")) {
        notes.push("no bypassPermissions job: the background service's spare worker runs without IS_SANDBOX=1, and as root such a job dies")
        return rows
      }
      // `--bg` with bypassPermissions asks that its disclaimer was accepted once, interactively.
      if (registry.userSettings()?.skipDangerousModePermissionPrompt !== true) {
        await startReceivers([{
          label: "send-bg-disclaimer",
          args: ["--dangerously-skip-permissions"],
          environment: asRoot ? { IS_SANDBOX: "1" } : {},
          bypass: true
        }])
        await waitFor("the disclaimer's acceptance in the user settings", () => registry.userSettings()?.skipDangerousModePermissionPrompt === true, {
          timeoutMs: 20_000
        })
      }
      const bypass = await onSpare("SEND-BG-BYPASS", ["--dangerously-skip-permissions"])
      receivers[label(bypass.record)] = bypass.record
      const byMode = { decidedBy: "default", certainty: "partial" }
      return [...rows, ...(await heldRows("bypassPermissions, nothing set", bypass, byMode))]
    })

  /**
   * A Claude Code that runs in a mount namespace of its own (`unshare --mount`, as root), where an
   * overlay on `/etc` holds `files` (paths under `/etc`, their text): the host's `/etc` is never
   * written; and where each path of `binds` (an existing file) is, a file of the run holding its text,
   * bound over it in that namespace alone. Returns the path of the wrapper, which takes Claude Code's
   * arguments.
   */
  const inOwnMountNamespace = (name, files, binds = {}) => {
    const upper = join(runDirectory, `${name}-etc-upper`)
    const scratch = join(runDirectory, `${name}-etc-work`)
    mkdirSync(scratch, { recursive: true })
    mkdirSync(upper, { recursive: true })
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(upper, file, ".."), { recursive: true })
      writeFileSync(join(upper, file), text)
    }
    const quoted = (text) => `'${text.replace(/'/g, "'\\''")}'`
    const bound = Object.entries(binds).map(([target, text], i) => {
      const source = join(runDirectory, `${name}-bind-${i}`)
      writeFileSync(source, text)
      return `mount --bind ${quoted(source)} ${quoted(target)} && `
    })
    const inner = `mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=${upper},workdir=${scratch} /etc && ${
      bound.join("")
    }exec "$0" "$@"`
    const wrapper = join(runDirectory, `${name}-claude`)
    writeFileSync(wrapper, `#!/bin/sh\nexec unshare --mount -- sh -c ${quoted(inner)} ${quoted(claude)} "$@"\n`, { mode: 0o755 })
    return wrapper
  }

  const mountNs = async () => {
    const title = "a receiver in its own mount namespace (its managed settings under /proc/<pid>/root)"
    if (process.getuid?.() !== 0 || spawnSync("unshare", ["--version"]).status !== 0) {
      const why = process.getuid?.() !== 0 ? "not running as root" : "no unshare"
      log(`send phase mount-ns: skipped: ${why}`)
      process.stdout.write(`\n## send: ${title}\n\nskipped: ${why}\n`)
      return { rows: [], ok: true }
    }
    return phase(title, async () => {
      const managed = "claude-code/managed-settings.json"
      const dropIn = "claude-code/managed-settings.d/50-hold.json"
      // The home's user settings, as its namespace alone sees them: the host's file (made `{}`, which is no
      // setting, where there is none yet) with `crossSessionInbound: "refuse"` bound over it.
      const userFile = join(home, "settings.json")
      if (!existsSync(userFile)) writeFileSync(userFile, "{}\n")
      const userRefusing = `${JSON.stringify({ ...registry.userSettings(), crossSessionInbound: "refuse" }, null, 2)}\n`
      const specs = [
        { label: "send-ns-refuse", files: { [managed]: "{\"crossSessionInbound\":\"refuse\"}\n" } },
        { label: "send-ns-hold", files: { [dropIn]: "{\"crossSessionInbound\":\"hold\"}\n" } },
        { label: "send-ns-user", files: {}, binds: { [userFile]: userRefusing } }
      ]
      const receivers = {}
      for (const { binds, files, label } of specs) {
        const through = makeDriver({ tmux, registry, claude: inOwnMountNamespace(label, files, binds), log })
        Object.assign(receivers, await startReceivers([{ label }], through))
      }
      const ours = readlinkSync("/proc/self/ns/mnt")
      const namespaceProblems = (label) => {
        const theirs = readlinkSync(`/proc/${receivers[label].pid}/ns/mnt`)
        log(`send: mount-ns: ${label} (pid ${receivers[label].pid}) runs in ${theirs}, claude-peers in ${ours}`)
        const leaked = specs.flatMap((spec) => Object.keys(spec.files)).filter((file) => existsSync(join("/etc", file)))
        return [
          ...(theirs === ours ? [`${label} runs in claude-peers' own mount namespace`] : []),
          ...leaked.map((file) => `/etc/${file} is in the host's namespace too`),
          ...(registry.userSettings()?.crossSessionInbound === undefined ? [] : [`the host's ${userFile} sets crossSessionInbound too`])
        ]
      }
      const withNamespace = (row, label) => ({ ...row, problems: [...namespaceProblems(label), ...row.problems] })
      const fromManaged = { decidedBy: "policySettings", certainty: "certain" }
      const to = (label, name, flags, expected) =>
        scenario({
          name,
          target: [receivers[label].sessionId],
          flags,
          receivers,
          probe: receivers[label],
          expected: { ...expected, arrivals: { [label]: expected.arrivals } }
        })
      return [
        withNamespace(
          await to("send-ns-refuse", `managed-settings.json refuse (pid ${receivers["send-ns-refuse"].pid}), --allow-hold`, ["--allow-hold"], {
            exit: 9,
            answer: "refused",
            relays: 0,
            arrivals: 0,
            fate: "refused",
            ...fromManaged
          }),
          "send-ns-refuse"
        ),
        withNamespace(
          await to("send-ns-hold", `managed-settings.d drop-in hold (pid ${receivers["send-ns-hold"].pid})`, [], {
            exit: 10,
            answer: "held",
            relays: 0,
            arrivals: 0,
            fate: "held",
            ...fromManaged
          }),
          "send-ns-hold"
        ),
        withNamespace(
          await to("send-ns-hold", "managed-settings.d drop-in hold, --allow-hold", ["--allow-hold"], {
            exit: 0,
            answer: "held",
            relays: 1,
            arrivals: 0,
            heldOnScreen: "send-ns-hold",
            ...fromManaged
          }),
          "send-ns-hold"
        ),
        withNamespace(
          await to("send-ns-user", `its user settings.json refuse, bound in its namespace (pid ${receivers["send-ns-user"].pid}), --allow-hold`, [
            "--allow-hold"
          ], {
            exit: 9,
            answer: "refused",
            relays: 0,
            arrivals: 0,
            fate: "refused",
            decidedBy: "userSettings",
            certainty: "certain"
          }),
          "send-ns-user"
        )
      ]
    })
  }

  /**
   * `claude --continue` beside the live session it continues: Claude Code continues the latest
   * conversation of the directory, so the session is given a prompt first (with no transcript there,
   * `--continue` has nothing to continue), in a directory of its own (no other session's conversation
   * there is later). In a directory with no conversation, `--continue` exits at once: seen and noted.
   */
  const continued = () =>
    phase("--continue beside the live session it continues (one session id, two processes)", async () => {
      // Why a `--continue` can exit before it registers: a directory with no conversation to continue (it prints
      // "No conversation found to continue" and exits 1; the screen it leaves is cleared).
      const nothing = join(work, "continue-nothing")
      mkdirSync(nothing, { recursive: true })
      driver.start("send-continue-nothing", nothing, ["--continue"])
      const seenOf = { registered: false, screen: "" }
      const exited = await waitFor("--continue in a directory without a conversation to exit", () => {
        if (registry.windowOf("send-continue-nothing") !== undefined) seenOf.registered = true
        const dead = tmux.panes().find((pane) => pane.name === "send-continue-nothing")?.dead === true
        const screen = tmux.screen("send-continue-nothing").split("\n").map((line) => line.trim()).filter((line) =>
          line !== "" && !line.startsWith("Pane is dead")
        )
        if (screen.length > 0) seenOf.screen = screen.slice(-3).join(" / ")
        return dead
      }, { timeoutMs: 30_000, intervalMs: 100 }).then(() => true, () => false)
      notes.push(
        `\`claude --continue\` in a directory without a conversation: ${exited ? "exited" : "still runs after 30 s"}, ${
          seenOf.registered ? "after writing a record" : "without registering"
        }; its screen showed: ${seenOf.screen || "nothing"}`
      )
      log(`send: continue: ${notes.at(-1)}`)
      const cwd = join(work, "continue")
      mkdirSync(cwd, { recursive: true })
      const first = "send-continued"
      const second = "send-continue"
      driver.start(first, cwd, ["--name", first])
      const { record: original } = await driver.up(first)
      await driver.submit(first, "hello")
      await waitFor(`${first}'s transcript`, () => existsSync(transcriptOf(home, original)), { timeoutMs: 60_000 })
      await waitFor(`${first} to finish its turn`, () => registry.windowOf(first)?.record.status === "idle", { timeoutMs: 60_000 })
      driver.start(second, cwd, ["--continue"])
      await driver.up(second)
      // Its first records carry a derived name (`continue-<2 hex>`); the conversation's name follows within seconds.
      await waitFor(`${second} to take the conversation's name`, () => registry.windowOf(second)?.record.name === original.name, { timeoutMs: 20_000 })
        .catch((error) => log(`send: continue: ${error.message}; it is named ${JSON.stringify(registry.windowOf(second)?.record.name)}`))
      const { record: again } = registry.windowOf(second)
      log(
        `send: continue: ${first} pid ${original.pid} (${original.name}, ${original.sessionId}), ${second} pid ${again.pid} (${again.name}, ${again.sessionId})`
      )
      const listed = await peers(["list"])
      let listing
      try {
        listing = JSON.parse(listed.stdout)
      } catch {
        listing = undefined
      }
      const listingProblems = judgeSharedIdListing(listing, [original.pid, again.pid], original.sessionId)
      for (const session of (Array.isArray(listing) ? listing : []).filter((s) => s.sessionId === original.sessionId)) {
        log(`send: continue: list: pid ${session.pid} name ${JSON.stringify(session.name)} address ${JSON.stringify(session.address)}`)
      }
      // One transcript file for both: the conversation is one, and a message to either would be in it.
      const receivers = { "the shared transcript": original }
      const mismatch = { exit: 4, answer: "identity_mismatch", relays: 0, arrivals: { "the shared transcript": 0 } }
      const rows = [
        await scenario({ name: `by id ${original.sessionId.slice(0, 8)}…`, target: [original.sessionId], receivers, expected: mismatch }),
        await scenario({
          name: "by id, --allow-shared-name",
          target: [original.sessionId],
          flags: ["--allow-shared-name"],
          receivers,
          expected: mismatch
        }),
        // Claude Code 2.1.332 gives the `--continue` process the conversation's name, unchecked against the live one's.
        ...(again.name === original.name
          ? [await scenario({ name: `--name ${original.name} (both processes carry it)`, target: ["--name", original.name], receivers, expected: mismatch })]
          : [
            await scenario({ name: `--name ${original.name} (the continued one)`, target: ["--name", original.name], receivers, expected: mismatch }),
            await scenario({ name: `--name ${again.name} (the --continue one)`, target: ["--name", again.name], receivers, expected: mismatch })
          ])
      ]
      rows[0].problems.unshift(
        ...(again.sessionId === original.sessionId ? [] : [`--continue took session id ${again.sessionId}, not ${original.sessionId}`]),
        ...listingProblems.map((problem) => `list: ${problem}`)
      )
      // The refusal names both processes, so that a caller sees which two.
      for (const row of rows) {
        const unnamed = [original.pid, again.pid].filter((pid) => !row.send.text.includes(String(pid)))
        if (unnamed.length > 0) row.problems.push(`the refusal does not name pid ${unnamed.join(", ")}: ${row.send.text}`)
      }
      // What the name would do, were claude-peers to hand it to SendMessage: seen, not judged (no rule says which one it must reach).
      const byName = `claude-peers send check by name ${randomBytes(4).toString("hex")}`
      const { fate, text } = await probeFate({ pid: `${original.pid}/${again.pid}`, messagingSocketPath: null, address: original.name }, byName)
      let said = text
      try {
        const printed = JSON.parse(text)
        said = printed.detail ?? printed.text ?? text
      } catch {
        // kept as printed
      }
      await waitFor("the message by name on a screen", () => [first, second].some((label) => tmux.screen(label).includes(byName)), { timeoutMs: 15_000 })
        .catch(() => false)
      const shownBy = [first, second].filter((label) => tmux.screen(label).includes(byName))
      const note = `SendMessage to the name ${JSON.stringify(original.name)} (Claude Code's own, not claude-peers'): ${fate}; ` +
        `shown by ${shownBy.length === 0 ? "neither window" : shownBy.join(" and ")}; ${
          arrivals(home, original, byName)
        } arrivals in the shared transcript. It said: ${said.replace(/\s+/g, " ").slice(0, 400)}`
      log(`send: continue: ${note}`)
      notes.push(note)
      return rows
    })

  return {
    continue: continued,
    policies,
    "not-live": notLive,
    "shared-name": sharedName,
    parity,
    stopped,
    "other-uid": otherUid,
    "bg-worker": bgWorker,
    "mount-ns": mountNs
  }
}

/** The send phases named (every one by default), one after another: `{ phases, ok }`. */
export const checkSendPhases = async (context, names = sendPhaseNames) => {
  const phases = makeSendPhases(context)
  const results = []
  for (const name of names) {
    context.log(`send phase: ${name}`)
    results.push({ name, ...(await phases[name]()) })
  }
  return { phases: results, ok: results.every((result) => result.ok) }
}

// Alone: its own run directory, home, mock API and tmux server, removed at the end.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const log = makeLog()
  const names = process.argv.slice(2)
  const unknown = names.filter((name) => !sendPhaseNames.includes(name))
  if (unknown.length > 0) {
    process.stderr.write(`unknown send phase ${unknown.join(", ")}; the phases: ${sendPhaseNames.join(", ")}\n`)
    process.exit(2)
  }
  const run = { directory: null, marker: null, tmux: null, api: null, daemonDirectory: null }
  process.on("exit", () => {
    try {
      run.tmux?.killServer()
    } catch {
      // gone
    }
    if (run.marker !== null) killMarked(run.marker)
    run.api?.close()
    for (const directory of [run.directory, run.daemonDirectory]) {
      if (directory !== null) rmSync(directory, { recursive: true, force: true })
    }
  })
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130))
  const main = async () => {
    if (!existsSync(join(repoRoot, "dist", "node.js"))) throw new CheckFailed("claude-peers is not built: run `npm run build` first")
    const { claude, env, home, works: [work] } = await makeCheckWorld(run, { prefix: "cps-", repoRoot, log })
    const registry = makeRegistry(home)
    const driver = makeDriver({ tmux: run.tmux, registry, claude, log })
    const context = { claude, driver, env, home, log, registry, runDirectory: run.directory, tmux: run.tmux, work }
    const { ok } = await checkSendPhases(context, names.length === 0 ? sendPhaseNames : names)
    return ok ? 0 : 1
  }
  main().then((code) => process.exit(code), (error) => {
    log(`the send check failed: ${error?.stack ?? error}`)
    process.exit(2)
  })
}
