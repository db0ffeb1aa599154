/**
 * `node bench/cache-checks-marginal.mjs`: what the loader's cache checks add to a whole run of
 * `list --json` (issue 26: under 1 ms). `bench/cache-checks.mjs` times the checks alone in a fresh
 * process, where each is also the first use of the `fs` functions it calls; a run pays that once,
 * with or without the checks. Here the same install runs with its loader as built and with a copy
 * whose checks are taken out (no owner or mode of a directory or cache looked at, no checksum
 * computed: what the loader did before issue 26), in paired rounds of random order on the same
 * caches, and the difference of each pair is what the checks cost: in wall time and in the CPU time
 * the run reports as it exits (through a `--require`d module of one line that both variants load;
 * the CPU time varies less with the machine's load).
 * Environment: CHECK_ROUNDS (default 120).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const rounds = Number(process.env.CHECK_ROUNDS ?? 120)
const env = { ...process.env }
for (const name of ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "CLAUDE_PEERS_CACHE_DIR", "CLAUDE_PEERS_DEBUG_CACHE", "CLAUDE_CONFIG_DIR"]) {
  delete env[name]
}

/** The loader's text with `from` replaced by `to`, each exactly once. */
const without = (text, replacements) =>
  replacements.reduce((current, [from, to]) => {
    const at = current.indexOf(from)
    if (at < 0 || current.indexOf(from, at + 1) >= 0) throw new Error(`the loader no longer holds one ${JSON.stringify(from)}`)
    return current.replace(from, to)
  }, text)

const install = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-cache-checks-"))
try {
  fs.mkdirSync(path.join(install, "bin"))
  fs.mkdirSync(path.join(install, "dist"))
  fs.mkdirSync(path.join(install, "home", "sessions"), { recursive: true })
  fs.copyFileSync(path.join(root, "dist", "claude-peers.cjs"), path.join(install, "dist", "claude-peers.cjs"))
  fs.copyFileSync(path.join(root, "bin", "package.json"), path.join(install, "bin", "package.json"))
  const text = fs.readFileSync(path.join(root, "bin", "claude-peers.js"), "utf8")
  const checked = path.join(install, "bin", "claude-peers.js")
  const unchecked = path.join(install, "bin", "claude-peers-unchecked.js")
  fs.writeFileSync(checked, text)
  fs.writeFileSync(
    unchecked,
    without(text, [
      ["  if (uid === undefined) return real\n", "  return real\n"],
      ["if (stats.isFile() && (uid === undefined || (ownedByUs(stats.uid) && (stats.mode & 0o022) === 0)))", "if (true)"],
      ["cache.size && data.digest() === cache.digest)", "cache.size)"]
    ])
  )
  const report = path.join(install, "cpu.cjs")
  fs.writeFileSync(
    report,
    `process.on("exit", () => { const u = process.cpuUsage(); require("node:fs").writeSync(2, "\\ncpu " + (u.user + u.system) + "\\n") })\n`
  )
  const args = ["--claude-home", path.join(install, "home"), "list", "--json"]
  const run = (loader) => {
    const start = process.hrtime.bigint()
    const result = spawnSync(process.execPath, ["--require", report, loader, ...args], { env, encoding: "utf8" })
    const ms = Number(process.hrtime.bigint() - start) / 1e6
    const cpu = /\ncpu (\d+)\n/.exec(result.stderr)
    if (result.status !== 0 || result.stdout.trim() !== "[]" || cpu === null) throw new Error(`${loader}: exit ${result.status}: ${result.stderr}`)
    return { ms, cpu: Number(cpu[1]) / 1000 }
  }
  // The caches are written by the first runs and used by every later one.
  for (let i = 0; i < 4; i++) run(checked)
  const times = { checked: [], unchecked: [], difference: [], "checked CPU": [], "unchecked CPU": [], "CPU difference": [], node: [] }
  for (let i = 0; i < rounds; i++) {
    const order = Math.random() < 0.5 ? ["checked", "unchecked"] : ["unchecked", "checked"]
    const pair = {}
    for (const which of order) pair[which] = run(which === "checked" ? checked : unchecked)
    const start = process.hrtime.bigint()
    spawnSync(process.execPath, ["-e", "0"], { env })
    times.node.push(Number(process.hrtime.bigint() - start) / 1e6)
    times.checked.push(pair.checked.ms)
    times.unchecked.push(pair.unchecked.ms)
    times.difference.push(pair.checked.ms - pair.unchecked.ms)
    times["checked CPU"].push(pair.checked.cpu)
    times["unchecked CPU"].push(pair.unchecked.cpu)
    times["CPU difference"].push(pair.checked.cpu - pair.unchecked.cpu)
  }
  const q = (values, at) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * at)]
  const cached = fs.readdirSync(path.join(install, "dist")).filter((name) => name.endsWith(".v8-cache"))
  console.log(`list --json on an empty registry, ${rounds} paired rounds, load ${os.loadavg()[0].toFixed(1)}, caches: ${cached.join(", ")}`)
  for (const [label, values] of Object.entries(times)) {
    console.log(`  ${label.padEnd(15)} ${q(values, 0.5).toFixed(2)} ms median  (${q(values, 0.25).toFixed(2)}–${q(values, 0.75).toFixed(2)})`)
  }
} finally {
  fs.rmSync(install, { recursive: true, force: true })
}
