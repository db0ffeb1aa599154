/**
 * The liveness phase of `npm run check:claude`: the sessions claude-peers and `claude agents` see
 * differently because of who runs them and how, each held against both tools' answers:
 * - a session stopped with SIGSTOP (state `T`): both list it; claude-peers says `stopped: true` and
 *   still resolves it (difference `stopped`);
 * - `--continue` in the directory of live sessions: when it takes a live conversation, two live
 *   processes carry one session id; both tools list both; claude-peers addresses each by its socket
 *   and refuses to resolve the id (difference `duplicate-session-id`);
 * - another uid's real session: the registry as a reader of another uid (`nobody`) sees it (a copy of
 *   the home's `sessions/`, readable by that user: the check never changes Claude Code's own files),
 *   `claude agents` and claude-peers both run as that user; Claude Code hides it (EPERM),
 *   claude-peers lists it with `address: null` and `unaddressable: "other_user"` and `resolve`
 *   refuses it with exit 8 (difference `other-user`).
 * Each scenario is one row in the shape of the snapshots' rows, so that the run's summary and exit
 * code count it; what a scenario could not set up is logged and gives no row.
 */
import { spawn } from "node:child_process"
import { chmodSync, chownSync, copyFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { processStat } from "./processes.mjs"
import { parseJson, waitFor } from "./tools.mjs"

/** Runs a program to its end as `user` (`{ uid, gid }`), or as this process when null. */
const runAs = (user, file, args, env, timeoutMs = 60_000) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"], ...(user === null ? {} : user) })
    const out = []
    const err = []
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (exit) => {
      clearTimeout(timer)
      resolvePromise({ exit, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
  })

const stateOf = (pid) => /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "latin1"))?.[1]

const row = (scenario, agents, peers, differenceId, agreesAsDocumented) => ({
  scenario,
  claudeAgents: agents,
  claudePeers: peers,
  findings: agreesAsDocumented ? [{ id: differenceId }] : [{ id: null }],
  judgement: agreesAsDocumented ? `documented (${differenceId})` : `UNDOCUMENTED (expected ${differenceId})`
})

const nobodyUser = async () => {
  const uid = await runAs(null, "id", ["-u", "nobody"], process.env)
  const gid = await runAs(null, "id", ["-g", "nobody"], process.env)
  return uid.exit === 0 && gid.exit === 0 ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) } : null
}

