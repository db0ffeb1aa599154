/**
 * Whose sessions a reader sees, on the real OS with a second uid (`nobody`): the built command run
 * as another user than the session's, a pid of the reader's own record held by another user's
 * process, a record file another user owns, and a process stopped with SIGSTOP. These need root (to
 * start processes and own files as another user); they are skipped otherwise.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { binPath, waitUntil } from "./support/cli.js"
import { recordText } from "./support/records.js"

const isRoot = process.platform === "linux" && process.geteuid?.() === 0
const nobody = (() => {
  const found = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" })
  const uid = Number(found.stdout.trim())
  return found.status === 0 && uid > 0 ? { uid, gid: Number(spawnSync("id", ["-g", "nobody"], { encoding: "utf8" }).stdout.trim()) } : null
})()

/** The built command, as `user` (root when not given), over the Claude home `home`. */
const runAs = (
  user: { readonly uid: number; readonly gid: number } | null,
  home: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
) => {
  const result = spawnSync(process.execPath, [binPath, "--claude-home", home, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", ...env },
    timeout: 60_000,
    ...(user === null ? {} : { uid: user.uid, gid: user.gid })
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const procStartOf = (pid: number): string => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/)[19]!
}

const stateOf = (pid: number): string | undefined => /\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, "latin1"))?.[1]

const children: Array<ChildProcess> = []
const homes: Array<string> = []
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true })
})

/** A `sleep` that runs until the suite ends, as `user` (root when not given). */
const sleeper = (user: { readonly uid: number; readonly gid: number } | null = null): number => {
  const child = spawn("sleep", ["3600"], { stdio: "ignore", ...(user === null ? {} : { uid: user.uid, gid: user.gid }) })
  children.push(child)
  return child.pid!
}

/** A fresh Claude home with its `sessions/`, readable by everyone, owned by `owner` (root when not given). */
const makeHome = (owner: { readonly uid: number; readonly gid: number } | null = null): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-liveness-"))
  homes.push(root)
  const home = path.join(root, ".claude")
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  for (const dir of [root, home, path.join(home, "sessions")]) {
    fs.chmodSync(dir, 0o755)
    if (owner !== null) fs.chownSync(dir, owner.uid, owner.gid)
  }
  return home
}

const writeRecord = (home: string, pid: number, fields: Record<string, unknown>, owner: { readonly uid: number; readonly gid: number } | null = null) => {
  const file = path.join(home, "sessions", `${pid}.json`)
  fs.writeFileSync(file, recordText(pid, fields), { mode: 0o644 })
  if (owner !== null) fs.chownSync(file, owner.uid, owner.gid)
  return file
}

const idOf = (pid: number) => `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`

const inspectOf = (user: { readonly uid: number; readonly gid: number } | null, home: string, pid: number) => {
  const run = runAs(user, home, ["inspect", "--json"])
  expect(run.status, run.stderr).toBe(0)
  return (JSON.parse(run.stdout) as Array<{ pid: number | null; verdict: string; detail: string }>).find((e) => e.pid === pid)
}

