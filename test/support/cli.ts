/** Runs the built command as a user would, and captures what it prints and how it exits. */
import { spawnSync } from "node:child_process"
import * as path from "node:path"

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
