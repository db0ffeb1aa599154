/**
 * `kill(pid, 0)`, the liveness question of the registry: false only for ESRCH. EPERM is a live
 * process owned by someone else, and any other failure proves nothing, so it counts as alive.
 */
import type { Signalled } from "../services/ProcessProbe.js"

/**
 * Pids that `kill(2)` would read as something other than one process: 0 and negatives address
 * process groups, and Node throws a TypeError on non-integers. No process has such a pid.
 */
export const isProcessId = (pid: number): boolean => Number.isSafeInteger(pid) && pid >= 1 && pid <= 2147483647

/**
 * What `kill(pid, 0)` answers: `true`, `"denied"` for EPERM (another user's live process), `false`
 * for ESRCH. Callers turn stack traces off around a batch: most pids are dead.
 */
export const signalZeroAnswer = (pid: number): Signalled => {
  if (!isProcessId(pid)) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    const code = typeof error === "object" && error !== null ? (error as { readonly code?: unknown }).code : undefined
    return code === "ESRCH" ? false : code === "EPERM" ? "denied" : true
  }
}

/** Whether a process has the pid. */
export const signalZero = (pid: number): boolean => signalZeroAnswer(pid) !== false
