#!/usr/bin/env node
/**
 * The command's loader. `claude-peers list --json` runs from status lines and prompt hooks many
 * times a minute, so its start-up is the product's speed there: most of it is V8 parsing and
 * compiling JavaScript. The bundle, `dist/claude-peers.cjs` (see `scripts/build-bin.mjs`), is a
 * tiny entry and the parts it loads (the recognized commands, or the full command line), each a function
 * expression at byte offsets its header lists. This loader reads and compiles only the entry and
 * the one part a run asks for, through `vm.Script` with a V8 code cache per part, written after
 * the part's first run: that skips most of the compiling on every later run. It is CommonJS (see
 * `bin/package.json`): an ES module entry would load Node's ESM loader first, about 10 ms here.
 *
 * Two rules earn their place here:
 * - A stale cache is never used. V8 checks only the source's length, so a cache is keyed by the
 *   bundle's size, mtime, inode and device and by the Node version and architecture, and whatever V8
 *   still rejects (`cachedDataRejected`) is rewritten.
 * - The cache never fails the command. Every cache read and write is best effort: a missing,
 *   corrupt, unreadable or unwritable cache only costs the time it would have saved. Writes go to
 *   a temporary file renamed into place, so a concurrent run reads an old cache or a whole new one.
 *   What V8 does not check (a payload damaged behind an intact header) is caught by a marker, see
 *   `diedCompiling`.
 *
 * Where the caches live: beside the bundle, or, when that directory cannot be written (a read-only
 * install), in `$XDG_CACHE_HOME/claude-peers` (else `~/.cache/claude-peers`). `CLAUDE_PEERS_CACHE_DIR`
 * replaces the first of the two. Without a bundle (a checkout before `npm run build`), the `tsc`
 * output runs as it is.
 */
"use strict"
const fs = require("node:fs")
const path = require("node:path")

const bundleFile = path.join(__dirname, "..", "dist", "claude-peers.cjs")
const headerBytes = 2048
const magic = "claude-peers v8 cache 4\n"

/** The open bundle, its header's index of sections, and the key its caches must carry; null without a bundle. */
const openBundle = () => {
  let fd
  try {
    fd = fs.openSync(bundleFile, "r")
  } catch {
    return null
  }
  // Stat and read the same descriptor, so that the key always describes the text compiled.
  const stats = fs.fstatSync(fd, { bigint: true })
  const key = `${stats.size}:${stats.mtimeNs}:${stats.ino}:${stats.dev}:${process.version}:${process.arch}`
  const header = read(fd, 0, headerBytes).split("\n")[1]
  return { fd, key, index: JSON.parse(header.slice(header.indexOf("{"))) }
}

/** Bytes `start` to `end` of the bundle. esbuild writes ASCII only, and latin1 is its cheapest decoding. */
const read = (fd, start, end) => {
  const bytes = Buffer.allocUnsafe(end - start)
  let length = 0
  while (length < bytes.length) {
    const n = fs.readSync(fd, bytes, length, bytes.length - length, start + length)
    if (n === 0) break
    length += n
  }
  return bytes.toString("latin1", 0, length)
}

/**
 * A cache file's header: the magic line, then the key padded so that V8's data starts on a 16-byte
 * boundary (V8 copies cached data that is not aligned before reading it).
 */
const cacheHeader = (key) => {
  const text = magic + key
  return Buffer.from(`${text.padEnd(Math.ceil((text.length + 1) / 16) * 16 - 1, " ")}\n`, "latin1")
}

const userCacheDirectory = () => {
  const xdg = process.env.XDG_CACHE_HOME
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(require("node:os").homedir(), ".cache")
  return path.join(base, "claude-peers")
}

/** The places a cache may be, in order; the second is only computed when the first is not enough. */
const cacheDirectories = function*() {
  const override = process.env.CLAUDE_PEERS_CACHE_DIR
  yield override !== undefined && override !== "" ? override : path.dirname(bundleFile)
  yield userCacheDirectory()
}

/** `claude-peers:direct` → `claude-peers.cjs.direct.v8-cache` */
const cacheNameOf = (part) => `${path.basename(bundleFile)}.${part.replace(/^.*:/, "")}.v8-cache`

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code !== "ESRCH"
  }
}

/**
 * V8 checks a cache's header, not its payload (release builds skip the checksum), and a payload
 * damaged behind an intact header aborts the process while it compiles. Hashing the payload on
 * every run would cost several milliseconds here, so a run instead leaves a marker while it
 * compiles with a cache and removes it after. A marker whose process is gone means a run died
 * compiling with that cache: the cache is dropped, so one damaged cache can fail one run, never
 * every run after it.
 */
const diedCompiling = (directory, markerPrefix) => {
  let died = false
  for (const name of fs.readdirSync(directory)) {
    if (!name.startsWith(markerPrefix)) continue
    const pid = Number(name.slice(markerPrefix.length))
    if (pid === process.pid || isAlive(pid)) continue
    // Its owner may have finished (and removed it) since the listing: only a marker this run
    // removes itself was left by a run that died.
    try {
      fs.unlinkSync(path.join(directory, name))
      died = true
    } catch {
      // Gone already: that run finished normally.
    }
  }
  return died
}

