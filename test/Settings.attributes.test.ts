/**
 * An update keeps the settings file's POSIX ACL and extended attributes, or refuses (issue 26,
 * item 4): the file that replaces it gets them before the rename, and its mode's group bits stay
 * the ACL's mask rather than become the group's own access. On the real OS with `setfacl` (skipped
 * where the tools or the file system's support are missing), and on the memory world.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setPolicy } from "../src/domain/Settings.js"
import * as FilesMemory from "../src/layers/FilesMemory.js"
import { parseDump } from "../src/layers/FilesNodeAttributes.js"
import { layerNode } from "../src/layers/Node.js"
import type { Files } from "../src/services/Files.js"
import { Settings } from "../src/services/Settings.js"
import { layerOverFiles, makeMemoryHome } from "./support/settingsHomes.js"

const document = `{\n  "env": { "API_KEY": "secret" },\n  "crossSessionInbound": "hold"\n}\n`
const updated = `{\n  "env": { "API_KEY": "secret" },\n  "crossSessionInbound": "accept"\n}\n`
const setAccept = Effect.flatMap(Settings, (settings) => settings.update(setPolicy("accept")))

/** Whether `setfacl` and `setfattr` work on a file in the temporary directory. */
const supported = process.platform === "linux" && (() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-acl-probe-"))
  try {
    const file = path.join(dir, "probe")
    fs.writeFileSync(file, "")
    execFileSync("setfacl", ["-m", "u:65534:r", file], { stdio: "ignore" })
    execFileSync("setfattr", ["-n", "user.probe", "-v", "1", file], { stdio: "ignore" })
    execFileSync("getfattr", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})()

/** `getfacl`'s entries, without the header that names the file. */
const aclOf = (file: string) => execFileSync("getfacl", ["-p", "--omit-header", file], { encoding: "utf8" })
const attributeOf = (file: string, name: string) => execFileSync("getfattr", ["--only-values", "-n", name, "--absolute-names", file], { encoding: "utf8" })

describe.runIf(supported)("an update keeps the file's ACL and extended attributes (node, setfacl)", () => {
  const withHome = <A, E>(body: (home: string, file: string) => Effect.Effect<A, E, Settings>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-acl-"))),
      (home) => {
        const file = path.join(home, "settings.json")
        fs.writeFileSync(file, document, { mode: 0o600 })
        fs.chmodSync(file, 0o600)
        return Effect.provide(body(home, file), layerNode({ claudeHome: home }))
      },
      (home) => Effect.sync(() => fs.rmSync(home, { recursive: true, force: true }))
    )

  it.live("a named user's read entry is kept, and the group does not gain the mask's read", () =>
    withHome((home, file) =>
      Effect.gen(function*() {
        execFileSync("setfacl", ["-m", "u:65534:r", file])
        const before = aclOf(file)
        // The ACL's mask shows as the mode's group bits; the group itself has no access.
        expect(fs.statSync(file).mode & 0o777).toBe(0o640)
        expect(before).toMatch(/^group::---$/m)
        yield* setAccept
        expect(fs.readFileSync(file, "utf8")).toBe(updated)
        expect(aclOf(file)).toBe(before)
        expect(fs.statSync(file).mode & 0o777).toBe(0o640)
        expect(fs.readdirSync(home)).toEqual(["settings.json"])
      })
    ))

  it.live("user extended attributes are kept byte for byte", () =>
    withHome((_home, file) =>
      Effect.gen(function*() {
        execFileSync("setfattr", ["-n", "user.origin", "-v", "dotfiles checkout", file])
        execFileSync("setfattr", ["-n", "user.empty", file])
        yield* setAccept
        expect(fs.readFileSync(file, "utf8")).toBe(updated)
        expect(attributeOf(file, "user.origin")).toBe("dotfiles checkout")
        expect(attributeOf(file, "user.empty")).toBe("")
      })
    ))

  it.live("a file without any keeps having none", () =>
    withHome((_home, file) =>
      Effect.gen(function*() {
        yield* setAccept
        expect(execFileSync("getfattr", ["-d", "-m", "-", "--absolute-names", file], { encoding: "utf8" })).toBe("")
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      })
    ))
})

describe("an update keeps the file's extended attributes, or refuses (memory)", () => {
  const withHome = <A, E>(user: { uid: number; gid: number } | undefined, body: (home: ReturnType<typeof makeMemoryHome>) => Effect.Effect<A, E, Settings>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => makeMemoryHome(user === undefined ? {} : { user })),
      (home) => Effect.provide(body(home), home.layer),
      (home) => Effect.promise(() => home.close())
    )

  it.live("an ACL and a user attribute are carried to the file that replaces it", () =>
    withHome(undefined, (home) =>
      Effect.gen(function*() {
        home.write("settings.json", document, 0o640)
        home.world.tree.setExtendedAttributes(home.settingsFile, { "system.posix_acl_access": "acl bytes", "user.origin": "dotfiles" })
        yield* setAccept
        expect(new TextDecoder().decode(home.read("settings.json"))).toBe(updated)
        expect(home.world.tree.extendedAttributesOf(home.settingsFile)).toEqual({ "system.posix_acl_access": "acl bytes", "user.origin": "dotfiles" })
        expect(home.modeOf("settings.json")).toBe(0o640)
      })))

  it.live("a file that appears before the lock is taken keeps its attributes: they are read under the lock", () =>
    withHome(undefined, (home) =>
      Effect.gen(function*() {
        const port = FilesMemory.make(home.world.tree)
        const lockFile = path.join(path.dirname(home.settingsFile), ".settings.json.claude-peers.lock")
        let created = false
        // Claude Code writes the file (it has an ACL) after this update found none, as it takes the lock.
        const files: Files = {
          ...port,
          writeNewFile: (file, bytes, mode, owner, attributes) =>
            Effect.zipRight(
              Effect.sync(() => {
                if (file !== lockFile || created) return
                created = true
                home.write("settings.json", document, 0o640)
                home.world.tree.setExtendedAttributes(home.settingsFile, { "system.posix_acl_access": "acl bytes" })
              }),
              port.writeNewFile(file, bytes, mode, owner, attributes)
            )
        }
        yield* Effect.provide(setAccept, layerOverFiles(home, files))
        expect(created).toBe(true)
        expect(new TextDecoder().decode(home.read("settings.json"))).toBe(updated)
        expect(home.world.tree.extendedAttributesOf(home.settingsFile)).toEqual({ "system.posix_acl_access": "acl bytes" })
      })))

  it.live("an attribute this user may not set: the update is refused, nothing written, nothing left", () =>
    withHome({ uid: 1000, gid: 1000 }, (home) =>
      Effect.gen(function*() {
        home.write("settings.json", document, 0o600)
        home.world.tree.setExtendedAttributes(home.settingsFile, { "security.capability": "caps" })
        const error = yield* Effect.flip(setAccept)
        expect(error).toMatchObject({ _tag: "SystemError", reason: "PermissionDenied" })
        expect(new TextDecoder().decode(home.read("settings.json"))).toBe(document)
        expect(home.world.tree.extendedAttributesOf(home.settingsFile)).toEqual({ "security.capability": "caps" })
        expect(home.list()).toEqual(["settings.json"])
      })))
})

describe("getfattr's dump", () => {
  it("is read as names and values, the SELinux label left to the policy", () => {
    const parsed = parseDump("# file: /x\nuser.a=0saGVsbG8=\nuser.b=0x6869\nuser.c=\"t\"\nsecurity.selinux=0sc3lz\nuser.d\n\n")
    expect(parsed._tag).toBe("Some")
    if (parsed._tag !== "Some") return
    expect(parsed.entries.map((entry) => [entry.name, new TextDecoder().decode(entry.value)])).toEqual([
      ["user.a", "hello"],
      ["user.b", "hi"],
      ["user.c", "t"],
      ["user.d", ""]
    ])
    expect(parseDump("")).toEqual({ _tag: "None" })
  })
})
