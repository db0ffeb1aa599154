/**
 * A file's POSIX ACL and extended attributes on Linux, read and given through `getfattr` and
 * `setfattr` (the `attr` package).
 *
 * Node has no xattr API, and no `stat` field says whether a file has any: the choice is a native
 * addon (a compiled dependency for every user, loaded on every run) or a subprocess for the updates
 * that write. The subprocess is run only by an update that writes over an existing file, under its
 * lock; the programs are taken from the system's own directories, never from `PATH`, since root
 * runs them too. Where `getfattr` is not installed, or the platform is not Linux, nothing is read
 * and nothing is carried (the README says so).
 */
import { type PlatformError, SystemError } from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import type * as ChildProcess from "node:child_process"
import * as NFS from "node:fs"
import type { ExtendedAttributes } from "../services/Files.js"

const programIn = (name: string): string | null => {
  for (const directory of ["/usr/bin", "/bin"]) {
    const candidate = `${directory}/${name}`
    try {
      NFS.accessSync(candidate, NFS.constants.X_OK)
      return candidate
    } catch {
      continue
    }
  }
  return null
}

let programs: { readonly get: string | null; readonly set: string | null } | undefined
const programsOf = () => programs ??= { get: programIn("getfattr"), set: programIn("setfattr") }

/** The label a new file gets from the policy, not from the file it replaces. */
const notCarried = new Set(["security.selinux"])

const none: ExtendedAttributes = { _tag: "None" }

const attributeError = (method: string, path: string, syscall: string, description: string): PlatformError =>
  new SystemError({ reason: "PermissionDenied", module: "FileSystem", method, pathOrDescriptor: path, syscall, description })

/** A value as `getfattr -e base64` spells it: `0s…` base64, `0x…` hex, `"…"` text. */
const decodeValue = (spelled: string): Uint8Array => {
  if (spelled.startsWith("0s")) return new Uint8Array(Buffer.from(spelled.slice(2), "base64"))
  if (spelled.startsWith("0x")) return new Uint8Array(Buffer.from(spelled.slice(2), "hex"))
  if (spelled.startsWith("\"") && spelled.endsWith("\"")) return new TextEncoder().encode(spelled.slice(1, -1))
  return new TextEncoder().encode(spelled)
}

/** `getfattr --dump` output: `name=value` lines under `# file:` headers. Names are kept as spelled (escapes included), for `setfattr`. */
export const parseDump = (dump: string): ExtendedAttributes => {
  const entries: Array<{ name: string; value: Uint8Array }> = []
  for (const line of dump.split("\n")) {
    if (line.length === 0 || line.startsWith("#")) continue
    const equals = line.indexOf("=")
    const name = equals < 0 ? line : line.slice(0, equals)
    if (notCarried.has(name)) continue
    entries.push({ name, value: equals < 0 ? new Uint8Array(0) : decodeValue(line.slice(equals + 1)) })
  }
  return entries.length === 0 ? none : { _tag: "Some", entries }
}

/**
 * `node:child_process`, imported where it is used: it brings `net`, `dgram` and the stream
 * machinery, which no read needs. An update reads the attributes (loading it) before it can have
 * any to give, so `giveAttributesSync` finds it loaded.
 */
let childProcess: typeof ChildProcess | undefined
const loadChildProcess = Effect.promise(() => import("node:child_process")).pipe(Effect.tap((module) => void (childProcess = module)))

export const extendedAttributes = (path: string): Effect.Effect<ExtendedAttributes, PlatformError> => {
  if (process.platform !== "linux") return Effect.succeed(none)
  const program = programsOf().get
  if (program === null) return Effect.succeed(none)
  return Effect.flatMap(loadChildProcess, ({ execFile }) => readAttributes(execFile, program, path))
}

const readAttributes = (execFile: typeof ChildProcess.execFile, program: string, path: string): Effect.Effect<ExtendedAttributes, PlatformError> =>
  Effect.async<ExtendedAttributes, PlatformError>((resume) => {
    const child = execFile(
      program,
      ["--dump", "--match=-", "--encoding=base64", "--absolute-names", "--no-dereference", "--", path],
      { encoding: "utf8", timeout: 10_000, env: { LC_ALL: "C" } },
      (error, stdout, stderr) => {
        if (error === null) return resume(Effect.succeed(parseDump(stdout)))
        // A file system without extended attributes has none to keep.
        if (/Operation not supported/.test(stderr)) return resume(Effect.succeed(none))
        resume(Effect.fail(attributeError(
          "extendedAttributes",
          path,
          "getxattr",
          `its ACL and extended attributes could not be read (${stderr.trim() || error.message}), so an update could not keep them`
        )))
      }
    )
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

/**
 * Gives the file open on `fd` the attributes, through `/proc/self/fd` of this process: the file
 * itself, not whatever its path names by then. Throws where any cannot be given.
 */
export const giveAttributesSync = (fd: number, path: string, attributes: ExtendedAttributes): void => {
  if (attributes._tag === "None") return
  const program = programsOf().set
  const names = attributes.entries.map((entry) => entry.name).join(", ")
  if (program === null) throw attributeError("writeNewFile", path, "setxattr", `setfattr is not installed, so its attributes (${names}) cannot be kept`)
  // An empty value must be spelled `""`: `setfattr` skips an empty `0s`.
  const lines = attributes.entries.map((entry) =>
    entry.value.length === 0 ? `${entry.name}=""` : `${entry.name}=0s${Buffer.from(entry.value).toString("base64")}`
  )
  const dump = `# file: /proc/${process.pid}/fd/${fd}\n${lines.join("\n")}\n`
  if (childProcess === undefined) throw attributeError("writeNewFile", path, "setxattr", "its attributes were given before they were read")
  const result = childProcess.spawnSync(program, ["--restore=-"], { input: dump, encoding: "utf8", timeout: 10_000, env: { LC_ALL: "C" } })
  if (result.status !== 0) {
    const why = (result.stderr ?? "").trim() || (result.error?.message ?? `exit ${result.status}`)
    throw attributeError("writeNewFile", path, "setxattr", `its attributes (${names}) could not be given to the new file (${why})`)
  }
}
