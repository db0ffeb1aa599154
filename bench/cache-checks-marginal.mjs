/**
 * `node bench/cache-checks-marginal.mjs`: what the loader's cache checks add to a whole run of
 * `list --json` (issue 26: under 1 ms). `bench/cache-checks.mjs` times the checks alone in a fresh
 * process, where each is also the first use of the `fs` functions it calls; a run pays that once,
 * with or without the checks. Here the same install runs with its loader as built and with a copy
 * whose checks are taken out (no owner or mode of a directory or cache looked at, no checksum
 * computed: what the loader did before issue 26), in paired rounds of random order on the same
 * caches, and the difference of each pair is what the checks cost: in wall time and in the CPU time
 * the run reports as it exits (through a `--require`d module of one line that both variants load;
 * the CPU time varies less with the machine's load), and in the loader's own share of the run (from
 * its first line to the part's start), which varies least. The walk and the checksum are also
 * taken out one at a time.
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

/** `items` in a random order, each order as likely as any other (Fisher–Yates). */
const shuffled = (items) => {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j], copy[i]]
  }
  return copy
}

/** The loader's text with `from` replaced by `to`, each exactly once. */
const without = (text, replacements) =>
  replacements.reduce((current, [from, to]) => {
    const at = current.indexOf(from)
    if (at < 0 || current.indexOf(from, at + 1) >= 0) throw new Error(`the loader no longer holds one ${JSON.stringify(from)}`)
    return current.replace(from, to)
  }, text)

const temporary = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-cache-checks-"))
// About as deep as a per-user global install (`~/.nvm/versions/node/v20/lib/node_modules/claude-peers`,
// whose `dist` is 10 below `/`). The loader walks the directories above a cache directory, but not
// above the bundle's own (where these caches are): the depth matters for caches kept elsewhere.
const below = (directory) => directory.split(path.sep).filter((name) => name !== "").length
const levels = Math.max(0, Number(process.env.CHECK_DEPTH ?? 9) - 1 - below(temporary))
const install = path.join(temporary, ...Array.from({ length: levels }, (_, i) => `d${i}`))
/** How many directories below `/` the install's `dist` is. */
const depth = below(install) + 1
const also = process.env.CHECK_ALSO
try {
  fs.mkdirSync(install, { recursive: true })
  fs.mkdirSync(path.join(install, "bin"))
  fs.mkdirSync(path.join(install, "dist"))
  fs.mkdirSync(path.join(install, "home", "sessions"), { recursive: true })
  fs.copyFileSync(path.join(root, "dist", "claude-peers.cjs"), path.join(install, "dist", "claude-peers.cjs"))
  fs.copyFileSync(path.join(root, "bin", "package.json"), path.join(install, "bin", "package.json"))
  const text = fs.readFileSync(path.join(root, "bin", "claude-peers.js"), "utf8")
  // What the checks are: the walk of the cache directory and its ancestors with the cache file's
  // owner and mode, and the payload's checksum (read into a buffer of its own without it, as before
  // the checksum: no WebAssembly made at all).
  const walk = [
    ["  if (uid === undefined) return real\n", "  return real\n"],
    [
      "  if (uid === undefined) return directory\n  try {\n    const stats = fs.statSync(directory)",
      "  return directory\n  try {\n    const stats = fs.statSync(directory)"
    ],
    ["if (stats.isFile() && (uid === undefined || (ownedByUs(stats.uid) && (stats.mode & 0o022) === 0)))", "if (true)"]
  ]
  const checksum = [
    ["const data = payload(cache.size)", "const data = { bytes: Buffer.allocUnsafe(cache.size) }"],
    ["cache.size && data.digest() === cache.digest)", "cache.size)"]
  ]
  // Every variant reports, as it exits, the time from the loader's first line to the moment the
  // part starts to run: the loader's own share of the run, where the checks are, without the
  // variance of the command's run after it.
  const staged = (loader) =>
    without(loader, [
      ["\"use strict\"\n", "\"use strict\"\nconst loaderStartedAt = process.uptime() * 1000\n"],
      [
        "  const module = { exports: {} }\n",
        `  if (id !== "entry") {\n    const stage = process.uptime() * 1000 - loaderStartedAt\n    process.on("exit", () => fs.writeSync(2, "\\nstage " + stage + "\\n"))\n  }\n  const module = { exports: {} }\n`
      ]
    ])
  const variants = {
    checked: text,
    unchecked: without(text, [...walk, ...checksum]),
    "walk only": without(text, checksum),
    "checksum only": without(text, walk)
  }
  for (const [i, file] of (also ?? "").split(",").filter((file) => file !== "").entries()) {
    variants[`also ${i + 1}`] = fs.readFileSync(file, "utf8")
  }
  const loaders = {}
  for (const [i, [name, loader]] of Object.entries(variants).entries()) {
    loaders[name] = path.join(install, "bin", i === 0 ? "claude-peers.js" : `claude-peers-${i}.js`)
    fs.writeFileSync(loaders[name], staged(loader))
  }
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
    const stage = /\nstage ([\d.]+)\n/.exec(result.stderr)
    if (result.status !== 0 || result.stdout.trim() !== "[]" || cpu === null || stage === null) {
      throw new Error(`${loader}: exit ${result.status}: ${result.stderr}`)
    }
    return { ms, cpu: Number(cpu[1]) / 1000, stage: Number(stage[1]) }
  }
  // The caches are written by the first runs and used by every later one.
  for (let i = 0; i < 4; i++) run(loaders.checked)
  const names = Object.keys(loaders)
  const measures = [["", "ms"], [" CPU", "cpu"], [" loader", "stage"]]
  const times = { node: [] }
  for (const name of names) for (const [suffix] of measures) times[`${name}${suffix}`] = []
  for (const name of names.filter((name) => name !== "unchecked")) {
    for (const [suffix] of measures) times[`${name} − unchecked${suffix}`] = []
  }
  for (let i = 0; i < rounds; i++) {
    const round = {}
    for (const name of shuffled(names)) round[name] = run(loaders[name])
    const start = process.hrtime.bigint()
    spawnSync(process.execPath, ["-e", "0"], { env })
    times.node.push(Number(process.hrtime.bigint() - start) / 1e6)
    for (const name of names) {
      for (const [suffix, key] of measures) {
        times[`${name}${suffix}`].push(round[name][key])
        if (name !== "unchecked") times[`${name} − unchecked${suffix}`].push(round[name][key] - round.unchecked[key])
      }
    }
  }
  const q = (values, at) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * at)]
  const cached = fs.readdirSync(path.join(install, "dist")).filter((name) => name.endsWith(".v8-cache"))
  console.log(
    `list --json on an empty registry, ${rounds} rounds, its dist ${depth} directories below /, load ${os.loadavg()[0].toFixed(1)}, caches: ${
      cached.join(", ")
    }`
  )
  for (const [label, values] of Object.entries(times)) {
    console.log(`  ${label.padEnd(34)} ${q(values, 0.5).toFixed(2)} ms median  (${q(values, 0.25).toFixed(2)}–${q(values, 0.75).toFixed(2)})`)
  }
} finally {
  fs.rmSync(temporary, { recursive: true, force: true })
}
