#!/usr/bin/env node
/**
 * The command's loader. `claude-peers list --json` runs from status lines and prompt hooks many
 * times a minute, so its start-up is the product's speed there: most of it is V8 parsing and
 * compiling JavaScript. The bundle, `dist/claude-peers.cjs` (see `command/build.mjs`), is a
 * tiny entry and the parts it loads (the recognized commands, or the full command line), each a function
 * expression at byte offsets its header lists. This loader reads and compiles only the entry and
 * the one part a run asks for, through `vm.Script` with a V8 code cache per part, written after
 * the part's first run: that skips most of the compiling on every later run. It is CommonJS (see
 * `bin/package.json`): an ES module entry would load Node's ESM loader first, about 10 ms here.
 *
 * Three rules earn their place here:
 * - A stale cache is never used. V8 checks only the source's length, so a cache is keyed by the
 *   bundle's size, mtime, inode and device, by the Node version and architecture, and by the flags
 *   Node runs with (`NODE_OPTIONS`, `process.execArgv`), and whatever V8 still rejects
 *   (`cachedDataRejected`) is rewritten. Each set of flags has cache files of its own, so runs that
 *   alternate flags do not keep rewriting one file.
 * - The cache never fails the command. Every cache read and write is best effort: a missing,
 *   corrupt, unreadable or unwritable cache only costs the time it would have saved. Writes go to
 *   a temporary file renamed into place, so a concurrent run reads an old cache or a whole new one.
 *   What V8 does not check (a payload damaged behind an intact header) is caught by a marker, see
 *   `diedCompiling`.
 * - No install is left without a cache. The directory a run writes caches (and markers) to is chosen
 *   before any cache data is made: the install's own (beside the bundle, or
 *   `CLAUDE_PEERS_CACHE_DIR`), else `$XDG_CACHE_HOME/claude-peers` (else `~/.cache/claude-peers`),
 *   else a directory of this user's in the system's temporary directory, which only this user can
 *   write (another user's cache there could run code as this one). With none, no cache is made at
 *   all. A valid cache in a read-only install is used as it is.
 *
 * Each part has caches of its own (`claude-peers.cjs.<part>[.<flags>].v8-cache`): a cache holds the
 */
"use strict"
const fs = require("node:fs")
const path = require("node:path")

const bundleFile = path.join(__dirname, "..", "dist", "claude-peers.cjs")
const headerBytes = 2048
const magic = "claude-peers v8 cache 5\n"

/** The flags Node runs with: V8 rejects a cache made under other V8 flags. */
const flags = [process.env.NODE_OPTIONS ?? "", ...process.execArgv].join(" ").trim()

/** FNV-1a, to name a set of flags in a file name; the key inside the file tells two sets apart. */
const shortHash = (text) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(36)
}

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
  const key = `${stats.size}:${stats.mtimeNs}:${stats.ino}:${stats.dev}:${process.version}:${process.arch}:${flags}`
  const header = read(fd, 0, headerBytes).split("\n")[1]
  return { fd, key, index: JSON.parse(header.slice(header.indexOf("{"))) }
}

