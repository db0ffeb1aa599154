/** Registry records shaped like the ones Claude Code 2.1.332 writes (see test/fixtures/real-records). */

export interface RecordOptions {
  readonly sessionId?: unknown
  readonly name?: unknown
  readonly procStart?: unknown
  readonly pidDomain?: unknown
  readonly status?: unknown
  readonly [key: string]: unknown
}

/** A compact one-line record, as Claude Code writes it; `undefined` options drop the key. */
export const recordText = (pid: unknown, options: RecordOptions = {}): string => {
  const record: Record<string, unknown> = {
    pid,
    sessionId: `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`,
    cwd: "/home/user/work",
    startedAt: 1796007021392,
    version: "2.1.332",
    peerProtocol: 1,
    kind: "interactive",
    entrypoint: "cli",
    messagingSocketPath: `/tmp/cc-socks/${String(pid)}.sock`,
    name: `work-${String(pid)}`,
    nameSource: "derived",
    status: "idle",
    updatedAt: 1796007033251,
    statusUpdatedAt: 1796007033251
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) delete record[key]
    else record[key] = value
  }
  return JSON.stringify(record)
}

/** A live session's JSON members, in the contract's order ("A live session, as JSON"). */
export const sessionJsonKeys = [
  "pid",
  "sessionId",
  "name",
  "address",
  "cwd",
  "socketPath",
  "status",
  "rawStatus",
  "statusUpdatedAtMs",
  "updatedAtMs",
  "startedAtMs",
  "kind",
  "entrypoint",
  "nameSource",
  "waitingFor",
  "jobId",
  "version",
  "tmux",
  "file",
  "stopped",
  "unaddressable"
]
