/**
 * What `policy` costs per live session beyond `list` (issue 25 item 4: at most 0.2 ms), in CPU time
 * (user + system of the child, from `/usr/bin/time`), since on a shared machine wall time mostly
 * measures the wait for a core. Two homes on the same sleepers, with `FEW` and `MANY` live records
 * (50 and 500 by default), in `FOLDERS` project folders (97); the slope is (MANY − FEW) / (MANY − FEW sessions), `policy`'s minus
 * `list`'s. Rounds interleave every build and command; medians of each.
 *
 *   node bench/policy-sessions.mjs [bin …]   (default: this checkout's bin/claude-peers.js)
 *   ROUNDS=10 FEW=50 MANY=500 FOLDERS=97 node bench/policy-sessions.mjs /tmp/before/bin/claude-peers.js bin/claude-peers.js
 *
 * With several builds each is measured in the same rounds, so their figures compare.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { recordText } from "./records.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")
const rounds = Number(process.env.ROUNDS ?? 10)
const few = Number(process.env.FEW ?? 50)
const many = Number(process.env.MANY ?? 500)
/** How many project folders the sessions share (`FOLDERS=100000`: each session in its own). */
const folders = Number(process.env.FOLDERS ?? 97)
const bins = process.argv.length > 2 ? process.argv.slice(2).map((b) => path.resolve(b)) : [path.join(root, "bin", "claude-peers.js")]
const timeTool = ["/usr/bin/time", "/bin/time"].find((p) => fs.existsSync(p))
if (timeTool === undefined) throw new Error("this bench needs /usr/bin/time")

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
}

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cp-bench-policy-")))
const sleepers = []
const cleanUp = () => {
  for (const child of sleepers) child.kill("SIGKILL")
  fs.rmSync(tmp, { recursive: true, force: true })
}
process.once("exit", cleanUp)
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130))

const startTimeOf = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/)[19]
}

while (sleepers.length < many) {
  const child = spawn("sleep", ["3600"], { stdio: "ignore" })
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve)
    child.once("error", reject)
  })
  sleepers.push(child)
}

/** A home whose first `count` sleepers are live sessions, in project folders that exist (half of them git repositories). */
const makeHome = (count) => {
  const home = path.join(tmp, `home-${count}`)
  fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
  fs.writeFileSync(path.join(home, "settings.json"), `${JSON.stringify({ model: "opus", crossSessionInbound: "hold" }, null, 2)}\n`)
  for (const child of sleepers.slice(0, count)) {
    const project = path.join(tmp, "projects", `project-${child.pid % folders}`)
    if (!fs.existsSync(project)) {
      fs.mkdirSync(path.join(project, child.pid % 2 === 0 ? ".git" : "src"), { recursive: true })
    }
    fs.writeFileSync(path.join(home, "sessions", `${child.pid}.json`), recordText(child.pid, { procStart: startTimeOf(child.pid), cwd: project }))
  }
  return home
}
const homes = { [few]: makeHome(few), [many]: makeHome(many) }
const managed = path.join(tmp, "managed")
// As on most machines, no managed settings directory.

const callerHome = path.join(tmp, "caller")
fs.mkdirSync(callerHome)
const env = { ...process.env, HOME: callerHome }
for (const name of ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "CLAUDE_CONFIG_DIR", "XDG_CACHE_HOME"]) delete env[name]

const cpuMs = (argv, expected) => {
  const result = spawnSync(timeTool, ["-f", "%U %S", ...argv], { env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`${argv.join(" ")}: exit ${result.status}: ${result.stderr}`)
  const got = JSON.parse(result.stdout).length
  if (got !== expected) throw new Error(`${argv.join(" ")}: ${got} sessions, expected ${expected}`)
  const [user, sys] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number)
  return (user + sys) * 1000
}

const commands = bins.flatMap((bin) =>
  ["list", "policy"].flatMap((command) =>
    [few, many].map((count) => ({
      bin,
      command,
      count,
      argv: [process.execPath, bin, "--claude-home", homes[count], ...(command === "policy" ? ["--managed-dir", managed] : []), command, "--json"]
    }))
  )
)
const times = new Map(commands.map((c) => [c, []]))
console.log(`load: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
for (let round = 0; round < rounds + 1; round++) {
  for (const c of commands) {
    const ms = cpuMs(c.argv, c.count)
    if (round > 0) times.get(c).push(ms)
  }
}
console.log(`load: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
const at = (bin, command, count) => median(times.get(commands.find((c) => c.bin === bin && c.command === command && c.count === count)))
for (const bin of bins) {
  const slope = (command) => (at(bin, command, many) - at(bin, command, few)) / (many - few)
  console.log(bin)
  for (const command of ["list", "policy"]) {
    console.log(
      `  ${command.padEnd(6)} ${few}: ${at(bin, command, few).toFixed(0)} ms CPU, ${many}: ${at(bin, command, many).toFixed(0)} ms CPU, ` +
        `${(slope(command) * 1000).toFixed(0)} µs per live session`
    )
  }
  console.log(`  policy beyond list: ${((slope("policy") - slope("list")) * 1000).toFixed(0)} µs CPU per live session`)
}
// The sleepers hold the event loop: end here, which kills them.
process.exit(0)