export const checkLiveness = async ({ claude, commandPath, driver, env, home, log, registry, runDirectory, tmux, work }) => {
  const rows = []
  const peers = async (args, { as = null, claudeHome = home, environment = process.env } = {}) => {
    const result = await runAs(as, process.execPath, [commandPath, "--claude-home", claudeHome, ...args, "--json"], environment)
    return { exit: result.exit, json: result.stdout.trim() === "" ? null : parseJson(result.stdout, `claude-peers ${args.join(" ")}`) }
  }
  const agents = async ({ as = null, environment = env } = {}) => {
    const result = await runAs(as, claude, ["agents", "--json"], environment)
    if (result.exit !== 0) throw new Error(`claude agents --json exited ${result.exit}: ${result.stderr.slice(0, 300)}`)
    return parseJson(result.stdout, "claude agents --json")
  }

  // --- a stopped session. tmux continues a pane's own process when it stops (it sends SIGCONT to
  // the pane's process group), so this session runs under a shell, as a grandchild of tmux.
  tmux.newSession("stopped", work, ["sh", "-c", "\"$0\" \"$@\"; exit $?", claude])
  const stopped = await driver.up("stopped").catch((error) => {
    log(`liveness: the session to stop did not register: ${error.message}`)
    return undefined
  })
  if (stopped !== undefined) {
    log(`liveness: SIGSTOP to the session "stopped" (pid ${stopped.pid})`)
    process.kill(stopped.pid, "SIGSTOP")
    try {
      await waitFor("the session to stop", () => stateOf(stopped.pid) === "T", { timeoutMs: 10_000, intervalMs: 50 })
      const listedByAgents = (await agents()).some((a) => a.pid === stopped.pid)
      const session = (await peers(["list"])).json?.find((s) => s.pid === stopped.pid)
      const resolved = await peers(["resolve", stopped.record.sessionId])
      rows.push(row(
        "a session stopped with SIGSTOP",
        listedByAgents ? "listed" : "not listed",
        `${session === undefined ? "not listed" : `listed, stopped: ${session.stopped}`}; resolve exit ${resolved.exit}`,
        "stopped",
        listedByAgents && session?.stopped === true && resolved.exit === 0
      ))
    } finally {
      process.kill(stopped.pid, "SIGCONT")
    }
    await waitFor("the session to continue", () => stateOf(stopped.pid) !== "T", { timeoutMs: 10_000, intervalMs: 50 })
    const continued = (await peers(["list"])).json?.find((s) => s.pid === stopped.pid)
    log(`liveness: the session continued; claude-peers says stopped: ${continued?.stopped}`)
  }

  // --- --continue in the directory of live sessions
  // Its stderr goes to a file: a Claude Code that exits at once leaves an empty screen.
  const continueErrors = join(runDirectory, "continue.stderr")
  tmux.newSession("continue", work, ["sh", "-c", "\"$0\" --continue 2>\"$1\"; exit $?", claude, continueErrors])
  const continuing = await driver.up("continue").catch((error) => {
    const stderr = (() => {
      try {
        return readFileSync(continueErrors, "utf8").slice(0, 500)
      } catch {
        return ""
      }
    })()
    log(`liveness: --continue did not register: ${error.message.split("\n")[0]}; its stderr: ${JSON.stringify(stderr)}`)
    return undefined
  })
  if (continuing !== undefined) {
    const twins = [...registry.readRecords()].filter(([pid, r]) => pid !== continuing.pid && r.sessionId === continuing.record.sessionId)
    if (twins.length === 0) log(`liveness: --continue took session ${continuing.record.sessionId}, which no other live record carries`)
    else {
      const pids = [continuing.pid, ...twins.map(([pid]) => pid)]
      const listedByAgents = (await agents()).filter((a) => pids.includes(a.pid)).length
      const sessions = (await peers(["list"])).json?.filter((s) => pids.includes(s.pid)) ?? []
      const resolved = await peers(["resolve", continuing.record.sessionId])
      const bySocket = sessions.every((s) => s.address === `uds:${s.socketPath}`)
      rows.push(row(
        `--continue of a live conversation (pids ${pids.join(", ")})`,
        `lists ${listedByAgents} of ${pids.length}`,
        `lists ${sessions.length} of ${pids.length}, addresses ${sessions.map((s) => s.address).join(", ")}; resolve exit ${resolved.exit}`,
        "duplicate-session-id",
        listedByAgents === pids.length && sessions.length === pids.length && bySocket && resolved.exit === 4
      ))
    }
  }

  // --- another uid's real session
  const other = process.getuid?.() === 0 ? await nobodyUser() : null
  if (other === null) log("liveness: not root, or no user nobody; no other-uid scenario")
  else {
    const session = registry.windowOf("idle-2") ?? registry.windowOf("idle-1")
    if (session === undefined) log("liveness: no live interactive session to read as another uid")
    else {
      // A copy of the registry that nobody may read: the sessions are this user's real processes.
      const readerHome = join(runDirectory, "other-uid-reader", ".claude")
      const readerUserHome = join(runDirectory, "other-uid-reader", "home")
      mkdirSync(join(readerHome, "sessions"), { recursive: true })
      mkdirSync(readerUserHome, { recursive: true })
      chmodSync(runDirectory, 0o711)
      chmodSync(join(runDirectory, "other-uid-reader"), 0o755)
      chmodSync(readerHome, 0o777)
      chmodSync(join(readerHome, "sessions"), 0o755)
      chownSync(readerUserHome, other.uid, other.gid)
      for (const name of readdirSync(join(home, "sessions"))) {
        if (!name.endsWith(".json")) continue
        copyFileSync(join(home, "sessions", name), join(readerHome, "sessions", name))
        chmodSync(join(readerHome, "sessions", name), 0o644)
      }
      const readerEnv = { PATH: env.PATH, HOME: readerUserHome, CLAUDE_CONFIG_DIR: readerHome, TMPDIR: "/tmp" }
      const listedByAgents = await agents({ as: other, environment: readerEnv })
        .then((all) => (all.some((a) => a.pid === session.pid) ? "listed" : "not listed"))
        .catch((error) => `failed: ${error.message.slice(0, 120)}`)
      const listed = (await peers(["list"], { as: other, claudeHome: readerHome, environment: readerEnv })).json?.find((s) => s.pid === session.pid)
      const resolved = await peers(["resolve", session.record.sessionId], { as: other, claudeHome: readerHome, environment: readerEnv })
      rows.push(row(
        `pid ${session.pid} read by uid ${other.uid}`,
        listedByAgents,
        `${listed === undefined ? "not listed" : `listed, address ${listed.address}, unaddressable ${listed.unaddressable}`}; resolve exit ${resolved.exit}`,
        "other-user",
        listedByAgents === "not listed" && listed?.address === null && listed.unaddressable === "other_user" &&
          listed.socketPath !== null && resolved.exit === 8 && processStat(session.pid) !== null
      ))
    }
  }

  process.stdout.write(
    `\n## liveness: stopped, --continue, another uid\n\n| scenario | \`claude agents --json\` | claude-peers | judgement |\n| --- | --- | --- | --- |\n${
      rows.map((r) => `| ${r.scenario} | ${r.claudeAgents} | ${r.claudePeers} | ${r.judgement} |`).join("\n")
    }\n`
  )
  return rows
}
