/**
 * `src/layers/SignalZero.ts` for the command's build: the same answers through `process._kill`, the
 * binding `process.kill` wraps, which returns libuv's error as a number where `process.kill` builds a
 * system error for every dead pid (most of a registry's). Where the binding is missing or answers
 * anything but 0, EPERM or ESRCH, `process.kill` answers, as the library's does.
 */
import * as os from "node:os"
import { isProcessId } from "../../src/layers/SignalZero.js"
import type { Signalled } from "../../src/services/ProcessProbe.js"

export { isProcessId }

/** libuv's error for an errno: the negated errno on Unix. Windows' libuv codes are not errnos. */
const rawError = (errno: number | undefined): number | undefined =>
  process.platform !== "win32" && errno !== undefined && Number.isSafeInteger(errno) && errno > 0 ? -errno : undefined
const rawEsrch = rawError(os.constants.errno.ESRCH)
const rawEperm = rawError(os.constants.errno.EPERM)

/** As the library's: `true`, `"denied"` for EPERM (another user's live process), `false` for ESRCH. */
export const signalZeroAnswer = (pid: number): Signalled => {
  // The binding reads the pid as a 32-bit integer: only a real pid may reach it.
  if (!isProcessId(pid)) return false
  const raw = (process as unknown as { readonly _kill?: unknown })._kill
  if (rawEsrch !== undefined && rawEperm !== undefined && typeof raw === "function") {
    const result: unknown = raw.call(process, pid, 0)
    if (result === 0) return true
    if (result === rawEperm) return "denied"
    if (result === rawEsrch) return false
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    const code = typeof error === "object" && error !== null ? (error as { readonly code?: unknown }).code : undefined
    return code === "ESRCH" ? false : code === "EPERM" ? "denied" : true
  }
}

export const signalZero = (pid: number): boolean => signalZeroAnswer(pid) !== false
