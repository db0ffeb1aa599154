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
 * Four rules earn their place here:
 * - A cache runs as code: only this user (or root) can have written it. V8 checks a cache only
 *   against the source's length, the flags and its own version, so a cache compiled from any text
 *   of the same length would run instead of the bundle. A directory is used for caches only when it
 *   is named by an absolute path, and it and every directory above it (its real path, to `/`) is
 *   owned by this user or root and writable by nobody else (the rule `ssh` applies to
 *   `authorized_keys`; an ancestor may be a sticky directory such as `/tmp`, where nobody else can
 *   rename what this user made). The bundle's own directory is checked alone, not the ones above
 *   it: whoever can change one of those can replace the bundle itself. A cache is read through a
 *   descriptor opened without following a link and without blocking (a FIFO), and used only when
 *   it is a regular file owned by this user or root that nobody else can write. Anything else
 *   means a run without a cache, and `CLAUDE_PEERS_DEBUG_CACHE=1` says why on stderr.
 * - A stale or damaged cache is never used. Caches are keyed by the bundle's size, mtime, ctime,
 *   inode and device, by the Node version and architecture, and by the flags Node runs with
 *   (`NODE_OPTIONS`, `process.execArgv`); whatever V8 still rejects (`cachedDataRejected`) is
 *   rewritten. Each set of flags has cache files of its own, so runs that alternate flags do not
 *   keep rewriting one file, and so has each install in a directory that installs share; a part
 *   keeps those of the eight variants used last (`removeOldVariants`). V8 does not check its
 *   payload (release builds skip the checksum), so the header carries the payload's checksum,
 *   checked before V8 sees the data; caches are written to a temporary file, flushed to disk
 *   (`fsync`) and renamed into place, so a concurrent run or a power cut leaves an old cache or a
 *   whole new one. What passes the checksum and still kills a run is caught by a marker the run
 *   holds until it ends, see `diedCompiling`.
 * - The cache never fails the command. Every cache read and write is best effort: a missing,
 *   corrupt, unreadable or unwritable cache only costs the time it would have saved. Temporary
 *   files of runs that were killed are swept.
 * - No install is left without a cache. The directory a run writes caches (and markers) to is chosen
 *   before any cache data is made, among the trusted ones: the install's own (beside the bundle, or
 *   `CLAUDE_PEERS_CACHE_DIR`), else `$XDG_CACHE_HOME/claude-peers` (else `~/.cache/claude-peers`),
 *   else a directory of this user's in the system's temporary directory. With none, no cache is
 *   made at all. A valid cache in a read-only install is used as it is.
 *
 * Each part has caches of its own (`claude-peers.cjs.<part>[.<variant>].v8-cache`, see `variantIn`):
 * a cache holds the functions its part compiled, and no part inherits another's.
 */
"use strict"
const fs = require("node:fs")
const path = require("node:path")

const bundleFile = path.join(__dirname, "..", "dist", "claude-peers.cjs")
const headerBytes = 2048
const magic = "claude-peers v8 cache 7\n"
const { O_CREAT, O_EXCL, O_NOFOLLOW = 0, O_NONBLOCK = 0, O_RDONLY, O_TRUNC, O_WRONLY } = fs.constants
/** How every cache file, note and marker is opened: a link or a FIFO in its place is refused, never followed or waited on. */
const readFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK
const createFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK

/** The flags Node runs with: V8 rejects a cache made under other V8 flags. */
const flags = [process.env.NODE_OPTIONS ?? "", ...process.execArgv].join(" ").trim()

const uid = typeof process.getuid === "function" ? process.getuid() : undefined
const debugging = (process.env.CLAUDE_PEERS_DEBUG_CACHE ?? "") !== ""
/** Why this run goes without a cache somewhere, on stderr under `CLAUDE_PEERS_DEBUG_CACHE`. */
const say = (why) => {
  if (!debugging) return
  try {
    fs.writeSync(2, `claude-peers: cache: ${why.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")}\n`)
  } catch {
    // Nobody to tell.
  }
}

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
  // Stat and read the same descriptor, so that the key always describes the text compiled. A file
  // rewritten in place with its size and mtime kept still has a new ctime.
  const stats = fs.fstatSync(fd, { bigint: true })
  const key = `${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.ino}:${stats.dev}:${process.version}:${process.arch}:${flags}`
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
 * The payload's checksum, as the header carries it: the function of `command/cache-checksum.mjs`,
 * run as the WebAssembly module that file makes (this is its output). It catches damage; forgery is
 * kept out by the first rule. Without WebAssembly (`--jitless`) there is no checksum, and no cache.
 */
