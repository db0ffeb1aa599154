/**
 * `claude-peers policy` as a user runs it: the built bin, a temporary Claude home and managed
 * directory, and real processes that carry `--settings` in their arguments (a script named
 * `claude` run by node). JSON shapes, exit codes and refusals, terminal-safe human output, the
 * fast recognizer against the full parser, and a process whose environment this user may not read.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { recognize } from "../command/src/Recognize.js"
import type { Invocation } from "../src/cli/Invocation.js"
import { commandTree, Runner } from "../src/cli/Root.js"
import { runCli } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { stagedForOtherUsers } from "./support/staged.js"
import { killAndReap, linuxPidDomain, startTimeOf } from "./support/worlds.js"

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-policy-cli-")))
const children: Array<ChildProcess> = []
afterAll(async () => {
  await Promise.all(children.map(killAndReap))
  fs.rmSync(tmp, { recursive: true, force: true })
})

const script = path.join(tmp, "bin", "claude")
fs.mkdirSync(path.dirname(script), { recursive: true })
fs.writeFileSync(script, "setInterval(() => {}, 1 << 30)\n")

const untilExec = async (pid: number) => {
  for (let i = 0; i < 500; i++) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(script)) return
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`pid ${pid} did not start ${script}`)
}

interface Started {
  readonly pid: number
  readonly sessionId: string
}

/** A real process `node …/claude ARGS…` in `cwd`, registered in `home` as a Claude Code session. */
const startSession = async (
  home: string,
  options: { args?: ReadonlyArray<string>; cwd?: string; env?: NodeJS.ProcessEnv; name: string; socket?: boolean; uid?: number }
): Promise<Started> => {
  const cwd = options.cwd ?? path.join(tmp, "work")
  fs.mkdirSync(cwd, { recursive: true })
  const child = spawn(process.execPath, [script, ...(options.args ?? [])], {
    cwd,
    env: { ...options.env },
    stdio: "ignore",
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid })
  })
  children.push(child)
  await untilExec(child.pid!)
  const sessionId = `sess-${options.name.replace(/[^a-z0-9]/gi, "")}-${child.pid}`
  fs.writeFileSync(
    path.join(home, "sessions", `${child.pid}.json`),
    recordText(child.pid!, {
      procStart: startTimeOf(child.pid!),
      pidDomain: linuxPidDomain(),
      sessionId,
      name: options.name,
      cwd,
      messagingSocketPath: options.socket === false ? undefined : `/tmp/cc-socks/${child.pid}.sock`
    })
  )
  return { pid: child.pid!, sessionId }
}

let homes = 0
const makeHome = (user?: string): string => {
  const home = path.join(tmp, `home-${homes++}`)
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  if (user !== undefined) fs.writeFileSync(path.join(home, "settings.json"), `{\n  "crossSessionInbound": ${JSON.stringify(user)}\n}\n`)
  return home
}

const managed = path.join(tmp, "managed")

type PolicyJson = {
  pid: number
  sessionId: string
  name: string
  effective: string | null
  decidedBy: string
  certainty: string
  sources: Array<{ source: string; path: string | null; value: unknown; state: string }>
  unseen: Array<string>
  partialBecause: Array<{ input: string; detail: string }>
}