/** Reads up to `length` bytes of `fd` from `position` into the start of `buffer`; returns how many it read. */
const readInto = (fd, buffer, length, position) => {
  let done = 0
  while (done < length) {
    const n = fs.readSync(fd, buffer, done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/**
 * Bytes `start` to `end` of the bundle, read through `buffer` (a new one when none is given).
 * esbuild writes ASCII only, and latin1 is its cheapest decoding.
 */
const read = (fd, start, end, buffer = Buffer.allocUnsafe(end - start)) => buffer.toString("latin1", 0, readInto(fd, buffer, end - start, start))

/**
 * A cache holds what its run compiled, and V8 deserializes all of it on every run that uses it. A
 * run that fails (or finds no registry directory) builds the error classes and with them
 * `effect/Schema`: a cache it writes is 115–140 KB larger, and every later run that succeeds
 * pays for it (about 2 ms on `list`, 7 ms on `resolve` here). So such a run's cache is `provisional`:
 * used as any other, until a run that builds none of it (a cold path: `coldPath`, which the part's
 * error classes set) finds it and puts a `replace` note in its place. The next run compiles without
 * a cache; one that succeeds writes the final cache, one that fails defers once (`deferred`), so
 * that a part whose runs alternate ends with the cache of the runs that succeed, and the run after
 * that writes the final cache whatever its path. Each step moves forward, so a part has its final
 * cache at most two runs after the note, and never rewrites it.
 */
const final = ""
const provisional = "provisional "
const replace = "replace "
const deferred = "replace deferred "
const coldPath = Symbol.for("claude-peers/cold-path")
/** Parts whose cache was a note (`replace` or `deferred`), with its kind. */
const replacing = new Map()

/**
 * A cache file's header: the magic line, then the cache's kind and the key, padded so that V8's
 * data starts on a 16-byte boundary (V8 copies cached data that is not aligned before reading it).
 */
const cacheHeader = (key, kind = final) => {
  const text = magic + kind + key.replace(/\n/g, " ")
  return Buffer.from(`${text.padEnd(Math.ceil((text.length + 1) / 16) * 16 - 1, " ")}\n`, "latin1")
}

/** Which cache `fd` (of `size` bytes) holds under `key`: its kind and header, or null when none of ours. */
const matchHeader = (fd, size, key) => {
  const header = cacheHeader(key)
  // The longest kind's header is at most 32 bytes longer than a final cache's.
  const head = Buffer.allocUnsafe(header.length + 32)
  const length = readInto(fd, head, Math.min(head.length, size), 0)
  for (const kind of [final, provisional, replace, deferred]) {
    const expected = kind === final ? header : cacheHeader(key, kind)
    // A cache has data after its header; a note has none.
    const note = kind === replace || kind === deferred
    const fits = note ? size === expected.length : size > expected.length
    if (fits && length >= expected.length && head.subarray(0, expected.length).equals(expected)) return { kind, header: expected }
  }
  return null
}

/** `claude-peers:list` → `claude-peers.cjs.list.v8-cache`, or `….list.<flags>.v8-cache` under flags. */
const cacheNameOf = (part) => `${path.basename(bundleFile)}.${part.replace(/^.*:/, "")}${flags === "" ? "" : `.${shortHash(flags)}`}.v8-cache`

/** The install's own cache directory: beside the bundle, unless `CLAUDE_PEERS_CACHE_DIR` says otherwise. */
const installDirectory = () => {
  const override = process.env.CLAUDE_PEERS_CACHE_DIR
  return override !== undefined && override !== "" ? override : path.dirname(bundleFile)
}

const isWritableDirectory = (directory) => {
  try {
    fs.accessSync(directory, fs.constants.W_OK)
    return fs.statSync(directory).isDirectory()
  } catch {
    return false
  }
}

const userCacheDirectory = () => {
  const xdg = process.env.XDG_CACHE_HOME
  let directory
  try {
    // os.homedir() throws where HOME is unset and the user has no entry in the password database
    // (a container run under an arbitrary uid): then there is no such directory.
    const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(require("node:os").homedir(), ".cache")
    directory = path.join(base, "claude-peers")
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
  } catch {
    return null
  }
  return isWritableDirectory(directory) ? directory : null
}

/**
 * `<tmp>/claude-peers-<uid>`, made by this user with mode 0700. Anyone can make a name in the
 * temporary directory: only a real directory of this user's that nobody else can write is used.
 */
const ownTemporaryDirectory = () => {
  const os = require("node:os")
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined
  const directory = path.join(os.tmpdir(), `claude-peers-${uid ?? os.userInfo().username}`)
  try {
    fs.mkdirSync(directory, { mode: 0o700 })
  } catch (error) {
    if (error.code !== "EEXIST") return null
  }
  try {
    const stats = fs.lstatSync(directory)
    if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o022) !== 0) return null
    return isWritableDirectory(directory) ? directory : null
  } catch {
    return null
  }
}

let chosen
/** The directory this run writes caches and markers to, chosen once: null when there is none. */
const writableDirectory = () => {
  if (chosen !== undefined) return chosen
  const install = installDirectory()
  chosen = isWritableDirectory(install) ? install : (userCacheDirectory() ?? ownTemporaryDirectory())
  return chosen
}

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
 * A cache that cannot be removed (a read-only install's) is dropped by a note beside this run's
 * markers that holds its header: while the note is there, that cache is not used.
 */
const isDropped = (note, header) => {
  try {
    return fs.readFileSync(note).equals(header)
  } catch {
    return false
  }
}

const drop = (cache, header) => {
  try {
    fs.rmSync(cache.file, { force: true })
  } catch {
    // A read-only cache stays; the note keeps it out.
  }
  if (cache.readOnly) writeAtomically(cache.note, header)
}

/**
 * The part's cache under this key, open, with the size of its data (read by `readCacheData`): the
 * install's cache first, then the one this run writes, with the marker this run holds while
 * compiling with it; null when there is none. A cache is only used where a marker can be written.
 */
const readCache = (part, key) => {
  const name = cacheNameOf(part)
  const install = installDirectory()
  const writable = writableDirectory()
  if (writable === null) return null
  const places = writable === install ? [install] : [install, writable]
  for (const directory of places) {
    // The install's cache, read from elsewhere than where this run writes: its markers and note
    // carry another name, beside this run's own.
    const readOnly = directory !== writable
    const prefix = path.join(writable, readOnly ? `${name}.installed` : name)
    let fd
    try {
      fd = fs.openSync(path.join(directory, name), "r")
      const size = fs.fstatSync(fd).size
      // Another bundle's, other flags', another Node's, or not ours at all: ignored, and replaced after the run.
      const matched = matchHeader(fd, size, key)
      if (matched?.kind === replace || matched?.kind === deferred) {
        if (!readOnly) replacing.set(part, matched.kind)
        continue
      }
      const header = matched?.header
      const cache = { file: path.join(directory, name), readOnly, note: `${prefix}.dropped`, header, kind: matched?.kind }
      if (matched !== null && !(readOnly && isDropped(cache.note, header))) {
        if (diedCompiling(writable, `${path.basename(prefix)}.compiling-`)) {
          // Closed first: Windows removes no file that is open.
          closeQuietly(fd)
          fd = undefined
          drop(cache, header)
        } else {
          const marker = `${prefix}.compiling-${process.pid}`
          fs.closeSync(fs.openSync(marker, "w"))
          const open = { ...cache, fd, size: size - header.length, marker }
          fd = undefined
          return open
        }
      }
    } catch {
      // No cache here, or none this run can use: try the next place.
    } finally {
      if (fd !== undefined) closeQuietly(fd)
    }
  }
  return null
}

/**
 * The cache's data, read into `buffer` and the cache closed; null when it cannot be read. V8 reads
 * the data while it compiles and keeps none of it, so the buffer can hold the part's text first.
 */
const readCacheData = (cache, buffer) => {
  try {
    return buffer.subarray(0, readInto(cache.fd, buffer, cache.size, cache.header.length))
  } catch {
    return null
  } finally {
    closeQuietly(cache.fd)
  }
}

const closeQuietly = (fd) => {
  try {
    fs.closeSync(fd)
  } catch {
    // Nothing was written through it.
  }
}

const removeQuietly = (file) => {
  try {
    fs.unlinkSync(file)
  } catch {
    // Already gone.
  }
}

/** A temporary file, then a rename: a concurrent run reads the old bytes or the new ones. */
const writeAtomically = (target, bytes) => {
  const temporary = `${target}.${process.pid}-${Date.now()}.tmp`
  try {
    fs.writeFileSync(temporary, bytes, { flag: "wx", mode: 0o644 })
    fs.renameSync(temporary, target)
  } catch {
    removeQuietly(temporary)
  }
}

/** Compiles one section of the bundle (with its cache, for a part) and runs it as a CommonJS module. */
const runSection = (bundle, id, requireForSection) => {
  const { Script } = require("node:vm")
  const [start, end, lineOffset] = bundle.index[id]
  // The entry is a few lines: a cache would cost more to read than it saves.
  const cached = id === "entry" ? null : readCache(id, bundle.key)
  // One buffer takes the text, then the cache's data: a page of memory touched for the first time
  // costs a fault, and in a run this short those faults are a good part of the time.
  const buffer = Buffer.allocUnsafe(Math.max(end - start, cached === null ? 0 : cached.size))
  const source = read(bundle.fd, start, end, buffer)
  const data = cached === null ? null : readCacheData(cached, buffer)
  const options = { filename: bundleFile, lineOffset }
  let script
  try {
    script = new Script(source, data === null ? options : { ...options, cachedData: data })
  } catch (error) {
    // Data V8 cannot use is reported through `cachedDataRejected`, but a cache must never be the
    // reason the command fails: compile once more without it.
    if (data === null) throw error
    script = new Script(source, options)
  } finally {
    if (cached !== null) removeQuietly(cached.marker)
  }
  if (id !== "entry" && (data === null || script.cachedDataRejected === true)) {
    // A read-only cache that V8 rejects is kept out from now on; this run's own takes its place.
    if (data !== null && cached.readOnly) drop(cached, cached.header)
    // Written at exit, so that the cache also holds the functions the command compiled lazily; not
    // made at all when there is nowhere to write it.
    const directory = writableDirectory()
    if (directory !== null) {
      process.once("exit", () => {
        try {
          const file = path.join(directory, cacheNameOf(id))
          const cold = globalThis[coldPath] === true
          const note = replacing.get(id)
          if (cold && note === replace) return writeAtomically(file, cacheHeader(bundle.key, deferred))
          const kind = cold && note === undefined ? provisional : final
          writeAtomically(file, Buffer.concat([cacheHeader(bundle.key, kind), script.createCachedData()]))
        } catch {
          // The command's result stands whatever happens to its cache.
        }
      })
    }
  } else if (id !== "entry" && cached.kind === provisional) {
    const directory = writableDirectory()
    process.once("exit", () => {
      if (globalThis[coldPath] === true) return
      // A run that succeeded on a failed run's cache: the next run makes the cache anew.
      try {
        if (cached.readOnly) drop(cached, cached.header)
        writeAtomically(path.join(directory, cacheNameOf(id)), cacheHeader(bundle.key, replace))
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

/**
 * Effect's clock reads `performance.now()` once as it loads, to set its monotonic clock
 * (`process.hrtime`) against the time of day. Node makes `performance` on first use, and making it
 * loads `perf_hooks` and a dozen modules behind it: about 2 ms of `list --json` here. Until
 * something asks it for more, a stand-in answers `now()` and `timeOrigin` from the clock Node's
 * own reads (the time since the process started); anything else is asked of Node's own.
 */
const standInForPerformance = () => {
  const property = Object.getOwnPropertyDescriptor(globalThis, "performance")
  if (property === undefined || typeof property.get !== "function" || property.configurable !== true) return
  let real
  const own = () => (real ??= property.get.call(globalThis))
  const now = () => process.uptime() * 1000
  const timeOrigin = Date.now() - now()
  const standIn = new Proxy({}, {
    get(_, key) {
      if (key === "now") return now
      if (key === "timeOrigin") return timeOrigin
      const value = Reflect.get(own(), key)
      return typeof value === "function" ? value.bind(own()) : value
    }
  })
  Object.defineProperty(globalThis, "performance", {
    configurable: true,
    enumerable: property.enumerable,
    get: () => standIn,
    set(value) {
      Object.defineProperty(globalThis, "performance", { configurable: true, enumerable: property.enumerable, writable: true, value })
    }
  })
}

const bundle = openBundle()
if (bundle !== null) {
  standInForPerformance()
  run(bundle)
} else {
  // The command runs only from its bundle, which `npm install` builds (the package's `prepare`).
  process.stderr.write(`claude-peers: ${bundleFile} is missing: run \`npm run build\` in ${path.join(__dirname, "..")}\n`)
  process.exitCode = 1
}
