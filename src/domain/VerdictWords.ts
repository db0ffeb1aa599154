/**
 * The verdicts in words: what `inspect`, `resolve`'s refusals and the settings' refusals say. Kept
 * apart from the schemas in `Verdict.ts` (which re-exports them): a sentence needs no schema.
 */
import type { EntryType, Verdict } from "./Verdict.js"

/** An entry type in words, for the sentences of verdicts and settings refusals. */
export const entryTypeWords: Record<EntryType, string> = {
  File: "a regular file",
  Directory: "a directory",
  SymbolicLink: "a symbolic link",
  FIFO: "a FIFO",
  Socket: "a socket",
  BlockDevice: "a block device",
  CharacterDevice: "a character device",
  Unknown: "of an unknown type"
}

/** A sentence a person can read, for `inspect` and for `resolve`'s refusals. */
export const describeVerdict = (verdict: Verdict): string => {
  switch (verdict._tag) {
    case "not_a_record":
      return "the name is not <pid>.json with a canonical pid"
    case "not_a_file":
      return `not a regular file: ${entryTypeWords[verdict.type]}`
    case "too_large":
      return `larger than 256 KiB (${verdict.size} bytes)`
    case "unreadable":
      return `could not be read: ${verdict.reason}`
    case "malformed":
      return `malformed: ${verdict.reason}`
    case "invalid_pid":
      return `pid ${verdict.pid} is not an integer in 1..2147483647`
    case "pid_mismatch":
      return `the record's pid ${verdict.pid} differs from the file name's ${verdict.filePid}`
    case "no_name":
      return "the record has no name"
    case "empty_session_id":
      return "the record's session id is empty"
    case "parked":
      return verdict.windowRunning
        ? `parked: the session moved to background job ${verdict.parkedJobId}`
        : `parked, and the window's process has exited: its conversation had moved to background job ${verdict.parkedJobId}`
    case "spare":
      return "spare: a pre-started background worker that holds no conversation yet (Claude Code hides it; nobody can address it)"
    case "foreign_owner":
      return `owned by another user (uid ${verdict.owner}), neither this user (uid ${verdict.reader}) nor the home's owner${
        verdict.homeOwner === null ? "" : ` (uid ${verdict.homeOwner})`
      }: not one of this user's sessions`
    case "other_pid_domain":
      return `the pid belongs to another machine or container (${verdict.pidDomain}, here ${verdict.here})`
    case "dead":
      return "dead: no process runs with that pid (none has it, or it has exited and waits to be reaped)"
    case "pid_reused":
      return verdict.proof === "owner"
        ? `pid reused: the record was written by this user (${verdict.recorded}), and the pid now belongs to ${verdict.actual}`
        : `pid reused: the process started at ${verdict.actual}, the record says ${verdict.recorded}`
    case "live":
      return "live"
  }
}
