/**
 * The bench rows of several Claude homes and transcripts (called from `bench/run.mjs`, or run alone
 * with `node bench/homes.mjs`):
 * - `list --all-homes --json` over 3 homes of 20 live records each (their processes started as
 *   `claude` with their own `CLAUDE_CONFIG_DIR`, so that `--all-homes` finds the homes from their
 *   environments) against plain `list --json` over one home of the same 60 live records: the
 *   issue's target is 1.3×;
 * - what finding 20 sessions' transcripts costs (the stat `resolve` makes per session), in the
 *   process, against `node -e 0`: the issue admits transcripts into `list` only under 0.03×.
 * Every command runs round-robin with `node -e 0`; medians.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { recordText, startTimeOf } from "./records.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
}

const timed = (argv, env) => {
  const start = process.hrtime.bigint()
  const result = spawnSync(argv[0], argv.slice(1), { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0) throw new Error(`${argv.join(" ")}: exit ${result.status}: ${result.stderr}`)
  return { ms, stdout: result.stdout }
}

const record = (pid, i) => recordText(pid, { cwd: `/home/user/work-${i}`, status: "idle", procStart: startTimeOf(pid) })

export const benchHomes = async ({ bin = path.join(root, "bin", "claude-peers.js"), env, log = console.log, rounds = 30 } = {}) => {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cp-bench-homes-")))
  const children = []
  try {
    const homes = [0, 1, 2].map((i) => path.join(directory, `home-${i}`))
    const single = path.join(directory, "single")
    fs.mkdirSync(path.join(single, "sessions"), { recursive: true })
    for (const [h, home] of homes.entries()) {
      fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
      for (let i = 0; i < 20; i++) {
        const child = spawn("bash", ["-c", "exec -a claude sleep 3600"], { env: { PATH: process.env.PATH, CLAUDE_CONFIG_DIR: home }, stdio: "ignore" })
        children.push(child)
        const pid = child.pid
        while (!fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith("claude\0")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2)
        fs.writeFileSync(path.join(home, "sessions", `${pid}.json`), record(pid, i))
        fs.writeFileSync(path.join(single, "sessions", `${pid}.json`), record(pid, h * 20 + i))
      }
    }
    const callerHome = path.join(directory, "caller")
    fs.mkdirSync(callerHome)
    const childEnv = { ...(env ?? process.env), HOME: callerHome }
    for (const name of ["NODE_EXTRA_CA_CERTS", "NODE_OPTIONS", "CLAUDE_CONFIG_DIR"]) delete childEnv[name]

    const commands = {
      "node -e 0": [process.execPath, "-e", "0"],
      "list (one home of 60)": [process.execPath, bin, "--claude-home", single, "list", "--json"],
      "list --all-homes (3 homes of 20)": [process.execPath, bin, "--all-homes", "list", "--json"],
      "list --claude-home ×3 (3 homes of 20)": [process.execPath, bin, ...homes.flatMap((h) => ["--claude-home", h]), "list", "--json"]
    }
    const expectCount = (name, stdout) => {
      const count = JSON.parse(stdout).filter((s) => s.file.startsWith(directory)).length
      if (count !== 60) throw new Error(`${name} listed ${count} of the 60 sessions`)
    }
    const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]))
    for (let round = 0; round < rounds + 2; round++) {
      for (const [name, argv] of Object.entries(commands)) {
        const { ms, stdout } = timed(argv, childEnv)
        if (name !== "node -e 0" && round === 0) expectCount(name, stdout)
        if (round >= 2) times[name].push(ms)
      }
    }
    const node = median(times["node -e 0"])
    const plain = median(times["list (one home of 60)"])
    const rows = Object.entries(times).map(([name, values]) => ({ name, medianMs: median(values), overNode: median(values) / node }))

    // Transcripts: 20 sessions' lookups (the stat `resolve` makes each), in the process.
    const { transcriptOf } = await import(pathToFileURL(path.join(root, "dist", "services", "Transcripts.js")).href)
    const FilesNode = await import(pathToFileURL(path.join(root, "dist", "layers", "FilesNode.js")).href)
    const { transcriptPathOf } = await import(pathToFileURL(path.join(root, "dist", "domain", "Transcript.js")).href)
    const Effect = await import("effect/Effect")
    const files = FilesNode.make()
    const sessions = Array.from({ length: 20 }, (_, i) => ({ cwd: `/home/user/work-${i}`, sessionId: `s-${i}` }))
    for (const [i, s] of sessions.entries()) {
      if (i % 2 === 1) continue // half with a transcript, half without
      const file = transcriptPathOf(homes[0], s.cwd, s.sessionId)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "{}\n")
    }
    const lookUp = Effect.forEach(sessions, (s) => transcriptOf(files, homes[0], s))
    const transcriptTimes = []
    for (let i = 0; i < 200; i++) {
      const start = process.hrtime.bigint()
      Effect.runSync(lookUp)
      if (i >= 20) transcriptTimes.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
    const transcriptMs = median(transcriptTimes)
    const result = {
      rows,
      allHomesOverPlain: median(times["list --all-homes (3 homes of 20)"]) / plain,
      namedHomesOverPlain: median(times["list --claude-home ×3 (3 homes of 20)"]) / plain,
      transcripts20Ms: transcriptMs,
      transcripts20OverNode: transcriptMs / node,
      targets: { allHomesOverPlain: 1.3, transcripts20OverNode: 0.03 }
    }
    for (const row of rows) log(`${row.name.padEnd(40)} ${row.medianMs.toFixed(1).padStart(8)} ms  ${row.overNode.toFixed(2)}× node -e 0`)
    log(`list --all-homes / plain list of 60: ${result.allHomesOverPlain.toFixed(3)}× (target 1.3×)`)
    log(`list --claude-home ×3 / plain list of 60: ${result.namedHomesOverPlain.toFixed(3)}×`)
    log(`20 transcripts looked up: ${transcriptMs.toFixed(3)} ms = ${result.transcripts20OverNode.toFixed(4)}× node -e 0 (list admits under 0.03×)`)
    return result
  } finally {
    for (const child of children) child.kill("SIGKILL")
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await benchHomes({ rounds: Number(process.env.BENCH_RUNS ?? 30) })
  if (process.env.BENCH_OUT) fs.writeFileSync(process.env.BENCH_OUT, `${JSON.stringify(result, null, 2)}\n`)
}
