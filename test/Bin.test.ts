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
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const root = path.resolve(import.meta.dirname, "..")
const bin = path.join(root, "bin", "claude-peers.js")
const bundle = path.join(root, "dist", "claude-peers.cjs")
/** The cache of the bundle's `list` part, the one `list` runs. */
const cacheName = "claude-peers.cjs.direct.v8-cache"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-bin-"))
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
const home = freshDir("home")
fs.mkdirSync(path.join(home, "sessions"))
fs.writeFileSync(
  path.join(home, "sessions", `${sleeper.pid}.json`),
  recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "alpha" })
)
fs.writeFileSync(path.join(home, "sessions", "999999.json"), recordText(999999, { name: "ghost" }))

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
    for (const unused of ["undici", "node:worker_threads", "WebSocket", "node:http"]) {
      expect(text.includes(unused), unused).toBe(false)
    }
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

  it("an install directory that cannot take the cache falls back to the user cache directory", () => {
    const xdg = freshDir("xdg")
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: xdg }))
    expect(fs.readdirSync(path.join(xdg, "claude-peers"))).toEqual([cacheName])
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: unwritable(), XDG_CACHE_HOME: xdg }))
  })

  it("with nowhere to write a cache, the command still runs, leaving no temporary file", () => {
    const nowhere = unwritable()
    const alsoNowhere = unwritable()
    expectLiveAlpha(listJson({ CLAUDE_PEERS_CACHE_DIR: nowhere, XDG_CACHE_HOME: alsoNowhere }))
    expect(fs.readdirSync(path.dirname(path.dirname(nowhere)))).toEqual(["file"])
    expect(fs.readdirSync(path.dirname(path.dirname(alsoNowhere)))).toEqual(["file"])
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

  it("without the bundle (a checkout before the build), the loader runs the tsc output", () => {
    const install = freshDir("install")
    fs.mkdirSync(path.join(install, "bin"))
    fs.copyFileSync(bin, path.join(install, "bin", "claude-peers.js"))
    fs.copyFileSync(path.join(root, "bin", "package.json"), path.join(install, "bin", "package.json"))
    fs.mkdirSync(path.join(install, "dist"))
    for (const entry of fs.readdirSync(path.join(root, "dist"))) {
      if (!entry.startsWith("claude-peers.cjs")) fs.symlinkSync(path.join(root, "dist", entry), path.join(install, "dist", entry))
    }
    const result = run(path.join(install, "bin", "claude-peers.js"), ["--claude-home", home, "list", "--json"], {})
    expectLiveAlpha(result)
    expect(fs.readdirSync(path.join(install, "dist")).some((entry) => entry.startsWith("claude-peers.cjs"))).toBe(false)
  })
})
