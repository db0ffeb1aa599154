/**
 * The real-OS half of `Policy.jobsAndNamespaces.test.ts`: a real child whose arguments are a
 * pre-started worker's (`claude bg-spare --bg-spare <claim socket>`, its program name set as Claude
 * Code sets its process title), with a job state holding its flags; and, as root only, a child
 * under `unshare --mount` whose namespace alone holds a managed file.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { layerNode } from "../src/layers/Node.js"
import { Policy } from "../src/services/Policy.js"
import { recordText } from "./support/records.js"
import { killAndReap, linuxPidDomain, startTimeOf } from "./support/worlds.js"

const linux = process.platform === "linux"
const root = linux && process.getuid?.() === 0

const untilShows = async (pid: number, word: string) => {
  for (let i = 0; i < 1000; i++) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(word)) return
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`pid ${pid} never showed ${word}`)
}

const withHome = async (body: (base: string, children: Array<ChildProcess>) => Promise<void>) => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-policy-jobs-")))
  const children: Array<ChildProcess> = []
  fs.mkdirSync(path.join(base, "home", "sessions"), { recursive: true, mode: 0o700 })
  fs.mkdirSync(path.join(base, "work"))
  try {
    await body(base, children)
  } finally {
    await Promise.all(children.map(killAndReap))
    fs.rmSync(base, { recursive: true, force: true })
  }
}

const register = (base: string, pid: number, extra: Record<string, unknown>) =>
  fs.writeFileSync(
    path.join(base, "home", "sessions", `${pid}.json`),
    recordText(pid, { procStart: startTimeOf(pid), pidDomain: linuxPidDomain(), cwd: path.join(base, "work"), ...extra })
  )

const policies = (base: string) =>
  Effect.runPromise(
    Effect.provide(
      Effect.flatMap(Policy, (p) => p.list),
      layerNode({ claudeHome: path.join(base, "home"), managedSettingsDirectory: path.join(base, "managed") })
    )
  )

describe.skipIf(!linux)("policy on the real OS: jobs and mount namespaces", () => {
  it("a real pre-started worker's arguments are not its job's flags; the job state's are", () =>
    withHome(async (base, children) => {
      const socket = path.join(base, "spare.claim.sock")
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)", "--", "--bg-spare", socket], {
        argv0: "claude bg-spare",
        stdio: "ignore"
      })
      children.push(child)
      await untilShows(child.pid!, socket)
      fs.mkdirSync(path.join(base, "home", "jobs", "abf5ca55"), { recursive: true })
      fs.writeFileSync(
        path.join(base, "home", "jobs", "abf5ca55", "state.json"),
        JSON.stringify({ respawnFlags: ["--settings", "{\"crossSessionInbound\":\"refuse\"}", "--permission-mode", "plan"] })
      )
      fs.writeFileSync(path.join(base, "home", "settings.json"), "{\"crossSessionInbound\":\"accept\"}\n")
      register(base, child.pid!, { kind: "bg", jobId: "abf5ca55" })
      const [policy] = await policies(base)
      expect(policy).toMatchObject({ effective: "refuse", decidedBy: "flagSettings", certainty: "certain" })
      expect(policy!.receiverMode).toMatchObject({ class: "prompting", mode: "plan" })
    }), 60_000)

  it.skipIf(!root)("a session under unshare --mount: its own managed file, read through /proc/<pid>/root", () =>
    withHome(async (base, children) => {
      const managed = path.join(base, "managed")
      fs.mkdirSync(managed)
      const marker = path.join(base, "ready")
      // Inside its namespace only, a tmpfs over the managed folder holds a refusing file.
      const script =
        `mount --make-rprivate / && mount -t tmpfs tmpfs '${managed}' && echo '{"crossSessionInbound":"refuse"}' > '${managed}/managed-settings.json' && exec "${process.execPath}" -e 'setInterval(() => {}, 1 << 30)' '${marker}'`
      const child = spawn("unshare", ["--mount", "--", "sh", "-c", script], { stdio: "ignore" })
      children.push(child)
      await untilShows(child.pid!, marker)
      register(base, child.pid!, {})
      expect(fs.existsSync(path.join(managed, "managed-settings.json"))).toBe(false)
      const [policy] = await policies(base)
      expect(policy).toMatchObject({ effective: "refuse", decidedBy: "policySettings", certainty: "certain" })
      expect(policy!.sources[0]!.path).toBe(`/proc/${child.pid}/root${managed}/managed-settings.json`)
    }), 60_000)
})
