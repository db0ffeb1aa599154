/**
 * The loader's code cache against another user and against damage (issue 26, HIGH 1 and MEDIUM 6).
 * V8 checks a cache only against the source's length, the flags and its version, so a cache
 * compiled from other text of the same length runs instead of the bundle. Each attack below plants
 * such a forged cache, complete with the right key and checksum; the control shows that the forgery
 * runs when it sits where the loader trusts it, and each case that the loader then refuses it (and
 * answers as the bundle does). Cases that need a second user (chown) run only as root.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { checksumOf } from "../command/cache-checksum.mjs"
import { startCli, waitUntil } from "./support/cli.js"
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const root = path.resolve(import.meta.dirname, "..")
const bin = path.join(root, "bin", "claude-peers.js")
const bundle = path.join(root, "dist", "claude-peers.cjs")
const cacheName = "claude-peers.cjs.list.v8-cache"
const isRoot = process.getuid?.() === 0
const nobody = 65534

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-cache-security-"))
fs.chmodSync(tmp, 0o755)
const sleeper = startSleeper()
afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(tmp, { recursive: true, force: true })
})

let dirs = 0
const freshDir = (name: string, parent = tmp) => {
  const dir = path.join(parent, `${name}-${dirs++}`)
  fs.mkdirSync(dir, { recursive: true })
  fs.chmodSync(dir, 0o755)
  return dir
}

const home = freshDir("home")
fs.mkdirSync(path.join(home, "sessions"))
fs.writeFileSync(path.join(home, "sessions", `${sleeper.pid}.json`), recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), name: "alpha" }))

/** Runs `list --json` through the loader; its fallback cache directories are fresh ones of the test's. */
const listJson = (env: NodeJS.ProcessEnv, cwd = root) => {
  const result = spawnSync(process.execPath, [bin, "--claude-home", home, "list", "--json"], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home", TMPDIR: freshDir("fallback"), ...env },
    timeout: 30_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

const alpha = () => JSON.stringify([[sleeper.pid, "alpha"]])
const answer = (result: ReturnType<typeof listJson>) => {
  try {
    return JSON.stringify((JSON.parse(result.stdout) as Array<{ pid: number; name: string }>).map((s) => [s.pid, s.name]))
  } catch {
    return result.stdout
  }
}

const forgedLine = `[{"pid":1,"name":"forged"}]`

/** The key a cache of a bundle must carry (see `openBundle` in the loader), for runs without flags. */
const bundleKey = (file = bundle) => {
  const s = fs.statSync(file, { bigint: true })
  return `${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.ino}:${s.dev}:${process.version}:${process.arch}:`
}

const header = (key: string, digest: string) => {
  const text = `claude-peers v8 cache 7\n${key}\n${digest}`
  return Buffer.from(`${text.padEnd(Math.ceil((text.length + 1) / 16) * 16 - 1, " ")}\n`, "latin1")
}

/**
 * What an attacker plants: a cache compiled from a script of the `list` part's length that prints a
 * forged session, under the bundle's key and with the right checksum. Compiled by a plain `node`,
 * as the loader's runs are.
 */
const forgedCache = (() => {
  let data: Buffer | undefined
  return (bundleFile = bundle) => {
    if (data !== undefined) return Buffer.concat([header(bundleKey(bundleFile), checksumOf(data)), data])
    const text = fs.readFileSync(bundle, "latin1")
    const index = JSON.parse(text.split("\n")[1]!.slice(3)) as Record<string, [number, number, number]>
    const [start, end] = index["claude-peers:list"]!
    // No function inside the wrapper: V8 would compile it lazily from the real text.
    const script = `(function (exports, require, module) { require("node:fs").writeSync(1, ${
      JSON.stringify(`${forgedLine}\n`)
    }); module.exports = { main: Promise.resolve.bind(Promise) } })`
    const source = script.padEnd(end - start, " ")
    const compiled = spawnSync(
      process.execPath,
      ["-e", `process.stdout.write(new (require("node:vm").Script)(require("node:fs").readFileSync(0, "latin1")).createCachedData())`],
      { input: Buffer.from(source, "latin1"), env: { PATH: process.env.PATH }, maxBuffer: 64 * 1024 * 1024 }
    )
    data = compiled.stdout
    return Buffer.concat([header(bundleKey(bundleFile), checksumOf(data)), data])
  }
})()

const plant = (directory: string, mode = 0o644, bundleFile = bundle) => {
  const file = path.join(directory, cacheName)
  fs.writeFileSync(file, forgedCache(bundleFile), { mode })
  fs.chmodSync(file, mode)
  return file
}

/** Says why a cache was not used. */
const debug = { CLAUDE_PEERS_DEBUG_CACHE: "1" }

describe("a code cache only its user can have written", { timeout: 120_000 }, () => {
  it("control: a forged cache where the loader trusts it runs instead of the bundle (what every case below must prevent)", () => {
    const dir = freshDir("trusted")
    plant(dir)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(JSON.stringify([[1, "forged"]]))
  })

  it.skipIf(!isRoot)("a cache another user wrote is not used, and the command answers as the bundle does", () => {
    const dir = freshDir("foreign-file")
    fs.chownSync(plant(dir), nobody, nobody)
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir, ...debug })
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain("owned by uid 65534")
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
  })

  it("a cache that others can write is not used", () => {
    const dir = freshDir("writable-file")
    plant(dir, 0o666)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
  })

  for (const [what, mode] of [["group-writable", 0o775], ["world-writable", 0o777], ["sticky world-writable", 0o1777]] as const) {
    it(`a cache in a ${what} directory is not used, nor is the directory written`, () => {
      const dir = freshDir(what.replace(/ /g, "-"))
      const file = plant(dir)
      fs.chmodSync(dir, mode)
      const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir, ...debug })
      expect(answer(result)).toBe(alpha())
      expect(result.stderr).toContain("writable by others")
      expect(fs.readFileSync(file).equals(forgedCache())).toBe(true)
    })
  }

  it("a cache in a directory under one that others can write is not used", () => {
    const open = freshDir("open-parent")
    fs.chmodSync(open, 0o777)
    const dir = freshDir("cache", open)
    plant(dir)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
  })

  it.skipIf(!isRoot)("a cache in a directory another user owns, or under one, is not used", () => {
    const theirs = freshDir("their-dir")
    plant(theirs)
    fs.chownSync(theirs, nobody, nobody)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: theirs }))).toBe(alpha())
    const parent = freshDir("their-parent")
    const dir = freshDir("cache", parent)
    plant(dir)
    fs.chownSync(parent, nobody, nobody)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
  })

  it("a cache reached through a symlink is not used: neither a linked file nor a linked directory others can write", () => {
    const elsewhere = freshDir("elsewhere")
    const forged = plant(elsewhere)
    const dir = freshDir("linked-file")
    fs.symlinkSync(forged, path.join(dir, cacheName))
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir, ...debug })
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain("ELOOP")
    const open = freshDir("open-target")
    plant(open)
    fs.chmodSync(open, 0o777)
    const link = path.join(freshDir("link-holder"), "cache")
    fs.symlinkSync(open, link)
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: link }))).toBe(alpha())
  })

  it("a relative cache directory is refused", () => {
    const cwd = freshDir("cwd")
    const relative = path.basename(freshDir("relative", cwd))
    plant(path.join(cwd, relative))
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: relative, ...debug }, cwd)
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain("relative cache directory")
  })

  it("a FIFO at the cache path does not hang the command", () => {
    const dir = freshDir("fifo")
    expect(spawnSync("mkfifo", [path.join(dir, cacheName)]).status).toBe(0)
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir, ...debug })
    expect(result.status).toBe(0)
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain("not a regular file")
  })
})

