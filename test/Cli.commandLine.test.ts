/**
 * The command line as people type it, through the built command: options after the command, missing
 * values, `--help` anywhere, colours only on a terminal, usage errors that never echo an argument's
 * control characters, and a Claude home that does not exist said as such.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binPath, runCli } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-command-line-"))
const sleeper = startSleeper()
afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(tmp, { recursive: true, force: true })
})

const home = path.join(tmp, "home")
fs.mkdirSync(path.join(home, "sessions"), { recursive: true })
fs.writeFileSync(
  path.join(home, "sessions", `${sleeper.pid}.json`),
  recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), sessionId: "sess-a", name: "alpha" })
)

/** Every control character `terminalSafe` escapes; a line break is the output's own. */
const control = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
const ansi = "\u001b["

const usageJson = (stdout: string): { reason: string; message: string } => (JSON.parse(stdout) as { error: { reason: string; message: string } }).error

describe("usage errors never pass an argument's control characters to the terminal", { timeout: 60_000 }, () => {
  // OSC 52 asks the terminal to put text on the clipboard; CSI 2J clears the screen; a bare line break could forge a line.
  const osc52 = "\u001b]52;c;aGVsbG8=\u0007"
  const cases: ReadonlyArray<ReadonlyArray<string>> = [
    ["--claude-home", home, "list", `--x${osc52}`],
    [osc52],
    ["--claude-home", home, "resolve", "sess-a", `extra${osc52}\n\u009b2J`],
    ["--claude-home", home, "settings", `get${osc52}`],
    ["--claude-home", home, "settings", "set", `hold${osc52}`],
    ["--claude-home", home, "watch", `--interval=1${osc52}`],
    ["--claude-home", home, "settings", "reset", `--expect-revision=${osc52}`],
    ["--claude-home", home, "list", `--\u202eevil`]
  ]

  it("on stderr, with the escapes shown; with --json, the same sentence as JSON on stdout", () => {
    for (const args of cases) {
      for (const json of [false, true]) {
        const run = runCli(json ? [...args, "--json"] : args)
        const label = JSON.stringify([...args, json])
        expect(run.status, label).toBe(2)
        expect(run.stderr, label).toMatch(/^claude-peers: /)
        expect(run.stderr, label).not.toMatch(control)
        expect(run.stderr, label).not.toContain(ansi)
        // Where the sentence quotes the argument, it shows the escapes rather than dropping them.
        if (!label.includes("hold") && !label.includes("expect-revision")) expect(run.stderr, label).toMatch(/\\u\{(1b|202e)\}/)
        if (json) {
          expect(run.stdout, label).not.toMatch(control)
          expect(usageJson(run.stdout).reason, label).toBe("usage")
          expect(usageJson(run.stdout).message, label).not.toMatch(control)
        } else {
          expect(run.stdout, label).toBe("")
        }
      }
    }
  })

  it("help asked for beside such an argument prints no control character either", () => {
    const run = runCli(["--claude-home", osc52, "list", "--help"])
    expect(run.status).toBe(0)
    expect(run.stdout).toContain("list")
    expect(run.stdout).not.toMatch(control)
    expect(run.stderr).toBe("")
  })
})

describe("a missing option value is a usage error, in both spellings", { timeout: 60_000 }, () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["--name", ["resolve", "--json", "--name"]],
    ["--name", ["resolve", "--name", "--json"]],
    ["--name", ["resolve", "--name=", "--json"]],
    ["--name", ["resolve", "--name", "", "--json"]],
    ["--claude-home", ["list", "--json", "--claude-home"]],
    ["--claude-home", ["--claude-home", "--json", "list"]],
    ["--claude-home", ["--claude-home=", "list", "--json"]],
    ["--expect-revision", ["settings", "set", "hold", "--json", "--expect-revision"]],
    ["--expect-revision", ["settings", "set", "hold", "--expect-revision", "--json"]],
    ["--expect-revision", ["settings", "reset", "--expect-revision=", "--json"]],
    ["--interval", ["watch", "--interval", "--json"]],
    ["--interval", ["watch", "--json", "--interval="]]
  ]

  it("exit 2, the option named, nothing run", () => {
    for (const [option, args] of cases) {
      const where = path.join(tmp, `untouched-${option.slice(2)}-${cases.findIndex((c) => c[1] === args)}`)
      fs.mkdirSync(where)
      const run = runCli(args.includes("--claude-home") || args.some((a) => a.startsWith("--claude-home=")) ? args : ["--claude-home", where, ...args])
      const label = args.join(" ")
      expect(run.status, label).toBe(2)
      const error = usageJson(run.stdout)
      expect(error.reason, label).toBe("usage")
      expect(error.message, label).toContain(option)
      expect(error.message, label).toMatch(/needs a value/)
      expect(fs.readdirSync(where), label).toEqual([])
    }
  })

  it("a value that starts with - is written --opt=VALUE", () => {
    const run = runCli(["--claude-home", home, "resolve", "--name=-alpha", "--json"])
    expect(run.status).toBe(3)
    expect(usageJson(run.stdout)).toMatchObject({ reason: "not_live", query: { name: "-alpha" } })
  })

  it("resolve with neither a session id nor a name says which it takes", () => {
    const run = runCli(["--claude-home", home, "resolve"])
    expect(run.status).toBe(2)
    expect(run.stderr).toBe("claude-peers: resolve takes a SESSION_ID or --name NAME\n")
    const both = runCli(["--claude-home", home, "resolve", "sess-a", "--name", "alpha"])
    expect(both.stderr).toBe("claude-peers: resolve takes a SESSION_ID or --name NAME, not both\n")
  })

  it("an option given twice, or a flag given a value, is a usage error", () => {
    for (
      const args of [["list", "--json", "--json"], ["--claude-home", home, "policy", "--managed-dir", home, "--managed-dir", home], [
        "resolve",
        "--name",
        "a",
        "--name=b"
      ], [
        "list",
        "--json=yes"
      ]]
    ) {
      const run = runCli(args)
      expect(run.status, args.join(" ")).toBe(2)
      expect(run.stderr, args.join(" ")).toMatch(/given twice|takes no value/)
    }
  })
})

