/** Runs the built command as a user would, and captures what it prints and how it exits. */
import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process"
import * as path from "node:path"
import type { Readable } from "node:stream"

export const binPath = path.resolve(import.meta.dirname, "../../bin/claude-peers.js")

export interface CliRun {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): CliRun => {
  const result = spawnSync(process.execPath, [binPath, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", ...env },
    timeout: 30_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

export interface RunningCli {
  readonly child: ChildProcessByStdio<null, Readable, Readable>
  readonly exited: Promise<number | null>
  /** What it has printed so far. */
  readonly stdout: () => string
  readonly stderr: () => string
}

/** Starts the built command (one that runs until stopped, such as `watch`) and collects its output. */
export const startCli = (args: ReadonlyArray<string>, bin: string = binPath, env: NodeJS.ProcessEnv = {}): RunningCli => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/** Polls `probe` every 10 ms until it answers; fails, naming `what`, after `limitMillis`. */
export const waitUntil = async <A>(what: string, limitMillis: number, probe: () => A | undefined): Promise<A> => {
  const deadline = Date.now() + limitMillis
  for (;;) {
    const found = probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out after ${limitMillis} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