describe("the cache beside the bundle", { timeout: 120_000 }, () => {
  /** A copy of the install (loader and bundle) in a fresh directory under `parent`, and a run of its `list --json`. */
  const copyInstall = (parent = tmp) => {
    const install = freshDir("install", parent)
    for (const d of ["bin", "dist"]) fs.mkdirSync(path.join(install, d), { mode: 0o755 })
    for (const f of ["claude-peers.js", "package.json"]) fs.copyFileSync(path.join(root, "bin", f), path.join(install, "bin", f))
    const dist = path.join(install, "dist")
    const bundleFile = path.join(dist, "claude-peers.cjs")
    fs.copyFileSync(bundle, bundleFile)
    const run = (env: NodeJS.ProcessEnv = {}) => {
      const result = spawnSync(process.execPath, [path.join(install, "bin", "claude-peers.js"), "--claude-home", home, "list", "--json"], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home", TMPDIR: freshDir("fallback"), ...env },
        timeout: 30_000
      })
      return { status: result.status, stdout: result.stdout, stderr: result.stderr }
    }
    return { dist, bundleFile, run }
  }

  it("control: runs where only this user can write the bundle's directory, whoever can write the ones above it", () => {
    // Above the bundle's directory nothing is walked: whoever can change a directory there can
    // replace the loader and the bundle themselves, so a check of the cache would keep nothing out.
    const open = freshDir("open-above-install")
    fs.chmodSync(open, 0o777)
    const { bundleFile, dist, run } = copyInstall(open)
    plant(dist, 0o644, bundleFile)
    expect(answer(run())).toBe(JSON.stringify([[1, "forged"]]))
  })

  for (const [what, mode] of [["group-writable", 0o775], ["world-writable", 0o777], ["sticky world-writable", 0o1777]] as const) {
    it(`is not used when the bundle's directory is ${what}, nor is that directory written`, () => {
      const { bundleFile, dist, run } = copyInstall()
      const file = plant(dist, 0o644, bundleFile)
      fs.chmodSync(dist, mode)
      const result = run(debug)
      expect(answer(result)).toBe(alpha())
      expect(result.stderr).toContain(`${dist}: not used, writable by others`)
      expect(fs.readFileSync(file).equals(forgedCache(bundleFile))).toBe(true)
      expect(fs.readdirSync(dist).sort()).toEqual(["claude-peers.cjs", cacheName].sort())
    })
  }

  it.skipIf(!isRoot)("is not used when another user owns the bundle's directory", () => {
    const { bundleFile, dist, run } = copyInstall()
    plant(dist, 0o644, bundleFile)
    fs.chownSync(dist, nobody, nobody)
    const result = run(debug)
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain(`${dist}: not used, owned by uid ${nobody}`)
  })
})

