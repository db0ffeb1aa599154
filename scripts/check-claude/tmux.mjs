/**
 * A private tmux server (`tmux -S <socket path>` with its own configuration file), so the check never
 * touches the user's tmux sessions. Its socket lives in the run's directory: tmux leaves the socket
 * file behind when its server exits, and the run's directory is removed at the end. Panes stay after
 * their process exits (`remain-on-exit`), so a Claude Code that quit can be diagnosed from its last
 * screen.
 */
import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"

export const makeTmux = ({ configFile, env, socketPath }) => {
  writeFileSync(configFile, "set -g remain-on-exit on\nset -g history-limit 5000\n")
  const tmux = (args) => {
    const result = spawnSync("tmux", ["-S", socketPath, "-f", configFile, ...args], {
      env,
      encoding: "utf8",
      timeout: 15_000
    })
    if (result.error) throw new Error(`tmux ${args[0]}: ${result.error.message}`)
    return result
  }
  const must = (args) => {
    const result = tmux(args)
    if (result.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${result.stderr.trim()}`)
    return result.stdout
  }
  return {
    /**
     * A detached session named `name` running `argv` (executed directly, no shell) in `cwd`, with
     * `environment`'s variables added to the server's.
     */
    newSession: (name, cwd, argv, environment = {}) =>
      must([
        "new-session",
        "-d",
        "-s",
        name,
        "-x",
        "200",
        "-y",
        "50",
        "-c",
        cwd,
        ...Object.entries(environment).flatMap(([key, value]) => ["-e", `${key}=${value}`]),
        ...argv
      ]),
    /** Literal text, as typed. */
    type: (name, text) => must(["send-keys", "-t", `=${name}:`, "-l", text]),
    /** Named keys: `Enter`, `Left`, `Down`, `Escape` … */
    press: (name, ...keys) => must(["send-keys", "-t", `=${name}:`, ...keys]),
    screen: (name) => {
      const result = tmux(["capture-pane", "-p", "-t", `=${name}:`])
      return result.status === 0 ? result.stdout : ""
    },
    /** `{ name, pid, dead }` of every pane. */
    panes: () => {
      const result = tmux(["list-panes", "-a", "-F", "#{session_name}\t#{pane_pid}\t#{pane_dead}"])
      if (result.status !== 0) return []
      return result.stdout.trim().split("\n").filter(Boolean).map((line) => {
        const [name, pid, dead] = line.split("\t")
        return { name, pid: Number(pid), dead: dead === "1" }
      })
    },
    serverPid: () => {
      const result = tmux(["display-message", "-p", "#{pid}"])
      return result.status === 0 ? Number(result.stdout.trim()) : null
    },
    killServer: () => tmux(["kill-server"])
  }
}