// dprint-ignore: its bytes as `command/cache-checksum.mjs` prints them, one line.
const checksumCode = new Uint8Array([
  0,97,115,109,1,0,0,0,1,6,1,96,1,127,1,126,2,8,1,1,109,1,109,2,0,1,3,2,1,0,7,5,1,1,104,0,0,10,180,1,1,177,1,2,1,127,2,126,32,0,173,33,2,2,64,3,64,32,1,32,0,79,13,1,32,2,32,1,41,3,0,124,34,2,32,3,124,33,3,32,2,32,1,41,3,8,124,34,2,32,3,124,33,3,32,2,32,1,41,3,16,124,34,2,32,3,124,33,3,32,2,32,1,41,3,24,124,34,2,32,3,124,33,3,32,1,65,32,106,33,1,12,0,11,11,32,2,66,135,149,175,175,152,182,222,155,158,127,126,32,3,66,207,214,211,190,210,199,171,217,66,126,66,29,137,133,33,2,32,2,32,2,66,33,136,133,66,207,214,211,190,210,199,171,217,66,126,33,2,32,2,32,2,66,29,136,133,66,135,149,175,175,152,182,222,155,158,127,126,33,2,32,2,32,2,66,32,136,133,11
])
const digestLength = 16
let checksumModule
/** A payload of `size` bytes, to be read into `bytes`, and `digest()` to check it: null without WebAssembly. */
const payload = (size) => {
  try {
    checksumModule ??= new WebAssembly.Module(checksumCode)
    // Zeros after the payload, up to the 32 bytes the function reads at a time: a new memory has them.
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((size + 32) / 65536)) })
    const { h } = new WebAssembly.Instance(checksumModule, { m: { m: memory } }).exports
    return { bytes: new Uint8Array(memory.buffer, 0, size), digest: () => BigInt.asUintN(64, h(size)).toString(16).padStart(digestLength, "0") }
  } catch {
    say("no WebAssembly to check caches with: running without one")
    return null
  }
}

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

const isNote = (kind) => kind === replace || kind === deferred

/**
 * A cache file's header: the magic line, the cache's kind and the key, then the payload's digest
 * (none for a note), padded so that V8's data starts on a 16-byte boundary (V8 copies cached data
 * that is not aligned before reading it).
 */
const cacheHeader = (key, kind = final, digest = isNote(kind) ? "" : "0".repeat(digestLength)) => {
  const text = `${magic}${kind}${key.replace(/\n/g, " ")}\n${digest}`
  return Buffer.from(`${text.padEnd(Math.ceil((text.length + 1) / 16) * 16 - 1, " ")}\n`, "latin1")
}

/**
 * Which cache `fd` (of `size` bytes) holds under `key`: its kind, header length and payload digest,
 * or null when none of ours.
 */
const matchHeader = (fd, size, key) => {
  const head = Buffer.allocUnsafe(cacheHeader(key, deferred, "0".repeat(digestLength)).length)
  const length = readInto(fd, head, Math.min(head.length, size), 0)
  for (const kind of [final, provisional, replace, deferred]) {
    const expected = cacheHeader(key, kind)
    // A cache has data after its header; a note has none, and no digest.
    const note = isNote(kind)
    const fits = note ? size === expected.length : size > expected.length
    if (!fits || length < expected.length) continue
    // The digest starts after the key's line; the rest of the header is as `cacheHeader` pads it.
    const at = note ? expected.length : expected.indexOf(10, magic.length) + 1
    const digest = head.toString("latin1", at, note ? at : at + digestLength)
    const rest = note ? at : at + digestLength
    if (!head.subarray(0, at).equals(expected.subarray(0, at)) || !head.subarray(rest, expected.length).equals(expected.subarray(rest))) continue
    if (!note && !/^[0-9a-f]{16}$/.test(digest)) continue
    return { kind, header: head.subarray(0, expected.length), digest }
  }
  return null
}