describe("a damaged cache", { timeout: 120_000 }, () => {
  /** A cache the loader wrote, for `list` on the test's home. */
  const goodCache = () => {
    const dir = freshDir("cache")
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
    const file = path.join(dir, cacheName)
    return { dir, file, bytes: fs.readFileSync(file) }
  }
  const headerLength = (bytes: Buffer) => bytes.indexOf(10, bytes.indexOf(10, bytes.indexOf(10) + 1) + 1) + 1

  it("one changed byte in the payload (procStart → procStarT) is rejected by the checksum, and the cache rewritten", () => {
    const { bytes, dir, file } = goodCache()
    const at = bytes.indexOf("procStart", headerLength(bytes), "latin1")
    expect(at).toBeGreaterThan(0)
    const damaged = Buffer.from(bytes)
    damaged[at + 8] = "T".charCodeAt(0)
    fs.writeFileSync(file, damaged)
    const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir, ...debug })
    expect(answer(result)).toBe(alpha())
    expect(result.stderr).toContain("checksum")
    expect(fs.readFileSync(file).equals(damaged)).toBe(false)
    expect(listJson({ CLAUDE_PEERS_CACHE_DIR: dir })).toMatchObject({ status: 0, stderr: "" })
  })

  it("bit flips and zeroed 4 KiB blocks anywhere in the payload never crash a run or change its answer", () => {
    const { bytes, dir, file } = goodCache()
    const start = headerLength(bytes)
    const damages: Array<(b: Buffer) => void> = []
    for (let i = 0; i < 6; i++) damages.push((b) => (b[start + Math.floor(((i + 0.5) / 6) * (b.length - start))]! ^= 1 << i))
    for (let i = 0; i < 4; i++) {
      damages.push((b) => b.fill(0, start + i * Math.floor((b.length - start) / 4), Math.min(b.length, start + i * Math.floor((b.length - start) / 4) + 4096)))
    }
    for (const damage of damages) {
      const damaged = Buffer.from(bytes)
      damage(damaged)
      fs.writeFileSync(file, damaged)
      for (let run = 0; run < 2; run++) {
        const result = listJson({ CLAUDE_PEERS_CACHE_DIR: dir })
        expect([result.status, answer(result), result.stderr]).toEqual([0, alpha(), ""])
      }
    }
  })

  it("a bundle rewritten in place with its size and mtime kept does not run the old cache (ctime is in the key)", () => {
    const install = freshDir("install")
    for (const d of ["bin", "dist"]) fs.mkdirSync(path.join(install, d))
    for (const f of ["claude-peers.js", "package.json"]) fs.copyFileSync(path.join(root, "bin", f), path.join(install, "bin", f))
    const copy = path.join(install, "dist", "claude-peers.cjs")
    fs.copyFileSync(bundle, copy)
    const script = path.join(install, "bin", "claude-peers.js")
    const runCopy = () =>
      spawnSync(process.execPath, [script, "--claude-home", home, "list", "--json"], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: "/nonexistent-home" }
      })
    expect(runCopy().status).toBe(0)
    const cache = path.join(install, "dist", cacheName)
    const keyLine = () => fs.readFileSync(cache, "latin1").split("\n", 2)[1]
    const before = keyLine()
    const { mtimeNs, size } = fs.statSync(copy, { bigint: true })
    const text = fs.readFileSync(copy)
    const fd = fs.openSync(copy, "r+")
    fs.writeSync(fd, text, 0, text.length, 0)
    fs.closeSync(fd)
    // The mtime put back to the nanosecond (`touch` takes it so), as a careless copy tool would.
    const stamp = `@${mtimeNs / 1_000_000_000n}.${String(mtimeNs % 1_000_000_000n).padStart(9, "0")}`
    expect(spawnSync("touch", ["-m", "-d", stamp, copy]).status).toBe(0)
    const after = fs.statSync(copy, { bigint: true })
    expect([after.mtimeNs, after.size]).toEqual([mtimeNs, size])
    expect(runCopy().status).toBe(0)
    expect(keyLine()).not.toBe(before)
  })

  it("the temporary files of killed runs are swept; a live run's are kept", () => {
    const dir = freshDir("sweep")
    const gone = spawnSync("true").pid!
    const dead = path.join(dir, `${cacheName}.${gone}-1700000000000.tmp`)
    const live = path.join(dir, `${cacheName}.${sleeper.pid}-1700000000000.tmp`)
    const unrelated = path.join(dir, `notes.${gone}-1700000000000.tmp`)
    for (const file of [dead, live, unrelated]) fs.writeFileSync(file, "partial")
    expect(answer(listJson({ CLAUDE_PEERS_CACHE_DIR: dir }))).toBe(alpha())
    expect(fs.readdirSync(dir).sort()).toEqual([cacheName, path.basename(live), path.basename(unrelated)].sort())
  })

  it("a run holds its marker as long as it runs (the died-compiling protection covers the whole run)", async () => {
    const dir = freshDir("cache")
    const watchCache = path.join(dir, "claude-peers.cjs.watch.v8-cache")
    /** A `watch` run, ended once it has reported the live session (its signal handlers are in place). */
    const watchOnce = async (whileRunning: () => Promise<void>) => {
      const cli = startCli(["--claude-home", home, "watch", "--json"], bin, { CLAUDE_PEERS_CACHE_DIR: dir })
      try {
        await waitUntil("the first event", 60_000, () => (cli.stdout().includes("appeared") ? true : undefined))
        await whileRunning()
      } finally {
        cli.child.kill("SIGTERM")
      }
      expect(await cli.exited).toBe(0)
    }
    // The first run writes the part's cache as it exits; the second runs with it.
    await watchOnce(async () => undefined)
    expect(fs.existsSync(watchCache)).toBe(true)
    let marker: string | undefined
    await watchOnce(async () => {
      marker = fs.readdirSync(dir).find((name) => name.startsWith("claude-peers.cjs.watch.v8-cache.compiling-"))
    })
    // Held after the compile, while the run reported events; removed as it ended.
    expect(marker).toBeDefined()
    expect(fs.readdirSync(dir)).toEqual(["claude-peers.cjs.watch.v8-cache"])
  })
})
