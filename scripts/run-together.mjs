/**
 * Runs the npm scripts named on the command line at the same time, then prints each one's output,
 * in the order they were named, once it has ended, and exits with the code of the first that
 * failed. After `--`, a command to run beside them, its output not held, whose code is the exit
 * code when no script failed: `npm test` runs the checks (typecheck, lint) beside vitest so, once
 * the build (compile, bundle) has run on its own.
 *
 * Each script's output is held until all have ended so that two tools never interleave their
 * lines: a type error reads as tsc wrote it, after the command's own output. Every script runs to
 * its end even after another has failed, so one run reports every check that fails, as the scripts
 * run one after another did.
 *
 * Running them together is safe because none reads what another writes: compile alone writes
 * `dist/`'s `tsc` output; bundle reads the sources and writes only `dist/entries/` and
 * `dist/claude-peers.cjs`, which tsc never reads. Beside the tests, typecheck's `tsc -b` finds
 * `src`'s project built and writes nothing in `dist/` (it checks the tests, which import
 * `claude-peers` by name, against the declarations compile wrote), and lint reads no types and no
 * `dist/`; the tests write nothing either reads.
 */
import { spawn } from "node:child_process"
import { constants } from "node:os"

const exitCode = (code, signal) => code ?? 128 + (constants.signals[signal] ?? 0)

/** One script's run: its output as it arrived, each chunk with its stream, and its exit code. */
const run = (script) =>
  new Promise((resolve) => {
    const child = spawn("npm", ["run", script], { stdio: ["ignore", "pipe", "pipe"] })
    const output = []
    child.stdout.on("data", (chunk) => output.push([process.stdout, chunk]))
    child.stderr.on("data", (chunk) => output.push([process.stderr, chunk]))
    child.on("error", (error) => resolve({ output: [[process.stderr, `${script}: ${error.message}\n`]], code: 1 }))
    child.on("close", (code, signal) => resolve({ output, code: exitCode(code, signal) }))
  })

/** The command after `--`, on this process's own streams. */
const runBeside = ([command, ...args]) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit" })
    child.on("error", (error) => {
      process.stderr.write(`${command}: ${error.message}\n`)
      resolve(1)
    })
    child.on("close", (code, signal) => {
      if (signal !== null) process.stderr.write(`${command}: ended by ${signal}\n`)
      resolve(exitCode(code, signal))
    })
  })

const argv = process.argv.slice(2)
const dashes = argv.indexOf("--")
if (dashes !== -1 && dashes === argv.length - 1) {
  process.stderr.write("run-together: no command after --\n")
  process.exit(2)
}
const scripts = dashes === -1 ? argv : argv.slice(0, dashes)
const runs = scripts.map(run)
const beside = dashes === -1 ? 0 : await runBeside(argv.slice(dashes + 1))

let failed = 0
for (const result of runs) {
  const { code, output } = await result
  for (const [stream, chunk] of output) stream.write(chunk)
  if (code !== 0 && failed === 0) failed = code
}
process.exitCode = failed !== 0 ? failed : beside
