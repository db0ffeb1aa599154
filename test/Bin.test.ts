/**
 * The shipped command: the bundle `npm run build` writes (`dist/claude-peers.cjs`) and the loader
 * that runs it with a V8 code cache (`bin/claude-peers.js`). Whatever happens to the cache (none
 * yet, garbage, stale, an unwritable directory), the command's output and exit code are the same.
 * Nothing here is timed: speed is `npm run bench`'s business.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { watch as watchNone } from "../command/src/FilesNodeWatchNone.js"
import { startCli, waitUntil } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const root = path.resolve(import.meta.dirname, "..")
const bin = path.join(root, "bin", "claude-peers.js")
const bundle = path.join(root, "dist", "claude-peers.cjs")
/** The bundle's text and its index (the second line): each section's id, start, end and line. */
const readBundle = () => {
  const text = fs.readFileSync(bundle, "latin1")
  const index = JSON.parse(text.split("\n")[1]!.slice(3)) as Record<string, [number, number, number]>
  return { index, section: (id: string) => text.slice(index[id]![0], index[id]![1]) }
}
/** The cache of the bundle's `list` part, the one `list` runs. */
const cacheName = "claude-peers.cjs.list.v8-cache"

/**
 * The one file in a directory that installs share (the user cache or temporary directory): list's
 * cache, named for this install.
 */
const sharedCacheName = /^claude-peers\.cjs\.list\.[0-9a-z]+\.v8-cache$/

const onlySharedCacheIn = (directory: string): string => {
  const names = fs.readdirSync(directory)
  expect(names).toHaveLength(1)
  expect(names[0]).toMatch(sharedCacheName)
  return names[0]!
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-bin-"))
// Readable by the unprivileged user of the read-only install's tests.
fs.chmodSync(tmp, 0o755)
const sleeper = startSleeper()
afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(tmp, { recursive: true, force: true })
})

let dirs = 0
const freshDir = (name: string) => {
  const dir = path.join(tmp, `${name}-${dirs++}`)
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

const emptyHome = freshDir("empty-home")
/** A home whose `sessions` is a file: `list` fails with `io`, and so builds the error classes. */
const brokenHome = freshDir("broken-home")
fs.writeFileSync(path.join(brokenHome, "sessions"), "")
const home = freshDir("home")
fs.mkdirSync(path.join(home, "sessions"))
fs.writeFileSync(
  path.join(home, "sessions", `${sleeper.pid}.json`),
  recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "alpha" })
)
fs.writeFileSync(path.join(home, "sessions", "999999.json"), recordText(999999, { name: "ghost" }))

/** A copy of the install (`bin/` and the bundle), left writable until `seal`. */
const install = () => {
  const dir = freshDir("install")
  fs.mkdirSync(path.join(dir, "bin"))
  fs.mkdirSync(path.join(dir, "dist"))
  for (const file of ["claude-peers.js", "package.json"]) fs.copyFileSync(path.join(root, "bin", file), path.join(dir, "bin", file))
  fs.copyFileSync(bundle, path.join(dir, "dist", "claude-peers.cjs"))
  const seal = () => {
    for (const d of [dir, path.join(dir, "bin"), path.join(dir, "dist")]) fs.chmodSync(d, 0o555)
  }
  return { script: path.join(dir, "bin", "claude-peers.js"), dist: path.join(dir, "dist"), seal }
}