describe("options may follow the command they belong to", { timeout: 60_000 }, () => {
  const same = (moved: ReadonlyArray<string>, documented: ReadonlyArray<string>) => {
    const a = runCli(moved)
    const b = runCli(documented)
    expect(a, moved.join(" ")).toEqual(b)
    expect(a.status, moved.join(" ")).toBe(0)
  }

  it("--claude-home after the command, in either spelling, is --claude-home before it", () => {
    same(["list", "--claude-home", home, "--json"], ["--claude-home", home, "list", "--json"])
    same(["list", "--json", `--claude-home=${home}`], ["--claude-home", home, "list", "--json"])
    same(["inspect", "--claude-home", home], ["--claude-home", home, "inspect"])
    same(["resolve", "sess-a", "--claude-home", home, "--json"], ["--claude-home", home, "resolve", "sess-a", "--json"])
    same(["settings", "get", "--claude-home", home, "--json"], ["--claude-home", home, "settings", "get", "--json"])
    same(["settings", "--claude-home", home, "get"], ["--claude-home", home, "settings", "get"])
  })

  it("a command's option before the command is the command's", () => {
    same(["--json", "--claude-home", home, "list"], ["--claude-home", home, "list", "--json"])
    same(["--name", "alpha", "--claude-home", home, "resolve", "--json"], ["--claude-home", home, "resolve", "--name", "alpha", "--json"])
  })

  it("an option no command on the line takes says where it goes; so does -- where no argument goes", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--json"], "claude-peers: claude-peers takes a command (list, inspect, resolve, settings, watch, wait, policy, send), and --json goes after it\n"],
      [["--claude-home", home, "settings", "--json"], "claude-peers: claude-peers settings takes a command (get, set, reset), and --json goes after it\n"],
      [["--name", "alpha", "list"], "claude-peers: --name is not an option of claude-peers list\n"],
      [["settings", "--", "get"], "claude-peers: claude-peers settings takes a command (get, set, reset) before --\n"],
      // After --, a word is an argument, and no argument starts with -: not help.
      [["resolve", "--", "-h"], "claude-peers: '-h' is not an argument of claude-peers resolve: none starts with -\n"],
      // A word past the arguments a command takes names the command too.
      [["list", "foo"], "claude-peers: claude-peers list takes no argument, not 'foo'\n"],
      [["resolve", "a", "b"], "claude-peers: 'b' is one argument too many for claude-peers resolve, which takes SESSION_ID\n"],
      [["send", "a", "hi", "--", "extra"], "claude-peers: 'extra' is one argument too many for claude-peers send, which takes SESSION_ID then MESSAGE\n"]
    ]
    for (const [args, said] of cases) {
      const run = runCli(args)
      expect(run.status, args.join(" ")).toBe(2)
      expect(run.stderr, args.join(" ")).toBe(said)
    }
  })

  it("a typed word quoted by a usage error is terminal-safe (a line feed cannot start a line of its own) and cut short", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["list", "--x\nclaude-peers: FAKE"], "claude-peers: '--x\\u{a}claude-peers: FAKE' is not an option of claude-peers list\n"],
      [["bo\ngus"], "claude-peers: unknown command 'bo\\u{a}gus' for claude-peers: use one of list, inspect, resolve, settings, watch, wait, policy, send\n"],
      [["resolve", "--", "-\nx"], "claude-peers: '-\\u{a}x' is not an argument of claude-peers resolve: none starts with -\n"],
      [["settings", "set", "a\u001b[31mb"], "claude-peers: settings set takes accept, hold or refuse, not 'a\\u{1b}[31mb'\n"],
      [["list", `--${"x".repeat(100_000)}`], `claude-peers: '--${"x".repeat(198)}…' is not an option of claude-peers list\n`]
    ]
    for (const [args, said] of cases) {
      const run = runCli(["--claude-home", home, ...args])
      expect(run.status, args.join(" ").slice(0, 40)).toBe(2)
      expect(run.stderr, args.join(" ").slice(0, 40)).toBe(said)
    }
  })

  it("--version and --completions are answered wherever they stand, and only on a line without mistakes", () => {
    for (const args of [["--claude-home", home, "--version"], ["--all-homes", "--version"], ["--claude-home", home, "list", "--version"]]) {
      expect(runCli(args), args.join(" ")).toEqual({ status: 0, stdout: "0.1.0\n", stderr: "" })
    }
    expect(runCli(["--claude-home", home, "--completions", "zsh"]).stdout).toContain("#compdef claude-peers")
    const refused: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [
        ["--completions", "bash", "bogus"],
        "claude-peers: unknown command 'bogus' for claude-peers: use one of list, inspect, resolve, settings, watch, wait, policy, send\n"
      ],
      [["--completions", "bash", "--completions", "zsh"], "claude-peers: --completions is given twice\n"],
      [["--completions", "ba\u001b[31msh"], "claude-peers: --completions takes bash, fish, sh, zsh, not 'ba\\u{1b}[31msh'\n"]
    ]
    for (const [args, said] of refused) {
      const run = runCli(args)
      expect([run.status, run.stdout, run.stderr], args.join(" ")).toEqual([2, "", said])
    }
  })

  it("settings set with --claude-home after it writes that home's file", () => {
    const other = path.join(tmp, "set-home")
    fs.mkdirSync(other)
    const run = runCli(["settings", "set", "hold", "--claude-home", other, "--json"])
    expect(run.status).toBe(0)
    expect(JSON.parse(fs.readFileSync(path.join(other, "settings.json"), "utf8"))).toEqual({ crossSessionInbound: "hold" })
  })
})

