/**
 * Every known difference between `claude agents --json` (Claude Code 2.1.332) and claude-peers, with
 * its reason. This list is the one source of two things that must not drift apart: the README's
 * table "Differences from `claude agents`" (a test renders this list and compares it with the
 * README), and the judgement of `npm run check:claude`, which calls a difference "documented" only
 * when it names one of these ids, and fails on any other.
 */
export const differences = [
  {
    id: "job-shape",
    claudeAgents:
      "a background job: `kind: \"background\"`, its job id as `id`, and the job's `state` (`working`, `blocked`, …), read from the background service's own job files",
    claudePeers: "the job's own registry record, a session like any other: `kind: \"bg\"`, `jobId`, no job state",
    why:
      "claude-peers reads only the registry. A job's record has its own session id, name and socket, so it is resolved and addressed like an interactive session"
  },
  {
    id: "shell-status",
    claudeAgents: "`busy` for a record whose status is `shell`",
    claudePeers: "`idle`, with `rawStatus: \"shell\"`",
    why: "`shell` means the session waits at its prompt while a shell command it started runs in the background: it takes input"
  },
  {
    id: "killed-job",
    claudeAgents:
      "a background job that no process runs stays listed, with no `pid` and the job's last state: after a kill for 5 to 15 s, until the background service settles or restarts it (and for minutes, once, a job whose worker was killed as it started)",
    claudePeers: "its record is `dead` at once: not in `list`, and `resolve` refuses it (`not_live`)",
    why: "no process runs the job. A restarted job is a new process with its own record, listed when it appears"
  },
  {
    id: "zombie",
    claudeAgents: "lists a record whose process has exited but is not reaped yet (`kill(pid, 0)` succeeds on a zombie)",
    claudePeers: "`dead` (the process is in state `Z` in `/proc/<pid>/stat`)",
    why: "a zombie runs nothing and reads no message (\"Move to background and exit\" leaves the window's process one for a moment, after removing its record)"
  },
  {
    id: "spare",
    claudeAgents: "hides spare workers (`\"spare\": true`)",
    claudePeers: "hides them too (`list`; `resolve` refuses with `not_live`), and `inspect` reports them with the verdict `spare`",
    why:
      "a spare is a pre-started worker that holds no conversation, and nobody can address it. `inspect` gives every file a verdict, so a reader sees why it is not a session"
  },
  {
    id: "parked-window",
    claudeAgents: "hides a window whose session moved to the background (←), also after its own process died",
    claudePeers:
      "hides it too; `inspect` says `parked` and names the job, and `resolve` of the window's session id refuses with `not_live`, naming the job (and saying so when the window's process is gone)",
    why: "the conversation runs in the job, which has its own record and socket: resolve the job"
  },
  {
    id: "no-socket",
    claudeAgents: "lists a session without `messagingSocketPath` (`--restricted`) as a live session",
    claudePeers: "lists it as `live` with `socketPath: null` and `address: null`; `resolve` refuses it with `not_addressable` (exit 8)",
    why: "its inbox did not start: it runs, but nothing can deliver a message to it"
  },
  {
    id: "shared-name",
    claudeAgents:
      "lists every session, also when two live ones have the same name (derived names `<dir>-<2 hex>` collide one time in 256; a job moved to the background from a conversation without a typed prompt, only `!` commands for example, is named `(backgrounded)`; `claude --bg --name X` twice starts two jobs named `X`: a job's name is not made unique)",
    claudePeers:
      "lists them with `address: \"uds:<socket>\"`; `resolve ID` refuses with `identity_mismatch` (exit 4) unless given `--allow-shared-name`, and `resolve --name` refuses",
    why: "the name is the address a sender uses: a message sent by a shared name could reach the other session. The id and the socket are still unambiguous"
  },
  {
    id: "duplicate-session-id",
    claudeAgents:
      "lists both processes of a session id that two live records carry (`--session-id` or `--resume` of a live id, or `--continue` in a directory whose last conversation still runs)",
    claudePeers:
      "lists both, each with `address: \"uds:<socket>\"` (their names may differ; after `--continue`, Claude Code 2.1.332 gives the second process the same name once the conversation's name reaches it); `resolve` of that id, and `resolve --name` of either name, refuse with `identity_mismatch` (exit 4), as `send` does (checked against real `--continue` processes: Claude Code's own `SendMessage` to that name refuses too and asks for `name [ref]`)",
    why: "an id that two running processes carry does not say which one to deliver to; each socket still reaches one"
  },
  {
    id: "other-user",
    claudeAgents: "hides a session whose process is another user's (`kill(pid, 0)` answers EPERM, which its reader takes for not running)",
    claudePeers:
      "lists it as `live` (the process runs) with `address: null`, `socketPath` kept and `unaddressable: \"other_user\"`; `resolve` refuses it with `not_addressable` (exit 8), saying why. A record its own user wrote whose pid answers EPERM is `pid_reused`, and a record owned by neither the reader nor the home's owner is `foreign_owner`",
    why:
      "the session runs, but its socket sits in the other user's private runtime directory, which this user cannot connect to. This user's own sessions are always signalable by it, so EPERM on a pid of its own record proves the pid was reused"
  },
  {
    id: "stopped",
    claudeAgents: "lists a stopped session (SIGSTOP, a debugger: state `T`) like a running one",
    claudePeers:
      "lists it with `stopped: true` (`list` shows `, stopped` after its status); `resolve` still resolves it; `watch` reports stopping and continuing as `changed`",
    why: "a stopped process reads no message until it is continued: a message to it fails after a while or arrives only later"
  },
  {
    id: "address-like-name",
    claudeAgents: "lists a session under its name, whatever it is",
    claudePeers:
      "a session whose name Claude Code 2.1.332 parses as another address (`uds:…`, `bridge:…`, `did:…`, `/…/x.sock`, `session_01…`, `name [session_01…]`) has `address: \"uds:<socket>\"`",
    why: "`SendMessage` reads such a `to` as that other address before it looks for a name: a message sent to the name would go elsewhere"
  }
]

const cell = (text) => text.replaceAll("|", "\\|")

/** The README's table, line by line. */
export const readmeTable = () => [
  "| difference | `claude agents --json` | claude-peers | why |",
  "| --- | --- | --- | --- |",
  ...differences.map((d) => `| \`${d.id}\` | ${cell(d.claudeAgents)} | ${cell(d.claudePeers)} | ${cell(d.why)} |`)
]
