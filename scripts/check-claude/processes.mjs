/**
 * The processes of a check run, on Linux. Every process the check starts carries a marker in its
 * environment (`CLAUDE_PEERS_CHECK_RUN=<random id>`), and Claude Code passes its environment on to
 * everything it starts (its background service, job hosts, spare workers), also to processes that
 * outlive their parent. So "the processes this run started" is exactly the set of pids whose
 * environment holds the marker: the cleanup kills those, by pid, and nothing else.
 *
 * Everything here is synchronous, so that the cleanup can run from a signal handler or an exit hook.
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"

const pause = new Int32Array(new SharedArrayBuffer(4))
export const sleepSync = (ms) => Atomics.wait(pause, 0, 0, ms)

/** State letter and start time (field 22) from `/proc/<pid>/stat`, or null when there is no such process. */
export const processStat = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0], startTime: fields[19] }
  } catch {
    return null
  }
}

export const isRunning = (pid) => {
  const stat = processStat(pid)
  return stat !== null && stat.state !== "Z" && stat.state !== "X"
}

const environmentHolds = (pid, marker) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(marker)
  } catch {
    return false
  }
}

export const markedPids = (marker) =>
  readdirSync("/proc")
    .filter((name) => /^[1-9][0-9]*$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid && environmentHolds(pid, marker))

/**
 * SIGKILLs every process carrying the marker until none is left (or 5 s passed: a process that
 * survives SIGKILL that long is stuck in the kernel). Returns the pids it killed.
 */
export const killMarked = (marker) => {
  const killed = new Set()
  for (let round = 0; round < 50; round++) {
    const pids = markedPids(marker).filter(isRunning)
    if (pids.length === 0) break
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
        killed.add(pid)
      } catch {
        // gone already
      }
    }
    sleepSync(100)
  }
  return [...killed]
}

/**
 * A zombie: a child that has exited and that its parent never reaps. The shell starts a short
 * `sleep` in the background, prints its pid and replaces itself with a long `sleep`, which never
 * waits for children. Resolves to `{ zombiePid, holderPid, startTime }` once `/proc` shows the
 * zombie. On a busy machine the child can end before the `exec` and the shell reap it: the pid is
 * then gone, and another holder is started.
 */
export const startZombie = (env, attempts = 5) =>
  new Promise((resolvePromise, reject) => {
    const holder = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 100000"], {
      env,
      stdio: ["ignore", "pipe", "ignore"]
    })
    let output = ""
    holder.on("error", reject)
    holder.stdout.on("data", (chunk) => {
      output += chunk
      const line = /^(\d+)\n/.exec(output)
      if (line === null) return
      holder.stdout.destroy()
      const zombiePid = Number(line[1])
      const deadline = Date.now() + 10_000
      const poll = () => {
        const stat = processStat(zombiePid)
        if (stat?.state === "Z") return resolvePromise({ zombiePid, holderPid: holder.pid, startTime: stat.startTime })
        if (stat === null && attempts > 1) {
          holder.kill("SIGKILL")
          return startZombie(env, attempts - 1).then(resolvePromise, reject)
        }
        if (Date.now() > deadline) return reject(new Error(`pid ${zombiePid} did not become a zombie`))
        setTimeout(poll, 50)
      }
      poll()
    })
  })

/** A process that only waits, to own a pid that a copied record can point at. */
export const startIdleProcess = (env) => {
  const child = spawn("sleep", ["100000"], { env, stdio: "ignore" })
  return child.pid
}