describe("--help anywhere prints help", { timeout: 60_000 }, () => {
  it("the root's, or the command's, exit 0, whatever else is on the line", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--claude-home", home, "--help"], "$ claude-peers"],
      [["--help"], "$ claude-peers"],
      [["-h", "--claude-home"], "$ claude-peers"],
      [["list", "--claude-home", home, "--json", "--help"], "$ list"],
      [["resolve", "--name", "--help"], "$ resolve"],
      [["--help", "resolve", "--bogus"], "$ resolve"],
      // @effect/cli names a subcommand's usage by its own name.
      [["settings", "set", "maybe", "-h"], "$ set [--expect-revision"],
      [["settings", "--help"], "$ settings"],
      [["watch", "--interval", "0", "--help"], "$ watch"]
    ]
    for (const [args, usage] of cases) {
      const run = runCli(args)
      expect(run.status, args.join(" ")).toBe(0)
      expect(run.stdout, args.join(" ")).toContain(usage)
      expect(run.stderr, args.join(" ")).toBe("")
    }
  })
})

describe("help is coloured only on a terminal, and never with NO_COLOR", { timeout: 60_000 }, () => {
  /** Runs the command on a pseudo-terminal (util-linux `script`), as a person at a terminal does. */
  const onTerminal = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
    const command = [process.execPath, binPath, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ")
    const run = spawnSync("script", ["-qec", command, "/dev/null"], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: "/nonexistent-home", TERM: "xterm", ...env },
      timeout: 30_000
    })
    return { status: run.status, stdout: run.stdout }
  }

  it("a pipe gets no escape sequence, with or without NO_COLOR", () => {
    for (const args of [["--help"], ["settings", "set", "--help"], ["--version"]]) {
      const run = runCli(args)
      expect(run.status).toBe(0)
      expect(run.stdout.length).toBeGreaterThan(0)
      expect(run.stdout, args.join(" ")).not.toContain("\u001b")
    }
  })

  it("a terminal gets colours, unless NO_COLOR is set to something", () => {
    const coloured = onTerminal(["--help"], {})
    expect(coloured.status).toBe(0)
    expect(coloured.stdout).toContain("USAGE")
    expect(coloured.stdout).toContain(ansi)
    // An empty NO_COLOR is unset, as no-color.org says.
    expect(onTerminal(["--help"], { NO_COLOR: "" }).stdout).toContain(ansi)
    const plain = onTerminal(["--help"], { NO_COLOR: "1" })
    expect(plain.stdout).toContain("USAGE")
    expect(plain.stdout).not.toContain("\u001b")
    expect(onTerminal(["list", "--help"], { NO_COLOR: "yes" }).stdout).not.toContain("\u001b")
  })
})