/**
 * The part's cached data stored under this key in the first place that has it, with the marker
 * this run holds while compiling with it; null when there is none. A cache is only used where the
 * marker can be written.
 */
const readCache = (part, key) => {
  const name = cacheNameOf(part)
  const header = cacheHeader(key)
  for (const directory of cacheDirectories()) {
    const file = path.join(directory, name)
    try {
      const bytes = fs.readFileSync(file)
      // Another bundle's, another Node's, or not ours at all: ignored, and replaced after the run.
      if (bytes.length <= header.length || !bytes.subarray(0, header.length).equals(header)) continue
      if (diedCompiling(directory, `${name}.compiling-`)) {
        fs.rmSync(file, { force: true })
        continue
      }
      const marker = path.join(directory, `${name}.compiling-${process.pid}`)
      fs.closeSync(fs.openSync(marker, "w"))
      return { data: bytes.subarray(header.length), marker }
    } catch {
      // No cache here, or none this run can use: try the next place.
    }
  }
  return null
}

const removeQuietly = (file) => {
  try {
    fs.unlinkSync(file)
  } catch {
    // Already gone.
  }
}

/** Writes a part's cache to the first place that takes it: a temporary file, then a rename. */
const writeCache = (part, key, data) => {
  const bytes = Buffer.concat([cacheHeader(key), data])
  for (const directory of cacheDirectories()) {
    const target = path.join(directory, cacheNameOf(part))
    const temporary = `${target}.${process.pid}-${Date.now()}.tmp`
    try {
      fs.mkdirSync(directory, { recursive: true })
      fs.writeFileSync(temporary, bytes, { flag: "wx", mode: 0o644 })
      fs.renameSync(temporary, target)
      return
    } catch {
      removeQuietly(temporary)
    }
  }
}

/** Compiles one section of the bundle (with its cache, for a part) and runs it as a CommonJS module. */
const runSection = (bundle, id, requireForSection) => {
  const { Script } = require("node:vm")
  const [start, end, lineOffset] = bundle.index[id]
  const source = read(bundle.fd, start, end)
  // The entry is a few lines: a cache would cost more to read than it saves.
  const cached = id === "entry" ? null : readCache(id, bundle.key)
  const options = { filename: bundleFile, lineOffset }
  let script
  try {
    script = new Script(source, cached === null ? options : { ...options, cachedData: cached.data })
  } catch (error) {
    // Data V8 cannot use is reported through `cachedDataRejected`, but a cache must never be the
    // reason the command fails: compile once more without it.
    if (cached === null) throw error
    script = new Script(source, options)
  } finally {
    if (cached !== null) removeQuietly(cached.marker)
  }
  if (id !== "entry" && (cached === null || script.cachedDataRejected === true)) {
    // Written at exit, so that the cache also holds the functions the command compiled lazily.
    process.once("exit", () => {
      try {
        writeCache(id, bundle.key, script.createCachedData())
      } catch {
        // The command's result stands whatever happens to its cache.
      }
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, requireForSection, module, bundleFile, path.dirname(bundleFile))
  return module.exports
}

const run = (bundle) => {
  // The bundle holds everything but Node's own modules, which any `require` resolves alike.
  const nodeRequire = require
  const loaded = new Map()
  const partRequire = (id) => {
    if (!Object.prototype.hasOwnProperty.call(bundle.index, id) || id === "entry") return nodeRequire(id)
    if (!loaded.has(id)) loaded.set(id, runSection(bundle, id, nodeRequire))
    return loaded.get(id)
  }
  runSection(bundle, "entry", partRequire)
}

const bundle = openBundle()
if (bundle !== null) {
  // Once the command is done and nothing is left to write, exit at once: a natural exit also
  // frees the heap piece by piece first, a few milliseconds of a run this short. (Output still
  // buffered, as on a slow pipe on macOS, keeps the natural exit, which waits for it.)
  // Only a stream the command created can hold output: asking an uncreated one would create it,
  // which for a pipe loads \`net\` and the streams (several ms), only to find it empty.
  const created = new Set()
  for (const name of ["stdout", "stderr"]) {
    const property = Object.getOwnPropertyDescriptor(process, name)
    if (property === undefined || typeof property.get !== "function" || property.configurable !== true) {
      created.add(name)
      continue
    }
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: property.enumerable,
      get() {
        created.add(name)
        return property.get.call(this)
      }
    })
  }
  const pending = (name) => created.has(name) && process[name].writableLength > 0
  process.once("beforeExit", () => {
    if (!pending("stdout") && !pending("stderr")) process.exit()
  })
  run(bundle)
} else {
  import("../dist/cli/bin.js").catch((error) => {
    process.stderr.write(`claude-peers: ${error instanceof Error ? error.stack : String(error)}\n`)
    process.exitCode = 1
  })
}
