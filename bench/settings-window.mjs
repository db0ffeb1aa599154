/**
 * `node bench/settings-window.mjs`: how often the compare-then-rename window of `settings set`
 * undoes a write of a Claude-Code-like writer. Run once by hand (it is a measurement, not a test).
 *
 * A child process writes the settings file at 20 Hz as Claude Code does: read it, change its own
 * key (a counter), write `settings.json.tmp.<pid>`, rename it over the file. Meanwhile this process
 * updates `crossSessionInbound` through the library, back to back, unguarded. Before each write the
 * writer checks that the file still holds its last counter: a lower one means an update of ours was
 * renamed over its write (read before that write, renamed after it), undoing it. The file is also
 * parsed on every read by both sides, and must always be a valid document.
 *
 * Environment: WINDOW_SECONDS (default 120).
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setPolicy, Settings } from "../dist/entries/index.js"
import { layerNode } from "../dist/entries/node.js"

const seconds = Number(process.env.WINDOW_SECONDS ?? 120)
const home = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-window-"))
const file = path.join(home, "settings.json")
fs.writeFileSync(file, `${JSON.stringify({ model: "opus", writerCounter: 0 }, null, 2)}\n`)

const writer = `
const fs = require("node:fs")
const file = ${JSON.stringify(file)}
let counter = 0, writes = 0, undone = 0, invalid = 0
const tick = () => {
  let doc
  try { doc = JSON.parse(fs.readFileSync(file, "utf8")) } catch { invalid++; return }
  if (doc.writerCounter !== counter) undone++
  doc.writerCounter = ++counter
  const temp = file + ".tmp." + process.pid
  fs.writeFileSync(temp, JSON.stringify(doc, null, 2) + "\\n")
  fs.renameSync(temp, file)
  writes++
}
const timer = setInterval(tick, 50)
process.on("SIGTERM", () => { clearInterval(timer); process.stdout.write(JSON.stringify({ writes, undone, invalid })); process.exit(0) })
`
const child = spawn(process.execPath, ["-e", writer], { stdio: ["ignore", "pipe", "inherit"] })
let report = ""
child.stdout.on("data", (chunk) => (report += chunk))

const layer = layerNode({ claudeHome: home })
const values = ["accept", "hold", "refuse"]
let updates = 0
let failures = 0
const deadline = Date.now() + seconds * 1000
while (Date.now() < deadline) {
  const exit = await Effect.runPromiseExit(
    Effect.provide(Effect.flatMap(Settings.Settings, (settings) => settings.update(setPolicy(values[updates % 3]))), layer)
  )
  if (exit._tag === "Success") updates++
  else failures++
}
child.kill("SIGTERM")
await new Promise((resolve) => child.on("exit", resolve))
const { invalid, undone, writes } = JSON.parse(report)
console.log(
  JSON.stringify({
    seconds,
    updates,
    failedUpdates: failures,
    writerWrites: writes,
    undone,
    invalidReads: invalid,
    undonePerThousand: (undone / writes) * 1000
  })
)
fs.rmSync(home, { recursive: true, force: true })