describe("claude-peers policy", { timeout: 120_000 }, () => {
  it("--json: an array of the contract's objects, sorted by pid, one per live session", async () => {
    const home = makeHome("accept")
    const a = await startSession(home, { name: "alpha", args: ["--settings", "{\"crossSessionInbound\":\"refuse\"}"] })
    const b = await startSession(home, { name: "beta" })
    fs.writeFileSync(path.join(home, "sessions", "999999.json"), recordText(999999, { name: "ghost" }))
    const run = runCli(["--claude-home", home, "policy", "--json", "--managed-dir", managed])
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    const all = JSON.parse(run.stdout) as Array<PolicyJson>
    expect(all.map((p) => [p.pid, p.name, p.effective, p.decidedBy, p.certainty])).toEqual(
      [
        [a.pid, "alpha", "refuse", "flagSettings", "certain"],
        [b.pid, "beta", "accept", "userSettings", "certain"]
      ].sort((x, y) => Number(x[0]) - Number(y[0]))
    )
    const alpha = all.find((p) => p.name === "alpha")!
    expect(Object.keys(alpha)).toEqual([
      "pid",
      "sessionId",
      "name",
      "effective",
      "decidedBy",
      "certainty",
      "sources",
      "unseen",
      "killSwitch",
      "partialBecause",
      "receiverMode",
      "forSender"
    ])
    expect(alpha.sessionId).toBe(a.sessionId)
    expect(alpha.sources.map((s) => [s.source, s.state])).toEqual([
      ["policySettings", "absent"],
      ["flagSettings", "set"],
      ["userSettings", "set"],
      ["localSettings", "absent"],
      ["projectSettings", "absent"]
    ])
    expect(alpha.sources[0]!.path).toBe(path.join(managed, "managed-settings.json"))
    expect(alpha.unseen).toEqual(expect.arrayContaining(["serverManagedSettings", "mdmSettings"]))
  })

  it("SESSION_ID or --name: one object, resolved as resolve resolves it, with its refusals and exit codes", async () => {
    const home = makeHome("hold")
    const one = await startSession(home, { name: "Api Server" })
    await startSession(home, { name: "docs" })
    await startSession(home, { name: "Docs" })
    const quiet = await startSession(home, { name: "quiet", socket: false })
    const byId = runCli(["--claude-home", home, "policy", one.sessionId, "--json"])
    expect(byId.status).toBe(0)
    expect(JSON.parse(byId.stdout)).toMatchObject({ pid: one.pid, effective: "hold", decidedBy: "userSettings" })
    const byName = runCli(["--claude-home", home, "policy", "--name", "api server", "--json"])
    expect(JSON.parse(byName.stdout)).toMatchObject({ pid: one.pid })
    const dead = runCli(["--claude-home", home, "policy", "no-such-session", "--json"])
    expect(dead.status).toBe(3)
    expect(JSON.parse(dead.stdout).error.reason).toBe("not_live")
    const shared = runCli(["--claude-home", home, "policy", "--name", "docs", "--json"])
    expect(shared.status).toBe(4)
    expect(JSON.parse(shared.stdout).error).toMatchObject({ reason: "identity_mismatch", shared: "query" })
    const unaddressable = runCli(["--claude-home", home, "policy", quiet.sessionId])
    expect(unaddressable.status).toBe(8)
    expect(unaddressable.stdout).toBe("")
    expect(unaddressable.stderr).toContain("claude-peers:")
    const both = runCli(["--claude-home", home, "policy", one.sessionId, "--name", "docs"])
    expect(both.status).toBe(2)
  })

  it("--allow-shared-name: a SESSION_ID whose name is shared gets its policy, as send --allow-shared-name sends to it", async () => {
    const home = makeHome("hold")
    const mine = await startSession(home, { name: "twin" })
    await startSession(home, { name: "Twin" })
    const refused = runCli(["--claude-home", home, "policy", mine.sessionId, "--json"])
    expect(refused.status).toBe(4)
    expect(JSON.parse(refused.stdout).error.reason).toBe("identity_mismatch")
    const allowed = runCli(["--claude-home", home, "policy", mine.sessionId, "--allow-shared-name", "--json"])
    expect(allowed.status, allowed.stderr).toBe(0)
    expect(JSON.parse(allowed.stdout)).toMatchObject({ pid: mine.pid, sessionId: mine.sessionId, effective: "hold", decidedBy: "userSettings" })
    const byName = runCli(["--claude-home", home, "policy", "--name", "twin", "--allow-shared-name", "--json"])
    expect(byName.status).toBe(2)
  })

  it("--managed-dir replaces the platform's managed directory: drop-ins decide over the user's value", async () => {
    const home = makeHome("accept")
    const dir = path.join(tmp, "managed-dropins")
    fs.mkdirSync(path.join(dir, "managed-settings.d"), { recursive: true })
    fs.writeFileSync(path.join(dir, "managed-settings.json"), "{\"crossSessionInbound\":\"accept\"}")
    fs.writeFileSync(path.join(dir, "managed-settings.d", "10-hold.json"), "{\"crossSessionInbound\":\"hold\"}")
    await startSession(home, { name: "managed" })
    const run = runCli(["--claude-home", home, "policy", "--managed-dir", dir, "--json"])
    const [policy] = JSON.parse(run.stdout) as Array<PolicyJson>
    expect(policy).toMatchObject({ effective: "hold", decidedBy: "policySettings", certainty: "certain" })
    expect(policy!.sources.filter((s) => s.source === "policySettings").map((s) => s.path)).toEqual([
      path.join(dir, "managed-settings.json"),
      path.join(dir, "managed-settings.d", "10-hold.json")
    ])
  })

  it("a project's local settings tighten, and --setting-sources in the arguments excludes them", async () => {
    const home = makeHome("accept")
    const project = path.join(tmp, "project")
    fs.mkdirSync(path.join(project, ".claude"), { recursive: true })
    fs.writeFileSync(path.join(project, ".claude", "settings.local.json"), "{\"crossSessionInbound\":\"hold\"}")
    const tightened = await startSession(home, { name: "tight", cwd: project })
    const excluded = await startSession(home, { name: "open", cwd: project, args: ["--setting-sources", "user"] })
    const all = JSON.parse(runCli(["--claude-home", home, "policy", "--json", "--managed-dir", managed]).stdout) as Array<PolicyJson>
    expect(all.find((p) => p.pid === tightened.pid)).toMatchObject({ effective: "hold", decidedBy: "repoSettings" })
    expect(all.find((p) => p.pid === excluded.pid)).toMatchObject({ effective: "accept", decidedBy: "userSettings" })
  })

  it("a project's settings holding a value nested 10,000 levels deep: the session gets its policy, the value a short name", async () => {
    const home = makeHome("accept")
    const project = path.join(tmp, "deep-project")
    fs.mkdirSync(path.join(project, ".claude"), { recursive: true })
    fs.writeFileSync(path.join(project, ".claude", "settings.json"), `{"crossSessionInbound":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)
    const s = await startSession(home, { name: "deep", cwd: project })
    const json = runCli(["--claude-home", home, "policy", s.sessionId, "--json", "--managed-dir", managed])
    expect(json.status).toBe(0)
    const one = JSON.parse(json.stdout) as PolicyJson & { readonly sources: ReadonlyArray<{ readonly source: string; readonly value: unknown }> }
    expect(one).toMatchObject({ effective: "hold", decidedBy: "invalidSetting" })
    expect(String(one.sources.find((source) => source.source === "projectSettings")?.value).length).toBeLessThanOrEqual(80)
    const human = runCli(["--claude-home", home, "policy", "--managed-dir", managed])
    expect(human.status).toBe(0)
    expect(human.stderr).toBe("")
  })

  it("human output: a table of session, effective, decided by and certainty; one session adds its sources", async () => {
    const home = makeHome("refuse")
    const s = await startSession(home, { name: "human" })
    const table = runCli(["--claude-home", home, "policy", "--managed-dir", managed])
    expect(table.status).toBe(0)
    const [header, row] = table.stdout.split("\n")
    expect(header!.split(/\s{2,}/)).toEqual(["PID", "NAME", "SESSION ID", "EFFECTIVE", "DECIDED BY", "CERTAINTY", "MODE", "FOR SENDER"])
    expect(row!.split(/\s{2,}/)).toEqual([
      String(s.pid),
      "human",
      s.sessionId,
      "refuse",
      "userSettings",
      "certain",
      "prompting",
      "bypass:refuse prompting:refuse"
    ])
    const one = runCli(["--claude-home", home, "policy", s.sessionId, "--managed-dir", managed])
    expect(one.stdout).toContain("userSettings     set")
    expect(one.stdout).toContain(path.join(home, "settings.json"))
    const none = runCli(["--claude-home", makeHome(), "policy"])
    expect(none.stdout).toBe("no live sessions\n")
  })

  it("human output never echoes control characters from a record, a file or the command line", async () => {
    const evil = "\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil"
    const home = makeHome()
    fs.writeFileSync(path.join(home, "settings.json"), JSON.stringify({ crossSessionInbound: `x${evil}` }))
    const s = await startSession(home, { name: evil, args: ["--settings", path.join(tmp, `flag${evil.replace(/\//g, "")}.json`)] })
    const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
    for (const args of [["policy"], ["policy", s.sessionId], ["policy", "--name", evil], ["policy", `nope${evil}`]]) {
      const run = runCli(["--claude-home", home, ...args, "--managed-dir", managed])
      expect(run.stdout + run.stderr, args.join(" ")).not.toMatch(control)
      expect(run.stdout + run.stderr, args.join(" ")).toMatch(/\\u\{1b\}|\\u001b/)
    }
    const json = JSON.parse(runCli(["--claude-home", home, "policy", s.sessionId, "--json"]).stdout) as PolicyJson
    expect(json.name).toBe(evil)
    expect(json.sources.find((x) => x.source === "userSettings")).toMatchObject({ state: "invalid", value: `x${evil}` })
  })

  // `nobody` runs a copy it can read wherever this checkout is.
  const staged = stagedForOtherUsers()
  it.skipIf(process.getuid?.() !== 0)("a reader that may not read the process's environment: partial, with the reason", async () => {
    // Root can read every process's environment; the command run as `nobody` cannot read root's.
    const home = makeHome("accept")
    fs.chmodSync(tmp, 0o755)
    for (const dir of [home, path.join(home, "sessions")]) fs.chmodSync(dir, 0o755)
    fs.chmodSync(path.join(home, "settings.json"), 0o644)
    const s = await startSession(home, { name: "root-owned" })
    for (const file of fs.readdirSync(path.join(home, "sessions"))) fs.chmodSync(path.join(home, "sessions", file), 0o644)
    const run = spawnSync(process.execPath, [staged.command(), "--claude-home", home, "policy", s.sessionId, "--json", "--managed-dir", managed], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: "/nonexistent-home" },
      uid: 65534,
      gid: 65534,
      timeout: 30_000
    })
    expect(run.stderr).toBe("")
    const policy = JSON.parse(run.stdout) as PolicyJson
    expect(policy).toMatchObject({ effective: "accept", decidedBy: "userSettings", certainty: "partial" })
    expect(policy.partialBecause.map((p) => p.input)).toContain("arguments")
    expect(policy.partialBecause.find((p) => p.input === "arguments")!.detail).toContain("permission denied")
    // Nor can it read root's mount namespace: whether the files at the session's paths are the ones
    // it reads is unknown, and the answer says so.
    expect(policy.partialBecause.map((p) => p.detail).join("\n")).toContain("mount namespace could not be read")
    // Its arguments are readable by anyone: --settings is still known.
    expect(policy.sources.find((x) => x.source === "flagSettings")).toMatchObject({ state: "not_applicable" })
  })
})

describe("policy's spellings: the fast recognizer and the full parser agree", () => {
  const parsed = (args: ReadonlyArray<string>): Promise<Invocation | undefined> => {
    let seen: Invocation | undefined
    const tree = commandTree.pipe(Command.provideSync(Runner, () => (invocation: Invocation) => Effect.sync(() => void (seen = invocation))))
    return Effect.runPromise(
      Command.run(tree, { name: "claude-peers", version: "0" })(["node", "claude-peers", ...args]).pipe(
        Effect.provide(NodeContext.layer),
        Effect.orElseSucceed(() => undefined),
        Effect.map(() => seen)
      )
    )
  }

  const spellings: ReadonlyArray<ReadonlyArray<string>> = [
    ["policy"],
    ["policy", "--json"],
    ["policy", "sess-1"],
    ["policy", "sess-1", "--json"],
    ["policy", "--json", "sess-1"],
    ["policy", "--name", "api"],
    ["policy", "--name=api", "--json"],
    ["policy", "--managed-dir", "/opt/managed"],
    ["policy", "--managed-dir=/opt/managed", "sess-1", "--json"],
    ["policy", "--name", "Api Server", "--managed-dir", "/m"],
    ["policy", "sess-1", "--allow-shared-name", "--json"],
    ["--claude-home", "/h", "policy", "--json"],
    ["--claude-home=/h", "policy", "sess-1"]
  ]

  it("every documented spelling is recognized fast, as the parser reads it", async () => {
    for (const args of spellings) {
      const fast = recognize(args)
      expect(fast, args.join(" ")).toBeDefined()
      expect(fast, args.join(" ")).toEqual(await parsed(args))
    }
  })

  it("what the recognizer leaves alone is the parser's: both given, repeated options, unknown options", () => {
    for (
      const args of [["policy", "sess-1", "--name", "api"], ["policy", "--json", "--json"], ["policy", "--bogus"], ["policy", "a", "b"], [
        "policy",
        "--managed-dir"
      ]]
    ) {
      expect(recognize(args), args.join(" ")).toBeUndefined()
    }
  })
})