/**
 * What sets one run's cache of a part apart from others in the same directory: the flags, and, in
 * a directory that is not the install's own (the user's cache or temporary directory, which every
 * install of this user shares), the bundle's path, so that two installs do not keep replacing each
 * other's caches.
 */
const variantIn = (directory) => {
  const text = directory === installDirectory() ? flags : `${bundleFile}\n${flags}`
  return text === "" ? "" : `.${shortHash(text)}`
}

const partPrefix = (part) => `${path.basename(bundleFile)}.${part.replace(/^.*:/, "")}`

/** `claude-peers:list` in `directory` → `claude-peers.cjs.list.v8-cache`, or `….list.<variant>.v8-cache`. */
const cacheNameOf = (part, directory) => `${partPrefix(part)}${variantIn(directory)}.v8-cache`

/** Variants (sets of flags, installs) a part keeps caches for in a directory, besides its plain one. */
const variantsKept = 8

/** How stale a used cache's mtime may be before the run that uses it renews it. */
const renewAfterMs = 60 * 60 * 1000

/**
 * A run renews the mtime of the variant's cache it uses when it is more than an hour old, so that
 * the mtime tells when a variant was last used, to within an hour.
 */
const renewIfStale = (fd, mtimeMs) => {
  const now = Date.now()
  if (now - mtimeMs <= renewAfterMs) return
  try {
    fs.futimesSync(fd, now / 1000, now / 1000)
  } catch {
    // Someone else's cache (root's): it stays as old as it is.
  }
}

/**
 * A flag's value is part of its set (a heap size, a path in `NODE_OPTIONS`), and installs come and
 * go, so without a bound every new variant would leave a cache of each part behind for good. A run
 * that makes its variant's cache of a part (or tried to) removes that part's caches of other
 * variants beyond the `variantsKept - 1` used last. The plain cache (no flags, the install's own
 * directory) is never removed. A variant that comes back once it was removed costs one run without
 * a cache; two runs of new variants at once may leave one more until the next run that makes one.
 */
const removeOldVariants = (directory, part) => {
  const own = cacheNameOf(part, directory)
  const prefix = `${partPrefix(part)}.`
  const others = []
  // The run's listing (writing its cache took one): a variant written since is too new to go.
  for (const name of namesInWritable(directory)) {
    if (name === own || !name.startsWith(prefix) || !/^[0-9a-z]+\.v8-cache$/.test(name.slice(prefix.length))) continue
    try {
      const stats = fs.lstatSync(path.join(directory, name))
      if (stats.isFile()) others.push({ name, used: stats.mtimeMs })
    } catch {
      // Gone already.
    }
  }
  others.sort((a, b) => b.used - a.used)
  for (const { name } of others.slice(variantsKept - 1)) removeQuietly(path.join(directory, name))
}

const ownedByUs = (owner) => owner === uid || owner === 0

/**
 * Why a directory's `stats` let someone else change what it holds, or null: not this user's or
 * root's, or writable by others. A sticky directory is allowed only above the one a cache is in
 * (`first` is that one): in a sticky one others cannot replace an entry, but they can add one.
 */
const distrust = (stats, first) => {
  if (!ownedByUs(stats.uid)) return `owned by uid ${stats.uid}`
  return (stats.mode & 0o022) !== 0 && (first || (stats.mode & 0o1000) === 0) ? "writable by others" : null
}

/**
 * `directory`'s real path when only this user (or root) can change what it holds, else null (and
 * why, under the debug variable): it is absolute, and it and every directory above it is owned by
 * this user or root and writable by nobody else; an ancestor may be sticky, as `/tmp` is.
 */