/** Runs the loader as a user would; the cache goes where `env` says, never into `dist/` here. */
const run = (script: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const result = spawnSync(process.execPath, [script, ...args], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", ...env },
    timeout: 30_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const listJson = (env: NodeJS.ProcessEnv, claudeHome = home) => run(bin, ["--claude-home", claudeHome, "list", "--json"], env)

const expectLiveAlpha = (result: ReturnType<typeof run>) => {
  expect(result.stderr).toBe("")
  expect(result.status).toBe(0)
  expect((JSON.parse(result.stdout) as Array<{ pid: number; name: string }>).map((s) => [s.pid, s.name])).toEqual([
    [sleeper.pid, "alpha"]
  ])
}

/** Where a cache would go when the install directory cannot take one: under a regular file. */
const unwritable = () => {
  const file = path.join(freshDir("not-a-dir"), "file")
  fs.writeFileSync(file, "")
  return path.join(file, "cache")
}

describe("the bundled command and its loader", { timeout: 60_000 }, () => {
  it("the bundle exists and carries none of the network or worker code `list` does not use", () => {
    const text = fs.readFileSync(bundle, "utf8")
    for (const unused of ["undici", "node:worker_threads", "WebSocket"]) {
      expect(text.includes(unused), unused).toBe(false)
    }
    // The relay's model endpoint is an HTTP server: only what can send (or load the relay's layer) holds it.
    const { index, section } = readBundle()
    for (const part of ["claude-peers:list", "claude-peers:inspect", "claude-peers:resolve", "claude-peers:policy", "claude-peers:settingsGet"]) {
      expect(part in index, part).toBe(true)
      expect(section(part).includes("node:http"), part).toBe(false)
    }
    expect(section("claude-peers:send").includes("node:http")).toBe(true)
  })

  it("list --json on an empty home prints [] and exits 0, and writes a code cache for the next run", () => {
    const cacheDir = freshDir("cache")
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }, emptyHome)
    expect(result).toEqual({ status: 0, stdout: "[]\n", stderr: "" })
    const cache = path.join(cacheDir, cacheName)
    expect(fs.statSync(cache).size).toBeGreaterThan(1000)
    const written = fs.statSync(cache).mtimeMs
    expect(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }, emptyHome)).toEqual({ status: 0, stdout: "[]\n", stderr: "" })
    // Accepted, so not written again.
    expect(fs.statSync(cache).mtimeMs).toBe(written)
    expect(fs.readdirSync(cacheDir)).toEqual([cacheName])
  })

  it("a cache of garbage is ignored, the output is still right, and the cache is rewritten", () => {
    const cacheDir = freshDir("cache")
    const cache = path.join(cacheDir, cacheName)
    fs.writeFileSync(cache, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)))
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    expect(fs.readFileSync(cache, "latin1").startsWith("claude-peers v8 cache")).toBe(true)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
  })

  it("a cache with the right key but data V8 rejects is ignored and rewritten", () => {
    const cacheDir = freshDir("cache")
    const cache = path.join(cacheDir, cacheName)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    const good = fs.readFileSync(cache)
    // Keep our two header lines (magic and key), corrupt V8's header and what it would deserialize.
    const headerEnd = good.indexOf(10, good.indexOf(10) + 1) + 1
    const corrupt = Buffer.concat([good.subarray(0, headerEnd), Buffer.alloc(good.length - headerEnd, 0x5a)])
    fs.writeFileSync(cache, corrupt)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    expect(fs.readFileSync(cache).equals(corrupt)).toBe(false)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
  })

  it("a run that died compiling with a cache (its marker left behind) makes the next run drop that cache", () => {
    const cacheDir = freshDir("cache")
    const cache = path.join(cacheDir, cacheName)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    // What V8 leaves when a payload damaged behind an intact header aborts the compile: the
    // marker of a process that is gone, beside the cache it was compiling with.
    const good = fs.readFileSync(cache)
    const damaged = Buffer.from(good)
    for (let i = good.length >> 1; i < good.length; i += 97) damaged[i] = damaged[i]! ^ 0x55
    fs.writeFileSync(cache, damaged)
    const gone = spawnSync("true").pid!
    fs.writeFileSync(path.join(cacheDir, `${cacheName}.compiling-${gone}`), "")
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    expect(fs.readdirSync(cacheDir)).toEqual([cacheName])
    expect(fs.readFileSync(cache).equals(damaged)).toBe(false)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
  })

  it("a cache written for another bundle (a stale key) is never used, and is replaced", () => {
    const cacheDir = freshDir("cache")
    const cache = path.join(cacheDir, cacheName)
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    const good = fs.readFileSync(cache, "latin1")
    const [magic, key] = good.split("\n", 2)
    const stale = good.replace(`${magic}\n${key}\n`, `${magic}\n${key!.replace(/^\d+/, "1")}\n`)
    fs.writeFileSync(cache, stale, "latin1")
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
    expect(fs.readFileSync(cache, "latin1").split("\n", 2)[1]).toBe(key)
  })

  describe("a cache written by a run that built the error classes (and effect/Schema)", () => {
    /** The cache's kind, from its header's second line; its size; when it was written. */
    const cacheState = (cacheDir: string) => {
      const file = path.join(cacheDir, cacheName)
      const line = fs.readFileSync(file, "latin1").split("\n", 2)[1]!
      const kind = /^\d/.test(line) ? "final" : line.slice(0, line.search(/ \d/))
      const stats = fs.statSync(file)
      return { kind, size: stats.size, mtimeMs: stats.mtimeMs }
    }
    // A Claude home whose sessions directory is a file: `list` fails and builds the platform's error
    // classes. (A missing sessions directory is an empty registry, built without an error.)
    const failedList = (cacheDir: string) => {
      const result = listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }, brokenHome)
      expect(result.status).toBe(7)
      expect(JSON.parse(result.stdout)).toMatchObject({ error: { reason: "io", platformError: { reason: "BadResource" } } })
    }

    it("is provisional: kept while runs keep building them, made anew after the first run that does not", () => {
      const cacheDir = freshDir("cache")
      failedList(cacheDir)
      const failed = cacheState(cacheDir)
      expect(failed.kind).toBe("provisional")
      failedList(cacheDir)
      expect(cacheState(cacheDir)).toEqual(failed)
      // A run that succeeds uses it, then leaves a note in its place; the next compiles and writes a final one.
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      expect(cacheState(cacheDir).kind).toBe("replace")
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      const succeeded = cacheState(cacheDir)
      expect(succeeded.kind).toBe("final")
      // Without effect/Schema and the error classes (about 115 KB here).
      expect(succeeded.size).toBeLessThan(failed.size - 50_000)
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      failedList(cacheDir)
      expect(cacheState(cacheDir)).toEqual(succeeded)
      expect(fs.readdirSync(cacheDir)).toEqual([cacheName])
    })

    it("runs that alternate between the two paths end with the cache of the runs that succeed", () => {
      const cacheDir = freshDir("cache")
      failedList(cacheDir)
      const failed = cacheState(cacheDir)
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      // A run that fails after the note defers once, leaving the final cache to the next run.
      failedList(cacheDir)
      expect(cacheState(cacheDir).kind).toBe("replace deferred")
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      const succeeded = cacheState(cacheDir)
      expect(succeeded.kind).toBe("final")
      expect(succeeded.size).toBeLessThan(failed.size - 50_000)
      failedList(cacheDir)
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      expect(cacheState(cacheDir)).toEqual(succeeded)
    })

    it("runs that fail again after the note get a final cache of their own on the second", () => {
      const cacheDir = freshDir("cache")
      failedList(cacheDir)
      const failed = cacheState(cacheDir)
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      failedList(cacheDir)
      failedList(cacheDir)
      const cold = cacheState(cacheDir)
      expect(cold.kind).toBe("final")
      // It holds the error classes and effect/Schema, as the failed run's did.
      expect(Math.abs(cold.size - failed.size)).toBeLessThan(20_000)
      failedList(cacheDir)
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir }))
      expect(cacheState(cacheDir)).toEqual(cold)
    })

    it("a refused resolve's cache is provisional too", () => {
      const cacheDir = freshDir("cache")
      const refused = run(bin, ["--claude-home", home, "resolve", "00000000-0000-4000-8000-000000000000", "--json"], {
        CLAUDE_PEERS_CACHE_DIR: cacheDir
      })
      expect(refused.status).toBe(3)
      const line = fs.readFileSync(path.join(cacheDir, "claude-peers.cjs.resolve.v8-cache"), "latin1").split("\n", 2)[1]!
      expect(line.startsWith("provisional ")).toBe(true)
    })
  })

  it("an install directory that cannot take the cache falls back to the user cache directory", () => {
    const xdg = freshDir("xdg")
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: xdg }))
    const name = onlySharedCacheIn(path.join(xdg, "claude-peers"))
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: xdg }))
    expect(onlySharedCacheIn(path.join(xdg, "claude-peers"))).toBe(name)
  })

  it("two installs that share the user cache directory keep a cache each: alternating runs rewrite none, and old variants go", () => {
    const xdg = freshDir("xdg")
    const copies = [install().script, install().script]
    const runIn = (script: string) =>
      expectLiveAlpha(run(script, ["--claude-home", home, "list", "--json"], { CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: xdg }))
    const shared = path.join(xdg, "claude-peers")
    for (const script of copies) runIn(script)
    const names = fs.readdirSync(shared).sort()
    expect(names).toHaveLength(2)
    const written = names.map((name) => fs.statSync(path.join(shared, name)).mtimeMs)
    for (let i = 0; i < 2; i++) for (const script of copies) runIn(script)
    expect(fs.readdirSync(shared).sort()).toEqual(names)
    expect(names.map((name) => fs.statSync(path.join(shared, name)).mtimeMs)).toEqual(written)
    // Eight variants used since (one install under eight sets of flags) leave the two out.
    for (let size = 2; size < 10; size++) {
      expectLiveAlpha(
        run(copies[0]!, ["--claude-home", home, "list", "--json"], {
          CLAUDE_PEERS_CACHE_DIR: unwritable(),
          XDG_CACHE_HOME: xdg,
          NODE_OPTIONS: `--max-semi-space-size=${size}`
        })
      )
    }
    const left = fs.readdirSync(shared)
    expect(left).toHaveLength(8)
    expect(left.filter((name) => names.includes(name))).toEqual([])
  })

  it("an install and a user cache directory that cannot take the cache fall back to this user's temporary directory", () => {
    const temporary = freshDir("tmp")
    const env = { CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: unwritable(), TMPDIR: temporary }
    expectLiveAlpha(listJson(env))
    const own = path.join(temporary, `claude-peers-${process.getuid!()}`)
    expect(fs.statSync(own).mode & 0o777).toBe(0o700)
    const name = onlySharedCacheIn(own)
    const written = fs.statSync(path.join(own, name)).mtimeMs
    expectLiveAlpha(listJson(env))
    expect(fs.statSync(path.join(own, name)).mtimeMs).toBe(written)
  })

  it("with nowhere to write a cache, the command still runs, leaving no temporary file", () => {
    const nowhere = unwritable()
    const alsoNowhere = unwritable()
    const norHere = unwritable()
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: nowhere, XDG_CACHE_HOME: alsoNowhere, TMPDIR: norHere }))
    expect(fs.readdirSync(path.dirname(path.dirname(nowhere)))).toEqual(["file"])
    expect(fs.readdirSync(path.dirname(path.dirname(alsoNowhere)))).toEqual(["file"])
    expect(fs.readdirSync(path.dirname(path.dirname(norHere)))).toEqual(["file"])
  })

  it("the direct `list` path and the full command line answer alike, failures included", () => {
    const cacheDir = freshDir("cache")
    const env = { CLAUDE_PEERS_CACHE_DIR: cacheDir }
    // A final `--` is not a spelling the direct path takes: it goes through @effect/cli.
    const direct = run(bin, ["--claude-home", home, "list", "--json"], env)
    const parsed = run(bin, [`--claude-home=${home}`, "list", "--json", "--"], env)
    expect(parsed).toEqual(direct)
    expect(run(bin, [`--claude-home=${home}`, "list", "--"], env)).toEqual(run(bin, ["--claude-home", home, "list"], env))
    // A registry path that is a file: the same `io` failure, reason and exit code, both ways.
    const fileHome = freshDir("file-home")
    fs.writeFileSync(path.join(fileHome, "sessions"), "")
    const directFailure = run(bin, ["--claude-home", fileHome, "list", "--json"], env)
    expect(directFailure.status).toBe(7)
    expect(JSON.parse(directFailure.stdout)).toMatchObject({ error: { reason: "io" } })
    expect(run(bin, [`--claude-home=${fileHome}`, "list", "--json", "--"], env)).toEqual(directFailure)
    // Anything else goes to the parser, which owns usage errors.
    expect(run(bin, ["--claude-home", home, "list", "--bogus"], env).status).toBe(2)
    // Each path keeps its own cache, so that `list`'s holds nothing of the parser.
    expect(fs.readdirSync(cacheDir).sort()).toEqual(["claude-peers.cjs.command-line.v8-cache", cacheName])
  })

  it("a `list` that succeeds never initializes effect/Schema; a failure builds it and prints its evidence", () => {
    // Schema's module registers its caches in effect's global store when it is initialized: at exit,
    // the store's keys tell whether this run did.
    const hook = path.join(freshDir("hook"), "schema-keys.cjs")
    fs.writeFileSync(
      hook,
      `process.on("exit", () => {
        const store = globalThis["effect/GlobalValue"]
        const keys = store === undefined ? [] : [...store.keys()].map(String).filter((key) => /effect\\/(Schema|ParseResult)/.test(key))
        require("node:fs").writeSync(2, "schema keys: " + JSON.stringify(keys) + "\\n")
      })\n`
    )
    const withHook = (args: ReadonlyArray<string>) => {
      const result = spawnSync(process.execPath, ["-r", hook, bin, ...args], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: freshDir("cache") },
        timeout: 30_000
      })
      const keys = JSON.parse(/schema keys: (.*)\n/.exec(result.stderr)?.[1] ?? "null") as Array<string> | null
      return { status: result.status, stdout: result.stdout, keys }
    }
    const listed = withHook(["--claude-home", home, "list", "--json"])
    expect(listed.status).toBe(0)
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((s) => s.name)).toEqual(["alpha"])
    expect(listed.keys).toEqual([])
    // A refusal encodes its error with the error's schema: built then, on first use.
    const refused = withHook(["--claude-home", home, "resolve", "--name", "ghost", "--json"])
    expect(refused.status).toBe(3)
    expect(JSON.parse(refused.stdout)).toMatchObject({
      error: { reason: "not_live", reasons: [{ file: path.join(home, "sessions", "999999.json"), verdict: "dead" }] }
    })
    expect(refused.keys).toContain("effect/Schema/astCache")
  })

  it("what each recognized command's successful run initializes: its own part only, and no effect/Schema", () => {
    // Pinned so that an idiomatic change that puts more into a command's start-up is seen here, not
    // weeks later in a bench: Schema's module registers its caches in effect's global store when it is
    // initialized, and the cache directory names every part a run compiled.
    const hook = path.join(freshDir("hook"), "schema-keys.cjs")
    fs.writeFileSync(
      hook,
      `process.on("exit", () => {
        const store = globalThis["effect/GlobalValue"]
        const keys = store === undefined ? [] : [...store.keys()].map(String).filter((key) => /effect\\/(Schema|ParseResult)/.test(key))
        require("node:fs").writeSync(2, "schema: " + (keys.length > 0) + "\\n")
      })\n`
    )
    const settingsHome = freshDir("settings-home")
    fs.writeFileSync(path.join(settingsHome, "settings.json"), "{}\n")
    const alpha = JSON.parse(fs.readFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), "utf8")) as { sessionId: string }
    const pinned: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--claude-home", home, "list", "--json"], "list"],
      [["--claude-home", home, "resolve", alpha.sessionId, "--json"], "resolve"],
      [["--claude-home", home, "resolve", "--name", "alpha", "--json"], "resolve"],
      [["--claude-home", settingsHome, "settings", "get", "--json"], "settingsGet"],
      // A settings file nobody wrote yet is an answer, not a failure built and caught.
      [["--claude-home", freshDir("no-settings-home"), "settings", "get", "--json"], "settingsGet"],
      [["--claude-home", settingsHome, "settings", "set", "hold", "--json"], "settingsSet"],
      [["--claude-home", settingsHome, "settings", "reset", "--json"], "settingsReset"],
      // A policy is printed as a projection of its schema (`sessionPolicyJson`), as a session is.
      [["--claude-home", home, "policy", "--json"], "policy"],
      // So is an entry (`inspectRow`): its sentences need no schema (`VerdictWords`).
      [["--claude-home", home, "inspect", "--json"], "inspect"]
    ]
    for (const [args, part] of pinned) {
      const cacheDir = freshDir("cache")
      const result = spawnSync(process.execPath, ["-r", hook, bin, ...args], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home", CLAUDE_PEERS_CACHE_DIR: cacheDir },
        timeout: 30_000
      })
      expect(result.status, `${args.join(" ")}: ${result.stderr}`).toBe(0)
      expect(result.stderr, args.join(" ")).toBe("schema: false\n")
      // (The hook is a Node flag: the cache's name carries its set of flags.)
      const caches = fs.readdirSync(cacheDir)
      expect(caches, args.join(" ")).toHaveLength(1)
      expect(caches[0], args.join(" ")).toMatch(new RegExp(`^claude-peers\\.cjs\\.${part}\\.[a-z0-9]+\\.v8-cache$`))
    }
  })

  it("under a frozen Error (node --frozen-intrinsics) the commands answer as usual", () => {
    // Neither Error.prepareStackTrace nor Error.stackTraceLimit can be set there: the start-up
    // probe asks Effect's question of a formatted stack, and dead pids are checked with stacks on.
    const env = { CLAUDE_PEERS_CACHE_DIR: freshDir("cache"), NODE_OPTIONS: "--frozen-intrinsics", NODE_NO_WARNINGS: "1" }
    const frozen = spawnSync(process.execPath, ["-e", `"use strict"; try { Error.stackTraceLimit = 0 } catch { process.exit(7) }`], {
      env: { PATH: process.env.PATH, ...env }
    })
    expect(frozen.status).toBe(7)
    expectLiveAlpha(listJson(env))
    const inspected = run(bin, ["--claude-home", home, "inspect", "--json"], env)
    expect(inspected.status).toBe(0)
    const verdicts = (JSON.parse(inspected.stdout) as Array<{ pid: number; verdict: string }>).map((e) => [e.pid, e.verdict])
    expect(verdicts).toContainEqual([sleeper.pid, "live"])
    expect(verdicts).toContainEqual([999999, "dead"])
    const refused = run(bin, ["--claude-home", home, "resolve", "00000000-0000-4000-8000-000000000000", "--json"], env)
    expect(refused.status).toBe(3)
    expect((JSON.parse(refused.stdout) as { error: { reason: string } }).error.reason).toBe("not_live")
  })

  it("without WebAssembly (node --jitless) there is no checksum, so no cache is read or written, and the commands answer", () => {
    const cacheDir = freshDir("cache")
    const env = { CLAUDE_PEERS_CACHE_DIR: cacheDir, NODE_OPTIONS: "--jitless", CLAUDE_PEERS_DEBUG_CACHE: "1" }
    for (let i = 0; i < 2; i++) {
      const result = listJson(env)
      expect(result.status).toBe(0)
      expect((JSON.parse(result.stdout) as Array<{ pid: number }>).map((s) => s.pid)).toEqual([sleeper.pid])
      expect(result.stderr).toContain("no WebAssembly to check caches with")
    }
    expect(fs.readdirSync(cacheDir).filter((name) => name.endsWith(".v8-cache"))).toEqual([])
  })

  it("each recognized command runs its own part with its own cache, so none inherits another's", () => {
    const cacheDir = freshDir("cache")
    const env = { CLAUDE_PEERS_CACHE_DIR: cacheDir }
    expectLiveAlpha(run(bin, ["--claude-home", home, "list", "--json"], env))
    const resolved = run(bin, ["--claude-home", home, "resolve", "--name", "alpha", "--json"], env)
    expect(JSON.parse(resolved.stdout)).toMatchObject({ pid: sleeper.pid, name: "alpha" })
    expect(run(bin, ["--claude-home", emptyHome, "settings", "get", "--json"], env).status).toBe(0)
    expect(fs.readdirSync(cacheDir).sort()).toEqual([cacheName, "claude-peers.cjs.resolve.v8-cache", "claude-peers.cjs.settingsGet.v8-cache"])
    // The bundle holds the parts it names, and `list`'s holds none of the settings' code.
    const { index, section } = readBundle()
    expect(Object.keys(index)).toEqual(expect.arrayContaining(["entry", "claude-peers:list", "claude-peers:resolve", "claude-peers:command-line"]))
    expect(section("claude-peers:list").includes("crossSessionInbound")).toBe(false)
    // The settings document's code (jsonc-parser, whose module builds about 1,200 strings as it
    // loads) is for the parts that may edit it: `policy` and `send` read settings files without it.
    for (const part of ["claude-peers:policy", "claude-peers:send"]) expect(section(part).includes("UnexpectedEndOfComment"), part).toBe(false)
    expect(section("claude-peers:settingsSet").includes("UnexpectedEndOfComment")).toBe(true)
  })

  it("only `watch` and the full command line carry the directory watch, and both watch", async () => {
    // The parts without it rely on the Watch service being the port's only caller of `watch` (the
    // command's `Handlers.watch` is the handler, not the port).
    const callers = (dir: string): Array<string> =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) return callers(file)
        return entry.name.endsWith(".ts") && /(?<!Handlers)\.watch\(/.test(fs.readFileSync(file, "utf8")) ? [path.relative(root, file)] : []
      })
    // (src/testing holds the ports' conformance suites, which no part of the command carries.)
    expect(callers(path.join(root, "src")).filter((file) => !file.startsWith("src/testing/")).sort()).toEqual([
      "src/layers/FilesNodeWatch.ts",
      "src/services/Watch.ts"
    ])
    expect(callers(path.join(root, "command", "src"))).toEqual(["command/src/FilesNodeWatchOnFirstUse.ts"])
    // Every other part has the port's watch left out, and with it Stream's channel machinery.
    const { index, section } = readBundle()
    const channels = "Symbol.for(\"effect/ChannelState\")"
    const parts = Object.keys(index).filter((id) => id !== "entry")
    expect(parts).toEqual(expect.arrayContaining(["claude-peers:list", "claude-peers:watch", "claude-peers:command-line"]))
    for (const id of parts) {
      expect(section(id).includes(channels), id).toBe(id === "claude-peers:watch" || id === "claude-peers:command-line")
    }
    expect(() => watchNone("/some/dir")).toThrow(/cannot watch \/some\/dir: only `watch` and the full command line can/)
    // `watch --json` runs the `watch` part; `--json watch` is not a recognized spelling, so the full
    // command line runs it. Each sees a change.
    for (const args of [["watch", "--json"], ["--json", "watch"]]) {
      const watched = freshDir("watched")
      fs.mkdirSync(path.join(watched, "sessions"))
      const record = path.join(watched, "sessions", `${sleeper.pid}.json`)
      fs.writeFileSync(record, recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "alpha", status: "idle" }))
      const cli = startCli(["--claude-home", watched, ...args], bin, { CLAUDE_PEERS_CACHE_DIR: freshDir("cache") })
      const lines = () => cli.stdout().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { type: string })
      const line = (count: number) => waitUntil(`line ${count} of ${args.join(" ")}`, 20_000, () => lines()[count - 1])
      try {
        await line(1)
        fs.writeFileSync(record, recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "alpha", status: "busy" }))
        await line(2)
      } finally {
        cli.child.kill("SIGTERM")
      }
      expect([args.join(" "), await cli.exited, cli.stderr()]).toEqual([args.join(" "), 0, ""])
      expect(lines().map((line) => line.type)).toEqual(["appeared", "changed"])
    }
  })

  it("both parts that watch follow a re-pointed home link at the interval, not at the periodic full read", async () => {
    // The port's watch looks at its path every interval (`recheckEvery`); the full read comes only
    // every 30 intervals (60 s here), so a watch that missed the re-pointing would wait past the limit.
    const other = startSleeper()
    for (const args of [["watch", "--json", "--interval", "2000"], ["--json", "watch", "--interval", "2000"]]) {
      const [first, second] = [freshDir("first"), freshDir("second")]
      for (const [home, name, pid] of [[first, "alpha", sleeper.pid], [second, "beta", other.pid]] as const) {
        fs.mkdirSync(path.join(home, "sessions"))
        const text = recordText(pid, { procStart: startTimeOf(pid), name, sessionId: `sess-${name}` })
        fs.writeFileSync(path.join(home, "sessions", `${pid}.json`), text)
      }
      const link = path.join(freshDir("link"), "claude")
      fs.symlinkSync(first, link)
      const cli = startCli(["--claude-home", link, ...args], bin, { CLAUDE_PEERS_CACHE_DIR: freshDir("cache") })
      type Line = { type: string; session: { name: string }; verdict?: string }
      const lines = () => cli.stdout().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line)
      const line = (count: number) => waitUntil(`line ${count} of ${args.join(" ")}`, 30_000, () => lines()[count - 1])
      try {
        await line(1)
        // The watch's first whole read after its directory watch is in place comes 75 ms after it
        // starts, and would see the new target by itself: the link is re-pointed well after that.
        await new Promise((resolve) => setTimeout(resolve, 1000))
        fs.rmSync(link)
        fs.symlinkSync(second, link)
        await line(3)
      } finally {
        cli.child.kill("SIGTERM")
      }
      expect([args.join(" "), await cli.exited, cli.stderr()]).toEqual([args.join(" "), 0, ""])
      const told = lines().map((l) => `${l.type} ${l.session.name}${l.verdict === undefined ? "" : ` ${l.verdict}`}`)
      // One read's events come sorted by pid, and the two sessions' pids are the OS's to choose.
      expect([told[0], ...told.slice(1).sort()]).toEqual(["appeared alpha", "appeared beta", "gone alpha removed"])
    }
    await killAndReap(other)
  }, 90_000)

  it("runs under other Node flags keep caches of their own: alternating NODE_OPTIONS rewrites none", () => {
    const cacheDir = freshDir("cache")
    const plain = { CLAUDE_PEERS_CACHE_DIR: cacheDir }
    const flagged = { CLAUDE_PEERS_CACHE_DIR: cacheDir, NODE_OPTIONS: "--max-semi-space-size=2" }
    expectLiveAlpha(listJson(plain))
    expectLiveAlpha(listJson(flagged))
    const caches = fs.readdirSync(cacheDir).sort()
    expect(caches).toHaveLength(2)
    expect(caches).toContain(cacheName)
    const written = caches.map((name) => fs.statSync(path.join(cacheDir, name)).mtimeMs)
    for (let i = 0; i < 2; i++) {
      expectLiveAlpha(listJson(plain))
      expectLiveAlpha(listJson(flagged))
    }
    expect(fs.readdirSync(cacheDir).sort()).toEqual(caches)
    expect(caches.map((name) => fs.statSync(path.join(cacheDir, name)).mtimeMs)).toEqual(written)
  })

  it("a part keeps the caches of the eight flag sets used last besides its plain one, and no other part's", () => {
    const cacheDir = freshDir("cache")
    const runList = (options?: string) =>
      expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: cacheDir, ...(options === undefined ? {} : { NODE_OPTIONS: options }) }))
    const listCaches = () => fs.readdirSync(cacheDir).filter((name) => name.startsWith("claude-peers.cjs.list.") && name.endsWith(".v8-cache")).sort()
    const hoursAgo = (name: string, hours: number) => {
      const then = new Date(Date.now() - hours * 3_600_000)
      fs.utimesSync(path.join(cacheDir, name), then, then)
    }
    runList()
    // Another part's cache under flags, older than every list cache below: never list's to remove.
    expect(run(bin, ["--claude-home", home, "settings", "get", "--json"], { CLAUDE_PEERS_CACHE_DIR: cacheDir, NODE_OPTIONS: "--max-semi-space-size=2" }).status)
      .toBe(0)
    const otherPart = fs.readdirSync(cacheDir).filter((name) => name.startsWith("claude-peers.cjs.settingsGet."))
    expect(otherPart).toHaveLength(1)
    hoursAgo(otherPart[0]!, 5)
    const sets = Array.from({ length: 12 }, (_, i) => `--max-semi-space-size=${i + 2}`)
    const named: Array<string> = []
    const runNew = (options: string) => {
      const before = new Set(listCaches())
      runList(options)
      named.push(...listCaches().filter((name) => !before.has(name)))
    }
    for (const options of sets.slice(0, 10)) runNew(options)
    // Each set made its own cache; the two made first are gone.
    expect(named).toHaveLength(10)
    expect(listCaches()).toEqual([cacheName, ...named.slice(2)].sort())
    // A set used again renews its cache: of two caches left unused for hours, the one used now stays.
    hoursAgo(named[3]!, 3)
    hoursAgo(named[2]!, 2)
    runList(sets[3])
    runNew(sets[10]!)
    expect(listCaches()).toEqual([cacheName, ...named.slice(3)].sort())
    // A removed set comes back with a cache of its own, in place of the one used longest ago.
    hoursAgo(named[4]!, 4)
    runNew(sets[0]!)
    expect(listCaches()).toEqual([cacheName, named[3]!, ...named.slice(5)].sort())
    expect(fs.readdirSync(cacheDir).filter((name) => name.startsWith("claude-peers.cjs.settingsGet."))).toEqual(otherPart)
  })

  describe("a read-only install, run by an unprivileged user with HOME unset", () => {
    const canSwitchUser = process.getuid?.() === 0 && fs.existsSync("/usr/bin/setpriv")
    const nobody = 65534

    /** A system temporary directory of the test's own, writable by everyone as `/tmp` is. */
    const systemTemporary = () => {
      const dir = freshDir("tmp")
      fs.chmodSync(dir, 0o1777)
      return dir
    }

    const runAs = (
      [user, group]: readonly [string, string],
      script: string,
      temporary: string,
      args: ReadonlyArray<string> = ["--claude-home", home, "list", "--json"],
      env: NodeJS.ProcessEnv = {}
    ) => {
      const result = spawnSync(
        "/usr/bin/setpriv",
        [`--reuid=${user}`, `--regid=${group}`, "--clear-groups", "--", process.execPath, script, ...args],
        { encoding: "utf8", env: { PATH: process.env.PATH, TMPDIR: temporary, ...env }, timeout: 30_000 }
      )
      return { status: result.status, stdout: result.stdout, stderr: result.stderr }
    }
    const runAsNobody = (script: string, temporary: string) => runAs(["nobody", "nogroup"], script, temporary)

    it.skipIf(!canSwitchUser)("caches in a directory of its own in the temporary directory, and uses it from the next run on", () => {
      const { script, seal } = install()
      seal()
      const temporary = systemTemporary()
      expectLiveAlpha(runAsNobody(script, temporary))
      const own = path.join(temporary, `claude-peers-${nobody}`)
      const stats = fs.statSync(own)
      expect([stats.uid, stats.mode & 0o777]).toEqual([nobody, 0o700])
      const name = onlySharedCacheIn(own)
      const written = fs.statSync(path.join(own, name)).mtimeMs
      expectLiveAlpha(runAsNobody(script, temporary))
      expectLiveAlpha(runAsNobody(script, temporary))
      expect(onlySharedCacheIn(own)).toBe(name)
      expect(fs.statSync(path.join(own, name)).mtimeMs).toBe(written)
    })

    it.skipIf(!canSwitchUser)("uses a valid cache the install holds, writing none of its own", () => {
      const { dist, script, seal } = install()
      expectLiveAlpha(run(script, ["--claude-home", home, "list", "--json"], {}))
      seal()
      const installed = fs.readFileSync(path.join(dist, cacheName))
      const temporary = systemTemporary()
      expectLiveAlpha(runAsNobody(script, temporary))
      expectLiveAlpha(runAsNobody(script, temporary))
      // Its own directory holds this run's markers while it compiles, and nothing after.
      expect(fs.readdirSync(path.join(temporary, `claude-peers-${nobody}`))).toEqual([])
      expect(fs.readFileSync(path.join(dist, cacheName)).equals(installed)).toBe(true)
    })

    it.skipIf(!canSwitchUser)("a provisional cache the install holds gives way to one of its own after a run that succeeds", () => {
      const { dist, script, seal } = install()
      // A run that fails builds the error classes: its cache is provisional.
      expect(run(script, ["--claude-home", brokenHome, "list", "--json"], {}).status).toBe(7)
      const installed = fs.readFileSync(path.join(dist, cacheName))
      expect(installed.toString("latin1").split("\n", 2)[1]!.startsWith("provisional ")).toBe(true)
      seal()
      const temporary = systemTemporary()
      const ownDirectory = path.join(temporary, `claude-peers-${nobody}`)
      expectLiveAlpha(runAsNobody(script, temporary))
      // Beside the note that keeps the install's provisional cache out.
      const names = fs.readdirSync(ownDirectory).filter((name) => sharedCacheName.test(name))
      expect(names).toHaveLength(1)
      const own = path.join(ownDirectory, names[0]!)
      const kind = () => fs.readFileSync(own, "latin1").split("\n", 2)[1]!.split(" ", 1)[0]
      expect(kind()).toBe("replace")
      expectLiveAlpha(runAsNobody(script, temporary))
      // A final cache of its own: the key's first field is the bundle's size.
      expect(kind()).toMatch(/^\d+:/)
      const written = fs.statSync(own).mtimeMs
      expectLiveAlpha(runAsNobody(script, temporary))
      expect(fs.statSync(own).mtimeMs).toBe(written)
      expect(fs.readFileSync(path.join(dist, cacheName)).equals(installed)).toBe(true)
    })

    // A container run under an arbitrary uid: HOME unset, and no home in the password database
    // (os.homedir() throws).
    const unknownUid = 54321
    const uidIsUnknown = canSwitchUser && spawnSync("getent", ["passwd", String(unknownUid)]).status === 2

    it.skipIf(!uidIsUnknown)("as a uid the system knows no home for: caches in the temporary directory, and asks for a home only when it needs one", () => {
      const { script, seal } = install()
      seal()
      const temporary = systemTemporary()
      const unknown = [String(unknownUid), String(unknownUid)] as const
      expectLiveAlpha(runAs(unknown, script, temporary))
      onlySharedCacheIn(path.join(temporary, `claude-peers-${unknownUid}`))
      expectLiveAlpha(runAs(unknown, script, temporary, ["list", "--json"], { CLAUDE_CONFIG_DIR: home }))
      // Nothing names a home: an io failure that says what to name, not a crash.
      const refused = runAs(unknown, script, temporary, ["list", "--json"])
      expect(refused.status).toBe(7)
      const error = (JSON.parse(refused.stdout) as { error: { reason: string; message: string } }).error
      expect(error.reason).toBe("io")
      expect(error.message).toContain("--claude-home DIR or CLAUDE_CONFIG_DIR")
      const human = runAs(unknown, script, temporary, ["settings", "get"])
      expect([human.status, human.stdout]).toEqual([7, ""])
      expect(human.stderr).toMatch(/^claude-peers: .*home directory cannot be found.*\n$/)
    })

    it.skipIf(!canSwitchUser)("does not use a directory of that name that another user made", () => {
      const { script, seal } = install()
      seal()
      const temporary = systemTemporary()
      const planted = path.join(temporary, `claude-peers-${nobody}`)
      fs.mkdirSync(planted)
      fs.chmodSync(planted, 0o777)
      expectLiveAlpha(runAsNobody(script, temporary))
      expectLiveAlpha(runAsNobody(script, temporary))
      expect(fs.readdirSync(planted)).toEqual([])
    })
  })

  it("without the bundle (a checkout before the build), the loader says to build it and exits 1", () => {
    const install = freshDir("install")
    fs.mkdirSync(path.join(install, "bin"))
    fs.copyFileSync(bin, path.join(install, "bin", "claude-peers.js"))
    fs.copyFileSync(path.join(root, "bin", "package.json"), path.join(install, "bin", "package.json"))
    fs.mkdirSync(path.join(install, "dist"))
    for (const entry of fs.readdirSync(path.join(root, "dist"))) {
      if (!entry.startsWith("claude-peers.cjs")) fs.symlinkSync(path.join(root, "dist", entry), path.join(install, "dist", entry))
    }
    const result = run(path.join(install, "bin", "claude-peers.js"), ["--claude-home", home, "list", "--json"], {})
    expect(result.status).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe(`claude-peers: ${path.join(install, "dist", "claude-peers.cjs")} is missing: run \`npm run build\` in ${install}\n`)
  })
})