describe("a Claude home that does not exist", { timeout: 60_000 }, () => {
  const nope = path.join(tmp, "nope")

  it("list, inspect and resolve say so in human output; JSON is unchanged; exit codes too", () => {
    const list = runCli(["--claude-home", nope, "list"])
    expect(list.status).toBe(0)
    expect(list.stdout).toBe(`no live sessions (${nope} does not exist)\n`)
    expect(runCli(["--claude-home", nope, "list", "--json"])).toEqual({ status: 0, stdout: "[]\n", stderr: "" })

    const inspect = runCli(["--claude-home", nope, "inspect"])
    expect(inspect.status).toBe(0)
    expect(inspect.stdout).toBe(`no registry files (${nope} does not exist)\n`)
    expect(runCli(["--claude-home", nope, "inspect", "--json"])).toEqual({ status: 0, stdout: "[]\n", stderr: "" })

    const resolve = runCli(["--claude-home", nope, "resolve", "sess-a"])
    expect(resolve.status).toBe(3)
    expect(resolve.stderr).toContain(`${nope} does not exist`)
    const resolveJson = runCli(["--claude-home", nope, "resolve", "sess-a", "--json"])
    expect(resolveJson.status).toBe(3)
    expect(resolveJson.stdout).not.toContain("does not exist")
  })

  it("over several named homes, the first that does not exist is said as such", () => {
    const there = path.join(tmp, "there")
    fs.mkdirSync(path.join(there, "sessions"), { recursive: true })
    const list = runCli(["--claude-home", there, "--claude-home", nope, "--claude-home", `${nope}-too`, "list"])
    expect(list.status).toBe(0)
    expect(list.stdout).toBe(`no live sessions (${nope} does not exist)\n`)
    expect(runCli(["--claude-home", there, "--claude-home", nope, "list", "--json"])).toEqual({ status: 0, stdout: "[]\n", stderr: "" })
  })

  it("settings get says so in human output, beside the settings file it names; JSON is unchanged", () => {
    const get = runCli(["--claude-home", nope, "settings", "get"])
    expect(get.status).toBe(0)
    expect(get.stdout).toContain(`settings file        ${path.join(nope, "settings.json")} (${nope} does not exist)\n`)
    const getJson = runCli(["--claude-home", nope, "settings", "get", "--json"])
    expect(getJson.status).toBe(0)
    expect(getJson.stdout).not.toContain("does not exist")
  })

  it("settings get in a home that exists, without a settings file, is only that", () => {
    const quiet = path.join(tmp, "home-without-settings")
    fs.mkdirSync(quiet)
    const get = runCli(["--claude-home", quiet, "settings", "get"])
    expect(get.status).toBe(0)
    expect(get.stdout).toContain(`settings file        ${path.join(quiet, "settings.json")}\n`)
    expect(get.stdout).not.toContain("does not exist")
  })

  it("a home without its sessions directory names the directory that is missing", () => {
    const bare = path.join(tmp, "bare-home")
    fs.mkdirSync(bare)
    expect(runCli(["--claude-home", bare, "list"]).stdout).toBe(`no live sessions (${path.join(bare, "sessions")} does not exist)\n`)
  })

  it("a home that exists and has no live session is only that", () => {
    const quiet = path.join(tmp, "quiet-home")
    fs.mkdirSync(path.join(quiet, "sessions"), { recursive: true })
    expect(runCli(["--claude-home", quiet, "list"]).stdout).toBe("no live sessions\n")
    expect(runCli(["--claude-home", quiet, "inspect"]).stdout).toBe("no registry files\n")
  })

  it("the name of a missing home is shown terminal-safe", () => {
    const evil = path.join(tmp, "no\u001b]52;c;aGk=\u0007pe")
    const run = runCli(["--claude-home", evil, "list"])
    expect(run.stdout).not.toMatch(control)
    expect(run.stdout).toContain("\\u{1b}")
  })

  it("watch says so on stderr, then waits for it", async () => {
    const child = spawn(process.execPath, [binPath, "--claude-home", nope, "watch"], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    const said = new Promise<void>((resolve) =>
      child.stderr.on("data", (data) => {
        stderr += data
        if (stderr.includes("\n")) resolve()
      })
    )
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    // Not a measurement: a watch that never says anything must fail this test rather than hang it.
    const silent = setTimeout(() => child.kill("SIGKILL"), 20_000)
    await Promise.race([said, exited])
    clearTimeout(silent)
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(stderr).toBe(`claude-peers: ${nope} does not exist; watching for sessions to appear there\n`)
  })
})
