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
 * Environment: CHECK_ROUNDS (default 120); CHECK_DEPTH, how many directories below `/` the install's
 * `dist` is (default 9); CHECK_ALSO, other loaders to run in the same rounds, separated by commas
 * (another build's `bin/claude-peers.js`, on this build's bundle).
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

const temporary = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-cache-checks-"))
// As deep as a per-user global install (`~/.nvm/versions/node/v20/lib/node_modules/claude-peers`):
// the loader checks every directory above the one it keeps caches in.
const install = path.join(temporary, ...Array.from({ length: Math.max(0, Number(process.env.CHECK_DEPTH ?? 9) - 3) }, (_, i) => `d${i}`))
const depth = install.split(path.sep).length
const also = process.env.CHECK_ALSO
try {
  fs.mkdirSync(install, { recursive: true })
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
      // Read into a buffer of its own, as before the checksum: no WebAssembly made at all.
      ["const data = payload(cache.size)", "const data = { bytes: Buffer.allocUnsafe(cache.size) }"],
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
  const loaders = { checked, unchecked }
  for (const [i, file] of (also ?? "").split(",").filter((file) => file !== "").entries()) {
    loaders[`also ${i + 1}`] = path.join(install, "bin", `claude-peers-also-${i + 1}.js`)
    fs.copyFileSync(file, loaders[`also ${i + 1}`])
  }
  // The caches are written by the first runs and used by every later one.
  for (let i = 0; i < 4; i++) run(checked)
  const names = Object.keys(loaders)
  const times = { node: [] }
  for (const name of names) Object.assign(times, { [name]: [], [`${name} CPU`]: [] })
  for (const name of names.filter((name) => name !== "unchecked")) Object.assign(times, { [`${name} − unchecked`]: [], [`${name} − unchecked CPU`]: [] })
  for (let i = 0; i < rounds; i++) {
    const round = {}
    for (const name of [...names].sort(() => Math.random() - 0.5)) round[name] = run(loaders[name])
    const start = process.hrtime.bigint()
    spawnSync(process.execPath, ["-e", "0"], { env })
    times.node.push(Number(process.hrtime.bigint() - start) / 1e6)
    for (const name of names) {
      times[name].push(round[name].ms)
      times[`${name} CPU`].push(round[name].cpu)
      if (name === "unchecked") continue
      times[`${name} − unchecked`].push(round[name].ms - round.unchecked.ms)
      times[`${name} − unchecked CPU`].push(round[name].cpu - round.unchecked.cpu)
    }
  }
  const q = (values, at) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * at)]
  const cached = fs.readdirSync(path.join(install, "dist")).filter((name) => name.endsWith(".v8-cache"))
  console.log(
    `list --json on an empty registry, ${rounds} rounds, install ${depth} directories below /, load ${os.loadavg()[0].toFixed(1)}, caches: ${cached.join(", ")}`
  )
  for (const [label, values] of Object.entries(times)) {
    console.log(`  ${label.padEnd(26)} ${q(values, 0.5).toFixed(2)} ms median  (${q(values, 0.25).toFixed(2)}–${q(values, 0.75).toFixed(2)})`)
  }
} finally {
  fs.rmSync(temporary, { recursive: true, force: true })
}
