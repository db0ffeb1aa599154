/**
 * `node bench/cache-checks.mjs`: what the loader's cache checks cost a run (issue 26: under 1 ms).
 * Each round starts a fresh Node, as a run of the command is, that evaluates the loader's own
 * functions (its text up to where it runs the bundle) and times, for `list`'s cache in the install
 * directory: the trust checks of the directories (real path, owner and mode of each directory up to
 * `/`), opening the cache without following links or blocking with its owner and mode checked and
 * its header matched, and reading the payload and its checksum (WebAssembly: `command/cache-checksum.mjs`). `node -e 0` runs in the same rounds. Run it after a
 * `list` has written its cache (`npm run bench` does; so does any `claude-peers list`).
 * Environment: CHECK_ROUNDS (default 40).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const loader = path.join(root, "bin", "claude-peers.js")
const rounds = Number(process.env.CHECK_ROUNDS ?? 40)
const env = { ...process.env }
for (const name of ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "CLAUDE_PEERS_CACHE_DIR", "CLAUDE_PEERS_DEBUG_CACHE"]) delete env[name]

const text = fs.readFileSync(loader, "utf8")
const body = text.slice(text.indexOf("\"use strict\""), text.indexOf("const bundle = openBundle()"))
const harness = `${body.replace(/__dirname/g, JSON.stringify(path.dirname(loader)))}
const now = () => Number(process.hrtime.bigint()) / 1e6
const bundle = openBundle()
const t0 = now()
const install = installDirectory()
const writable = writableDirectory()
const t1 = now()
const file = path.join(install, cacheNameOf("claude-peers:list"))
const opened = openOwn(file)
const matched = opened === null ? null : matchHeader(opened.fd, opened.size, bundle.key)
const t2 = now()
if (matched === null) { process.stdout.write("none"); process.exit(0) }
const t3 = now()
const data = payload(opened.size - matched.header.length)
const ok = readInto(opened.fd, data.bytes, data.bytes.length, matched.header.length) === data.bytes.length && data.digest() === matched.digest
const t4 = now()
process.stdout.write(JSON.stringify({ trust: t1 - t0, open: t2 - t1, digest: t4 - t3, ok, bytes: data.bytes.length, writable: writable === install }))
`
const script = path.join(root, "bench", ".cache-checks-harness.cjs")
fs.writeFileSync(script, harness)
try {
  spawnSync(process.execPath, [loader, "--claude-home", "/nonexistent-claude-home", "list", "--json"], { env })
  const nodeMs = []
  const samples = []
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint()
    spawnSync(process.execPath, ["-e", "0"], { env })
    nodeMs.push(Number(process.hrtime.bigint() - start) / 1e6)
    const result = spawnSync(process.execPath, [script], { env, encoding: "utf8" })
    if (result.stdout === "none") throw new Error("no cache of list's in the install directory: run `claude-peers list` first")
    samples.push(JSON.parse(result.stdout))
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[sorted.length >> 1]
  }
  const q = (values, at) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * at)]
  const of = (key) => samples.map((s) => s[key])
  const total = samples.map((s) => s.trust + s.open + s.digest)
  console.log(
    `cache checks, ${rounds} fresh processes (node -e 0: ${median(nodeMs).toFixed(1)} ms median), list's cache ${samples[0].bytes} bytes, all checksums ${
      samples.every((s) => s.ok) ? "matched" : "NOT matched"
    }`
  )
  for (
    const [label, values] of [["directory trust checks", of("trust")], ["open (no links, no blocking), owner, mode, header", of("open")], [
      "payload read into memory of its own, and its checksum",
      of("digest")
    ], ["all", total]]
  ) {
    console.log(`  ${label.padEnd(52)} ${median(values).toFixed(3)} ms median  (${q(values, 0.25).toFixed(3)}–${q(values, 0.75).toFixed(3)})`)
  }
} finally {
  fs.rmSync(script, { force: true })
}
