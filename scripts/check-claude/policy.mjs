/**
 * The check's `policy` phase: sessions whose launch is not what their process shows, run for real.
 *
 * - A `claude --bg --settings '{"crossSessionInbound":"refuse"}' --permission-mode plan` job: Claude
 *   Code's daemon hands it to a pre-started worker (`claude bg-spare --bg-spare <claim socket>`), whose
 *   own arguments hold no `--settings`. `policy` must answer `refuse` from `flagSettings` and the
 *   `prompting` class, read from the job's state.
 * - As root only: a `claude -p` session under `unshare --mount` whose private `/etc/claude-code`
 *   (an overlay on `/etc` inside its namespace, never the host's) says `refuse`. `policy` must answer
 *   `refuse` from `policySettings`, read through `/proc/<pid>/root`.
 * - The permission-mode parity case: a `--bg` job with no settings: `forSender` must be `hold` for a
 *   bypass sender and `accept` for a prompting one.
 *
 * What this holds the answers against is the session's own launch (its job state, its namespace's
 * files), not yet a message's fate: sending a real message needs the relay (`send`), which this
 * phase does not drive. Returns the list of findings (empty when every answer matched).
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { waitFor } from "./tools.mjs"

const recordWith = (home, predicate) => {
  let files = []
  try {
    files = readdirSync(join(home, "sessions"))
  } catch {
    return undefined
  }
  for (const file of files) {
    if (!/^\d+\.json$/.test(file)) continue
    try {
      const record = JSON.parse(readFileSync(join(home, "sessions", file), "utf8"))
      if (predicate(record)) return record
    } catch {
      // being written
    }
  }
  return undefined
}

const policyOf = (commandPath, env, home, sessionId) => {
  const result = spawnSync(process.execPath, [commandPath, "--claude-home", home, "policy", sessionId, "--json"], {
    env: { ...env, NODE_EXTRA_CA_CERTS: "" },
    encoding: "utf8",
    timeout: 60_000
  })
  if (result.status !== 0) return { error: `policy exited ${result.status}: ${result.stderr.trim()}` }
  return JSON.parse(result.stdout)
}

const cmdlineOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((w) => w !== "")
  } catch {
    return []
  }
}

const expectAnswer = (findings, label, policy, expected) => {
  if (policy.error !== undefined) return findings.push(`${label}: ${policy.error}`)
  for (const [key, value] of Object.entries(expected)) {
    const got = key.split(".").reduce((at, part) => at?.[part], policy)
    const same = JSON.stringify(got) === JSON.stringify(value)
    if (!same) findings.push(`${label}: ${key} is ${JSON.stringify(got)}, expected ${JSON.stringify(value)}`)
  }
}

/** `claude --bg …flags prompt`, resolved once its job's record carries a status (the job told apart by its prompt). */
export const startBackgroundJob = async ({ claude, env, home, log, work }, prompt, flags) => {
  const launch = spawnSync(claude, ["--bg", ...flags, prompt], { cwd: work, env, encoding: "utf8", timeout: 90_000 })
  if (launch.status !== 0) throw new Error(`claude --bg ${flags.join(" ")} failed: ${launch.stderr.trim()}`)
  const record = await waitFor(
    `the --bg job "${prompt}" to register`,
    () => recordWith(home, (r) => r.kind === "bg" && typeof r.status === "string" && readJobIntent(home, r.jobId) === prompt),
    {
      timeoutMs: 90_000,
      intervalMs: 500
    }
  )
  log(`--bg job ${record.jobId} (pid ${record.pid}) runs as: ${cmdlineOf(record.pid).join(" ")}`)
  return record
}

const readJobIntent = (home, jobId) => {
  try {
    return JSON.parse(readFileSync(join(home, "jobs", jobId, "state.json"), "utf8")).intent
  } catch {
    return undefined
  }
}

/** A `claude -p` run under `unshare --mount` whose namespace alone holds a managed file saying `refuse`. */
const startInOwnNamespace = async ({ claude, env, home, log, runDirectory, work }) => {
  const upper = join(runDirectory, "ns-etc-upper")
  const scratch = join(runDirectory, "ns-etc-work")
  mkdirSync(join(upper, "claude-code"), { recursive: true })
  mkdirSync(scratch, { recursive: true })
  writeFileSync(join(upper, "claude-code", "managed-settings.json"), "{\"crossSessionInbound\":\"refuse\"}\n")
  const script = `mount --make-rprivate / && mount -t overlay overlay -o lowerdir=/etc,upperdir=${upper},workdir=${scratch} /etc && exec "$0" -p HOLD-BUSY`
  const child = spawn("unshare", ["--mount", "--", "sh", "-c", script, claude], { cwd: work, env, stdio: "ignore", detached: false })
  const record = await waitFor("the session under unshare --mount to register", () => recordWith(home, (r) => r.entrypoint === "sdk-cli" && r.cwd === work), {
    timeoutMs: 120_000,
    intervalMs: 500
  })
  log(`policy phase: pid ${record.pid} runs in ${readlinkOrNull(`/proc/${record.pid}/ns/mnt`)} (ours ${readlinkOrNull("/proc/self/ns/mnt")})`)
  return { record, child }
}

const readlinkOrNull = (file) => {
  const result = spawnSync("readlink", [file], { encoding: "utf8" })
  return result.status === 0 ? result.stdout.trim() : null
}

export const checkPolicy = async (context) => {
  const { commandPath, env, home, log } = context
  const findings = []
  log("policy phase: a --bg job with --settings refusing, on a pre-started worker")
  const refusing = await startBackgroundJob(context, "POLICY-REFUSING-JOB", ["--settings", "{\"crossSessionInbound\":\"refuse\"}", "--permission-mode", "plan"])
  const worker = cmdlineOf(refusing.pid)
  if (!(worker[0] === "claude bg-spare" || worker[1] === "--bg-spare")) {
    log(`policy phase: the job did not run on a pre-started worker (${worker.join(" ")}); the case is weaker than the issue's`)
  }
  expectAnswer(findings, "--bg job with --settings refuse", policyOf(commandPath, env, home, refusing.sessionId), {
    effective: "refuse",
    decidedBy: "flagSettings",
    certainty: "certain",
    "receiverMode.class": "prompting"
  })

  log("policy phase: a --bg job with nothing set (permission-mode parity)")
  const plain = await startBackgroundJob(context, "POLICY-PLAIN-JOB", [])
  const plainPolicy = policyOf(commandPath, env, home, plain.sessionId)
  expectAnswer(findings, "--bg job with nothing set", plainPolicy, { effective: null, "receiverMode.class": "prompting" })
  if (plainPolicy.forSender !== undefined) {
    const outcomes = Object.fromEntries(plainPolicy.forSender.map((o) => [o.senderMode, o.outcome]))
    if (outcomes.bypass !== "hold" || outcomes.prompting !== "accept") findings.push(`parity: forSender is ${JSON.stringify(outcomes)}`)
  }

  if (process.getuid?.() === 0) {
    log("policy phase: a session under unshare --mount with its own managed file")
    const { record } = await startInOwnNamespace(context)
    expectAnswer(findings, "unshare --mount session", policyOf(commandPath, env, home, record.sessionId), {
      effective: "refuse",
      decidedBy: "policySettings",
      certainty: "certain"
    })
  } else {
    log("policy phase: not root, so no session under unshare --mount")
  }
  for (const finding of findings) log(`policy phase: MISMATCH ${finding}`)
  log(`policy phase: ${findings.length === 0 ? "every answer matched the session's launch" : `${findings.length} mismatches`}`)
  return findings
}
