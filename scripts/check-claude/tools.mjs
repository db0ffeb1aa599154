/** Waiting, running programs and reading their output, for the check's other modules. */
import { spawn } from "node:child_process"
import { setTimeout as delay } from "node:timers/promises"

/** A failure of the check itself (not a finding): the check exits 2. */
export class CheckFailed extends Error {}

export const makeLog = (started = Date.now()) => (message) =>
  process.stderr.write(`[check:claude ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}\n`)

/**
 * Polls `probe` (sync or async) until it returns a truthy value, which it resolves to; after
 * `timeoutMs`, fails with CheckFailed naming `what`. A probe that throws ends the wait.
 */
export const waitFor = async (what, probe, { intervalMs = 250, timeoutMs = 60_000 } = {}) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new CheckFailed(`timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await delay(intervalMs)
  }
}

/** Runs a program to its end: `{ exit, stdout, stderr }`; killed after `timeoutMs`. */
export const runProgram = (file, args, { cwd, env, timeoutMs = 60_000 }) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    const out = []
    const err = []
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (exit, signal) => {
      clearTimeout(timer)
      resolvePromise({
        exit: exit ?? (signal === null ? -1 : `signal ${signal}`),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8")
      })
    })
  })

/** `work` on every item, at most `limit` at a time. */
export const inParallel = async (items, limit, work) => {
  const queue = [...items]
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, async () => {
    while (queue.length > 0) await work(queue.shift())
  }))
}

export const parseJson = (text, what) => {
  try {
    return JSON.parse(text)
  } catch {
    throw new CheckFailed(`${what} printed no JSON: ${text.slice(0, 300)}`)
  }
}