const trustedDirectory = (directory) => {
  if (!path.isAbsolute(directory)) {
    say(`${directory}: a relative cache directory is not used`)
    return null
  }
  let real
  try {
    real = fs.realpathSync.native(directory)
  } catch {
    return null
  }
  // Windows has no uid to compare: its per-user directories are its rule.
  if (uid === undefined) return real
  try {
    for (let current = real, first = true;; first = false) {
      const stats = fs.lstatSync(current)
      if (!stats.isDirectory()) return null
      const why = distrust(stats, first)
      if (why !== null) {
        say(`${directory}: not used, ${current} is ${why}`)
        return null
      }
      const parent = path.dirname(current)
      if (parent === current) return real
      current = parent
    }
  } catch {
    return null
  }
}

/**
 * `file` open for reading when it is a regular file owned by this user or root that nobody else can
 * write, with its size; else null. A link or a FIFO in its place is refused, never followed or waited on.
 */
const openOwn = (file) => {
  let fd
  try {
    fd = fs.openSync(file, readFlags)
  } catch (error) {
    if (error.code !== "ENOENT") say(`${file}: not opened (${error.code})`)
    return null
  }
  const stats = fs.fstatSync(fd)
  if (stats.isFile() && (uid === undefined || (ownedByUs(stats.uid) && (stats.mode & 0o022) === 0))) return { fd, size: stats.size, mtimeMs: stats.mtimeMs }
  say(`${file}: not used, ${stats.isFile() ? `owned by uid ${stats.uid} or writable by others` : "not a regular file"}`)
  closeQuietly(fd)
  return null
}

const trusted = new Map()
/** `trustedDirectory`, once per directory and run. */
const trustedOnce = (directory) => {
  if (!trusted.has(directory)) trusted.set(directory, trustedDirectory(directory))
  return trusted.get(directory)
}

/**
 * The directory the bundle is read from, when only this user (or root) can change what it holds:
 * owned by this user or root, and writable by nobody else, sticky or not (in a sticky shared
 * directory others cannot replace the bundle, but they could add a cache). Unlike any other cache
 * directory, the ones above it are not walked: the loader and the bundle were read through them,
 * and whoever can change one of them can put another loader and bundle in their place, cache or not.
 */
const bundleDirectory = () => {
  const directory = path.dirname(bundleFile)
  if (uid === undefined) return directory
  try {
    const stats = fs.statSync(directory)
    const why = stats.isDirectory() ? distrust(stats, true) : "not a directory"
    if (why === null) return directory
    say(`${directory}: not used, ${why}`)
  } catch {
    // Gone since the bundle was opened: nowhere to keep caches.
  }
  return null
}

/** The install's own cache directory, trusted: beside the bundle, unless `CLAUDE_PEERS_CACHE_DIR` says otherwise. */
const installDirectory = () => {
  const override = process.env.CLAUDE_PEERS_CACHE_DIR
  if (override !== undefined && override !== "") return trustedOnce(override)
  if (!trusted.has(bundleFile)) trusted.set(bundleFile, bundleDirectory())
  return trusted.get(bundleFile)
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
    if (!path.isAbsolute(directory)) return trustedOnce(directory)
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
  } catch {
    return null
  }
  const real = trustedOnce(directory)
  return real !== null && isWritableDirectory(real) ? real : null
}

/**
 * `<tmp>/claude-peers-<uid>`, made by this user with mode 0700. Anyone can make a name in the
 * temporary directory: only a real directory of this user's that nobody else can write is used.
 */
const ownTemporaryDirectory = () => {
  const os = require("node:os")
  const directory = path.join(os.tmpdir(), `claude-peers-${uid ?? os.userInfo().username}`)
  if (!path.isAbsolute(directory)) return trustedOnce(directory)
  try {
    fs.mkdirSync(directory, { mode: 0o700 })
  } catch (error) {
    if (error.code !== "EEXIST") return null
  }
  try {
    const stats = fs.lstatSync(directory)
    if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o022) !== 0) {
      say(`${directory}: not used, not a directory of this user's that only this user can write`)
      return null
    }
  } catch {
    return null
  }
  const real = trustedOnce(directory)
  return real !== null && isWritableDirectory(real) ? real : null
}