describe.runIf(isRoot && nobody !== null)("liveness on the real OS, with a second uid", () => {
  const other = nobody!

  it("another user's live session: listed live, address null, socket kept, other_user; resolve refuses (exit 8)", () => {
    // The reader is nobody; the session and its home are root's.
    const home = makeHome()
    const pid = sleeper()
    writeRecord(home, pid, { procStart: procStartOf(pid) })
    const list = runAs(other, home, ["list", "--json"])
    expect(list.status, list.stderr).toBe(0)
    const sessions = JSON.parse(list.stdout) as Array<Record<string, unknown>>
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ pid, address: null, socketPath: `/tmp/cc-socks/${pid}.sock`, unaddressable: "other_user", stopped: false })
    const resolve = runAs(other, home, ["resolve", idOf(pid)])
    expect(resolve.status).toBe(8)
    expect(resolve.stderr).toMatch(/another user's/)
    // Root may signal it and connect to its socket: for root it is an ordinary session.
    const asRoot = JSON.parse(runAs(null, home, ["list", "--json"]).stdout) as Array<Record<string, unknown>>
    expect(asRoot[0]).toMatchObject({ pid, address: `uds:/tmp/cc-socks/${pid}.sock`, unaddressable: null })
  }, 120_000)

  it("send to another user's session is not_addressable (exit 8) and starts no relay", () => {
    const home = makeHome()
    const pid = sleeper()
    writeRecord(home, pid, { procStart: procStartOf(pid) })
    // A relay that leaves a mark if it is ever started.
    const bin = path.join(path.dirname(home), "relay")
    const mark = path.join(path.dirname(home), "relay-ran")
    fs.writeFileSync(bin, `#!/bin/sh\ntouch ${mark}\n`, { mode: 0o755 })
    fs.chmodSync(path.dirname(home), 0o777)
    const send = runAs(other, home, ["send", idOf(pid), "hello", "--json"], { CLAUDE_PEERS_CLAUDE_BIN: bin })
    expect(send.status, send.stderr).toBe(8)
    expect(JSON.parse(send.stdout)).toMatchObject({ error: { reason: "not_addressable", because: "other_user" } })
    expect(fs.existsSync(mark)).toBe(false)
  }, 120_000)

  it("a record of the reader's own user whose pid another user's process holds is pid_reused, whatever procStart says", () => {
    const home = makeHome(other)
    const pid = sleeper()
    for (const fields of [{}, { procStart: procStartOf(pid) }]) {
      writeRecord(home, pid, fields, other)
      const entry = inspectOf(other, home, pid)
      expect(entry?.verdict).toBe("pid_reused")
      expect(entry?.detail).toMatch(/written by this user/)
      expect(JSON.parse(runAs(other, home, ["list", "--json"]).stdout)).toEqual([])
      expect(runAs(other, home, ["resolve", idOf(pid)]).status).toBe(3)
    }
  }, 120_000)

  it("a record file another user owns in the reader's home is foreign_owner, not live", () => {
    const home = makeHome()
    const pid = sleeper(other)
    writeRecord(home, pid, { procStart: procStartOf(pid), name: "api" }, other)
    const entry = inspectOf(null, home, pid)
    expect(entry?.verdict).toBe("foreign_owner")
    expect(entry?.detail).toMatch(new RegExp(`^owned by another user \\(uid ${other.uid}\\)`))
    expect(JSON.parse(runAs(null, home, ["list", "--json"]).stdout)).toEqual([])
    expect(runAs(null, home, ["resolve", "--name", "api"]).status).toBe(3)
  }, 120_000)

  it("a process stopped with SIGSTOP is a live session with stopped: true that still resolves; SIGCONT clears it", async () => {
    const home = makeHome()
    const pid = sleeper()
    writeRecord(home, pid, { procStart: procStartOf(pid) })
    process.kill(pid, "SIGSTOP")
    await waitUntil("the process to stop", 30_000, () => (stateOf(pid) === "T" ? true : undefined))
    const stopped = JSON.parse(runAs(null, home, ["list", "--json"]).stdout) as Array<Record<string, unknown>>
    expect(stopped[0]).toMatchObject({ pid, stopped: true, address: `uds:/tmp/cc-socks/${pid}.sock` })
    expect(runAs(null, home, ["list"]).stdout).toMatch(/idle, stopped/)
    const resolved = runAs(null, home, ["resolve", idOf(pid), "--json"])
    expect(resolved.status, resolved.stderr).toBe(0)
    expect(JSON.parse(resolved.stdout)).toMatchObject({ pid, stopped: true })
    process.kill(pid, "SIGCONT")
    await waitUntil("the process to continue", 30_000, () => (stateOf(pid) !== "T" ? true : undefined))
    expect((JSON.parse(runAs(null, home, ["list", "--json"]).stdout) as Array<Record<string, unknown>>)[0]).toMatchObject({ pid, stopped: false })
  }, 120_000)

  // `unshare -p -f` without a /proc of its own: the host's /proc, where pid 2 is another process.
  const ownNamespace = spawnSync("unshare", ["-p", "-f", "true"], { stdio: "ignore" }).status === 0
  it.skipIf(!ownNamespace)("in a pid namespace that sees the host's /proc, no other process's start time or state is read", () => {
    const home = makeHome()
    // Inside, `sh` is pid 1 and its `sleep` pid 2; the host's /proc shows its own pid 2 there.
    const script = [
      "sleep 60 & P=$!",
      `printf '{"pid":%d,"sessionId":"in-namespace","name":"ns","procStart":"1","messagingSocketPath":"/tmp/cc-socks/ns.sock"}' $P > "$1/sessions/$P.json"`,
      `"$2" "$3" --claude-home "$1" inspect --json; "$2" "$3" --claude-home "$1" policy --json; kill $P`
    ].join("; ")
    const run = spawnSync("unshare", ["-p", "-f", "sh", "-c", script, "sh", home, process.execPath, binPath], { encoding: "utf8" })
    expect(run.status, run.stderr).toBe(0)
    const [inspected, policies] = run.stdout.trim().split("\n").map((line) => JSON.parse(line) as Array<Record<string, unknown>>)
    // The recorded start time cannot be checked, which proves nothing (the contract): not pid_reused
    // by the host's pid 2's start time.
    expect(inspected).toMatchObject([{ verdict: "live", sessionId: "in-namespace" }])
    expect(JSON.stringify(policies)).toMatch(/another pid namespace/)
  }, 60_000)
})
