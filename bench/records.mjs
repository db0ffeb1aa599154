/**
 * Registry records for the benches, shaped like the ones Claude Code 2.1.332 writes (see
 * test/fixtures/real-records), and the start time a record's `procStart` holds on Linux.
 */
import * as fs from "node:fs"

/** Field 22 of /proc/<pid>/stat, as Claude Code writes `procStart`; undefined where it cannot be read. */
export const startTimeOf = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/)[19]
  } catch {
    return undefined
  }
}

/** This machine's pid domain as Claude Code writes `pidDomain` on Linux; undefined elsewhere. */
export const pidDomain = (() => {
  try {
    return `linux:${fs.readFileSync("/etc/machine-id", "utf8").trim()}:${fs.readlinkSync("/proc/self/ns/pid")}`
  } catch {
    return undefined
  }
})()

export const sessionIdOf = (pid) => `00000000-0000-4000-8000-${String(pid).padStart(12, "0")}`

/** A record of `pid`; `fields` overrides or adds fields, and a field given as undefined is left out. */
export const recordText = (pid, fields = {}) => {
  const record = {
    pid,
    sessionId: sessionIdOf(pid),
    cwd: `/home/user/work/project-${pid % 97}`,
    startedAt: 1796007021392,
    procStart: "1",
    version: "2.1.332",
    peerProtocol: 1,
    peerFeatures: ["notify_idle", "reply_across_default_dirs", "artifact_yield"],
    kind: "interactive",
    entrypoint: "cli",
    ...(pidDomain === undefined ? {} : { pidDomain }),
    messagingSocketPath: `/tmp/cc-socks/${pid}.sock`,
    name: `work-${pid}`,
    nameSource: "derived",
    status: ["idle", "busy", "waiting", "shell"][pid % 4],
    updatedAt: 1796007033251,
    statusUpdatedAt: 1796007033251
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete record[key]
    else record[key] = value
  }
  return JSON.stringify(record)
}