let chosen
/** The directory this run writes caches and markers to, chosen once: null when there is none. */
const writableDirectory = () => {
  if (chosen !== undefined) return chosen
  const install = installDirectory()
  chosen = install !== null && isWritableDirectory(install) ? install : (userCacheDirectory() ?? ownTemporaryDirectory())
  if (chosen === null) say("no directory to keep caches in: running without one")
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

let listing
/**
 * The names in the directory this run writes to, read once; the temporary files of runs that are
 * gone (killed while writing a cache) are swept as they are found.
 */
const namesInWritable = (directory) => {
  if (listing !== undefined) return listing
  listing = fs.readdirSync(directory)
  const prefix = `${path.basename(bundleFile)}.`
  for (const name of listing) {
    const temporary = /\.(\d+)-\d+\.tmp$/.exec(name)
    if (temporary === null || !name.startsWith(prefix)) continue
    const pid = Number(temporary[1])
    if (pid !== process.pid && !isAlive(pid)) removeQuietly(path.join(directory, name))
  }
  return listing
}

/**
 * V8 does not check a payload that passes the checksum against what it does, and a payload that
 * V8 cannot run aborts the process (while it compiles, or later, in a function it compiled lazily).
 * So a run that uses a cache leaves a marker beside it and removes it only as the process exits. A
 * marker whose process is gone means a run died with that cache: the cache is dropped, so one
 * damaged cache can fail one run, never every run after it (a run killed by a signal costs the
 * next run its cache once).
 */
const diedCompiling = (directory, markerPrefix) => {
  let died = false
  for (const name of namesInWritable(directory)) {
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
  const file = openOwn(note)
  if (file === null) return false
  try {
    if (file.size !== header.length) return false
    const bytes = Buffer.allocUnsafe(header.length)
    return readInto(file.fd, bytes, header.length, 0) === header.length && bytes.equals(header)
  } catch {
    return false
  } finally {
    closeQuietly(file.fd)
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

/** Markers this run holds, removed as it exits. */
const markers = []
let removesMarkers = false
const holdMarker = (marker) => {
  fs.closeSync(fs.openSync(marker, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK, 0o644))
  markers.push(marker)
  if (removesMarkers) return
  removesMarkers = true
  process.on("exit", () => {
    for (const file of markers) removeQuietly(file)
  })
}

/**
 * The part's cache under this key, open, with the size of its data (read by `readCacheData`): the
 * install's cache first, then the one this run writes, with the marker this run holds while it
 * runs with it; null when there is none. A cache is only used where a marker can be written.
 */
const readCache = (part, key) => {
  const writable = writableDirectory()
  if (writable === null) return null
  const install = installDirectory()
  const places = writable === install || install === null ? [writable] : [install, writable]
  const own = cacheNameOf(part, writable)
  for (const directory of places) {
    // The install's cache, read from elsewhere than where this run writes: its markers and note
    // carry another name, beside this run's own.
    const readOnly = directory !== writable
    const prefix = path.join(writable, readOnly ? `${own}.installed` : own)
    const file = path.join(directory, readOnly ? cacheNameOf(part, directory) : own)
    let opened
    try {
      opened = openOwn(file)
      if (opened === null) continue
      // Another bundle's, other flags', another Node's, or not ours at all: ignored, and replaced after the run.
      const matched = matchHeader(opened.fd, opened.size, key)
      if (matched === null) say(`${file}: another bundle's or Node's, not used`)
      if (matched !== null && isNote(matched.kind)) {
        if (!readOnly) replacing.set(part, matched.kind)
        continue
      }
      const header = matched?.header
      const cache = { file, readOnly, note: `${prefix}.dropped`, header, kind: matched?.kind, digest: matched?.digest }
      if (matched !== null && !(readOnly && isDropped(cache.note, header))) {
        if (diedCompiling(writable, `${path.basename(prefix)}.compiling-`)) {
          say(`${file}: a run died with it, dropped`)
          // Closed first: Windows removes no file that is open.
          closeQuietly(opened.fd)
          opened = undefined
          drop(cache, header)
        } else {
          holdMarker(`${prefix}.compiling-${process.pid}`)
          if (!readOnly && variantIn(writable) !== "") renewIfStale(opened.fd, opened.mtimeMs)
          const open = { ...cache, fd: opened.fd, size: opened.size - header.length }
          opened = undefined
          return open
        }
      }
    } catch {
      // No cache here, or none this run can use: try the next place.
    } finally {
      if (opened !== undefined && opened !== null) closeQuietly(opened.fd)
    }
  }
  return null
}

/**
 * The cache's data, read into memory of its own and the cache closed; null when it cannot be read or
 * does not match its checksum. V8 reads the data while it compiles and keeps none of it.
 */
const readCacheData = (cache) => {
  try {
    const data = payload(cache.size)
    if (data === null) return null
    if (readInto(cache.fd, data.bytes, cache.size, cache.header.length) === cache.size && data.digest() === cache.digest) return data.bytes
    say(`${cache.file}: damaged (its checksum does not match), not used`)
    return null
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

/**
 * A temporary file, flushed to disk, then a rename: a concurrent run, or one after a power cut,
 * reads the old bytes or the new ones. Temporary files of runs killed meanwhile are swept first.
 */
const writeAtomically = (target, bytes) => {
  const directory = path.dirname(target)
  if (directory === chosen) {
    try {
      namesInWritable(directory)
    } catch {
      // Nothing to sweep.
    }
  }
  const temporary = `${target}.${process.pid}-${Date.now()}.tmp`
  let fd
  try {
    fd = fs.openSync(temporary, createFlags, 0o644)
    for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fd = undefined
    fs.renameSync(temporary, target)
  } catch {
    if (fd !== undefined) closeQuietly(fd)
    removeQuietly(temporary)
  }
}

/** A cache of `script` under `key`: its header, with the payload's digest, then the payload; null without a checksum. */
const cacheBytes = (key, kind, script) => {
  const data = script.createCachedData()
  const checked = payload(data.length)
  if (checked === null) return null
  checked.bytes.set(data)
  return Buffer.concat([cacheHeader(key, kind, checked.digest()), data])
}

/** Compiles one section of the bundle (with its cache, for a part) and runs it as a CommonJS module. */
const runSection = (bundle, id, requireForSection) => {
  const { Script } = require("node:vm")
  const [start, end, lineOffset] = bundle.index[id]
  // The entry is a few lines: a cache would cost more to read than it saves.
  const cached = id === "entry" ? null : readCache(id, bundle.key)
  const source = read(bundle.fd, start, end)
  const data = cached === null ? null : readCacheData(cached)
  const options = { filename: bundleFile, lineOffset }
  let script
  try {
    script = new Script(source, data === null ? options : { ...options, cachedData: data })
  } catch (error) {
    // Data V8 cannot use is reported through `cachedDataRejected`, but a cache must never be the
    // reason the command fails: compile once more without it.
    if (data === null) throw error
    script = new Script(source, options)
  }
  if (id !== "entry" && (data === null || script.cachedDataRejected === true)) {
    // A read-only cache that V8 rejects (or that fails its checksum) is kept out from now on; this
    // run's own takes its place.
    if (cached !== null && cached.readOnly) drop(cached, cached.header)
    // Written at exit, so that the cache also holds the functions the command compiled lazily; not
    // made at all when there is nowhere to write it.
    const directory = writableDirectory()
    if (directory !== null) {
      process.once("exit", () => {
        try {
          const file = path.join(directory, cacheNameOf(id, directory))
          const cold = globalThis[coldPath] === true
          const note = replacing.get(id)
          if (cold && note === replace) writeAtomically(file, cacheHeader(bundle.key, deferred))
          else {
            const kind = cold && note === undefined ? provisional : final
            const bytes = cacheBytes(bundle.key, kind, script)
            if (bytes !== null) writeAtomically(file, bytes)
          }
          if (variantIn(directory) !== "") removeOldVariants(directory, id)
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
        writeAtomically(path.join(directory, cacheNameOf(id, directory)), cacheHeader(bundle.key, replace))
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
