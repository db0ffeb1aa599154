/**
 * Runs the npm scripts named on the command line at the same time (`npm test` runs typecheck,
 * lint and bundle so: typecheck's `tsc -b` is the build's `tsc`, and bundle the rest of the build),
 * then prints each one's output, in the order they were named, once it has ended, and exits with
 * the code of the first that failed.
 *
 * Each one's output is held until it ends so that two tools never interleave their lines: a type
 * error reads as tsc wrote it. Every script runs to its end even after another has failed, so one
 * run reports every check that fails, as the scripts run one after another did.
 *
 * Running them together is safe because none reads what another writes: lint reads no types and
 * no `dist/`; typecheck alone writes `dist/`'s `tsc` output (it builds `src`'s project, then checks
 * the tests, which import `claude-peers` by name, against the declarations it wrote); bundle reads
 * the sources and writes only `dist/entries/` and `dist/claude-peers.cjs`, which tsc never reads.
 */
import { spawn } from "node:child_process"
import { constants } from "node:os"

/** One script's run: its output as it arrived, each chunk with its stream, and its exit code. */
const run = (script) =>
  new Promise((resolve) => {
    const child = spawn("npm", ["run", script], { stdio: ["ignore", "pipe", "pipe"] })
    const output = []
    child.stdout.on("data", (chunk) => output.push([process.stdout, chunk]))
    child.stderr.on("data", (chunk) => output.push([process.stderr, chunk]))
    child.on("error", (error) => resolve({ output: [[process.stderr, `${script}: ${error.message}\n`]], code: 1 }))
    child.on("close", (code, signal) => resolve({ output, code: code ?? 128 + (constants.signals[signal] ?? 0) }))
  })

let failed = 0
for (const result of process.argv.slice(2).map(run)) {
  const { code, output } = await result
  for (const [stream, chunk] of output) stream.write(chunk)
  if (code !== 0 && failed === 0) failed = code
}
process.exitCode = failed
