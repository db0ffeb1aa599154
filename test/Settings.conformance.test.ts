/**
 * The settings behaviour of the contract, written once and run against the in-memory layers and
 * against the real OS (a temporary Claude home, real child processes as lock holders). Each test
 * names the contract rule it holds the service to.
 */
import { describe, expect, it } from "@effect/vitest"
import { blake3 } from "@noble/hashes/blake3.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { emptyRevision, type InboundPolicy, type PolicyChange, resetPolicy, setPolicy, type SettingsView } from "../src/domain/Settings.js"
import { Settings } from "../src/services/Settings.js"
import type { TimingOptions } from "../src/services/Timing.js"
import { type HomeOptions, makeMemoryHome, makeNodeHome, type SettingsHome } from "./support/settingsHomes.js"

const fixtures = path.resolve(import.meta.dirname, "fixtures/real-settings")
const fixture = (name: string) => fs.readFileSync(path.join(fixtures, `user-settings-via-config-ui-${name}.json`), "utf8")

const hex = (bytes: Uint8Array) => bytesToHex(blake3(bytes))
const utf8 = (text: string) => new TextEncoder().encode(text)
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes))

const shortLock = { lockWait: "200 millis", lockPoll: "5 millis" } as const
/** Longer than any test: the wait ends only when the holder lets go. */
const lockWaitOutlasted = { lockWait: "10 minutes", lockPoll: "5 millis" } as const
const lockOf = (pid: number, startTime: string) => `${pid} ${startTime}\n`

const suite = (name: string, makeHome: (options?: HomeOptions) => SettingsHome) =>
  describe(`settings conformance: ${name}`, () => {
    /**
     * The lock's waits shortened (the contract's 2 s is held once, by the test after the suites):
     * a wait that is waited out takes `lockWait`; `lockWaitOutlasted` for a wait that must never end
     * before the test lets the holder go, however slow the machine.
     */
    const withHome = <A, E>(
      body: (home: SettingsHome) => Effect.Effect<A, E, Settings>,
      options?: HomeOptions,
      timing: TimingOptions = shortLock
    ) =>
      Effect.acquireUseRelease(
        Effect.sync(() => makeHome(options)),
        (home) => Effect.provide(body(home), home.layerWith({ timing })),
        (home) => Effect.promise(() => home.close())
      )
    const read = Effect.flatMap(Settings, (settings) => settings.read)
    const update = (change: PolicyChange, expectedRevision?: string) =>
      Effect.flatMap(Settings, (settings) => settings.update(change, { expectRevision: expectedRevision }))
    const set = (value: InboundPolicy, expectedRevision?: string) => update(setPolicy(value), expectedRevision)
    const reset = (expectedRevision?: string) => update(resetPolicy, expectedRevision)

    const viewOf = (home: SettingsHome, policy: InboundPolicy | null, revision: string): SettingsView => ({
      path: home.settingsFile,
      revision,
      crossSessionInbound: policy,
      userAllowsAutomaticDelivery: policy === "accept",
      scope: "user"
    })

    /** The file is what it was, and nothing of ours (temporary file, lock) is left beside it. */
    const expectUntouched = (home: SettingsHome, before: Uint8Array | undefined, entries: ReadonlyArray<string>) => {
      const now = home.read("settings.json")
      // Compared as buffers: a deep equality over a megabyte of elements takes seconds.
      expect(now === undefined ? undefined : Buffer.from(now).equals(Buffer.from(before ?? []))).toBe(before === undefined ? undefined : true)
      expect(home.list()).toEqual(entries)
    }

    /** After a successful update: the file holds the view's revision and nothing else of ours is left. */
    const expectWritten = (home: SettingsHome, view: SettingsView, expectedText: string) => {
      expect(text(home.read("settings.json"))).toBe(expectedText)
      expect(view.revision).toBe(hex(utf8(expectedText)))
      expect(home.list().filter((name) => name.includes("claude-peers"))).toEqual([])
    }

    describe("reading", () => {
      it.live("a missing file is {} with the empty file's revision; absent is not accept", () =>
        withHome((home) =>
          Effect.gen(function*() {
            expect(emptyRevision).toBe("af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262")
            expect(emptyRevision).toBe(hex(new Uint8Array(0)))
            expect(yield* read).toEqual(viewOf(home, null, emptyRevision))
            expect(home.exists("settings.json")).toBe(false)
          })
        ))

      it.live("a 0-byte file is {} too; white space alone is not empty", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", "")
            expect(yield* read).toEqual(viewOf(home, null, emptyRevision))
            home.write("settings.json", " \n")
            const error = yield* Effect.flip(read)
            expect(error._tag).toBe("InvalidJson")
          })
        ))

      it.live("the files Claude Code's settings screen writes; the revision is BLAKE3 of the exact bytes", () =>
        withHome((home) =>
          Effect.gen(function*() {
            for (const [name, policy] of [["accept", "accept"], ["hold", "hold"], ["refuse", "refuse"], ["default", null]] as const) {
              home.write("settings.json", fixture(name))
              expect(yield* read).toEqual(viewOf(home, policy, hex(utf8(fixture(name)))))
            }
          })
        ))

      it.live("not UTF-8 JSON (a byte-order mark included) is invalid_json, and the message names the file", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const cases: ReadonlyArray<Uint8Array> = [
              utf8("\uFEFF{}"),
              new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
              utf8("{\"a\":1} x"),
              utf8("{\"a\":1,}"),
              utf8("// comment\n{}"),
              utf8("{")
            ]
            for (const bytes of cases) {
              home.write("settings.json", bytes)
              const error = yield* Effect.flip(read)
              expect(error._tag, text(bytes)).toBe("InvalidJson")
              expect(error.message).toContain(home.settingsFile)
            }
          })
        ))

      it.live("JSON that is not an object, or a value other than the three strings, is invalid_settings", () =>
        withHome((home) =>
          Effect.gen(function*() {
            for (const doc of ["[]", "\"accept\"", "1", "null", "true"]) {
              home.write("settings.json", doc)
              expect((yield* Effect.flip(read))._tag, doc).toBe("InvalidSettings")
            }
            for (const value of ["null", "\"ACCEPT\"", "\"\"", "1", "{}", "[\"accept\"]", "true"]) {
              const doc = `{"crossSessionInbound": ${value}}`
              home.write("settings.json", doc)
              const error = yield* Effect.flip(read)
              expect(error._tag, doc).toBe("InvalidSettings")
              expect(error.message).toContain(home.settingsFile)
            }
          })
        ))

      it.live("a directory or a FIFO is invalid_settings and is never opened (nothing hangs)", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.mkfifo("settings.json")
            expect((yield* Effect.flip(read))._tag).toBe("InvalidSettings")
            home.remove("settings.json")
            home.mkdir("settings.json")
            expect((yield* Effect.flip(read))._tag).toBe("InvalidSettings")
          })
        ))

      it.live("at most 1 MiB is read: exactly 1 MiB is fine, one byte more is invalid_settings", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const frame = "{\"crossSessionInbound\":\"hold\",\"pad\":\"\"}"
            const exact = frame.replace("\"\"}", `"${"x".repeat(1024 * 1024 - frame.length)}"}`)
            expect(exact.length).toBe(1024 * 1024)
            home.write("settings.json", exact)
            expect((yield* read).crossSessionInbound).toBe("hold")
            home.write("settings.json", exact.replace("\"x", "\"xy"))
            const error = yield* Effect.flip(read)
            expect(error._tag).toBe("InvalidSettings")
            expect(error.message).toContain("1 MiB")
          })
        ))

      it.live("a link is read through (as Claude Code reads it); a dangling link reads as a missing file", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("dotfiles/settings.json", fixture("hold"))
            home.symlink(path.join(home.home, "dotfiles/settings.json"), "settings.json")
            expect(yield* read).toEqual(viewOf(home, "hold", hex(utf8(fixture("hold")))))
            home.remove("dotfiles")
            expect(yield* read).toEqual(viewOf(home, null, emptyRevision))
          })
        ))

      it.live("duplicate keys: the last one wins, as JSON.parse", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", "{\"crossSessionInbound\":\"bogus\",\"crossSessionInbound\":\"refuse\"}")
            expect((yield* read).crossSessionInbound).toBe("refuse")
          })
        ))
    })

    describe("updating", () => {
      it.live("a new file is exactly what Claude Code's settings screen writes, mode 0600", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const view = yield* set("accept")
            expect(view).toEqual(viewOf(home, "accept", hex(utf8(fixture("accept")))))
            expectWritten(home, view, "{\n  \"crossSessionInbound\": \"accept\"\n}\n")
            expect(home.modeOf("settings.json")).toBe(0o600)
            expect(home.list()).toEqual(["settings.json"])
            expect(yield* read).toEqual(view)
          })
        ))

      it.live("from Claude Code's own files to Claude Code's own files, byte for byte", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", fixture("default"))
            expectWritten(home, yield* set("accept"), fixture("accept"))
            expectWritten(home, yield* set("hold"), fixture("hold"))
            expectWritten(home, yield* set("refuse"), fixture("refuse"))
            expectWritten(home, yield* reset(), fixture("default"))
            home.write("settings.json", "")
            expectWritten(home, yield* set("hold"), fixture("hold"))
          })
        ))

      it.live("every other byte is kept: indentation, key order, number spellings, escapes", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const cases: ReadonlyArray<readonly [string, PolicyChange, string]> = [
              [
                "{\n\t\"model\": \"opus\",\n\t\"n\": 1.0\n}\n",
                setPolicy("hold"),
                "{\n\t\"model\": \"opus\",\n\t\"n\": 1.0,\n\t\"crossSessionInbound\": \"hold\"\n}\n"
              ],
              [
                "{\"a\":{\"b\":[1,2]},\"big\":12345678901234567890}",
                setPolicy("accept"),
                "{\"a\":{\"b\":[1,2]},\"big\":12345678901234567890,\"crossSessionInbound\":\"accept\"}"
              ],
              [
                "{ \"x\": \"caf\\u00e9\" }",
                setPolicy("refuse"),
                "{ \"x\": \"caf\\u00e9\", \"crossSessionInbound\": \"refuse\" }"
              ],
              [
                "{\n    \"x\": \"caf\\u00e9\",\n    \"crossSessionInbound\": \"refuse\",\n    \"y\": -0.0e+00\n}",
                resetPolicy,
                "{\n    \"x\": \"caf\\u00e9\",\n    \"y\": -0.0e+00\n}"
              ],
              [
                "{\n    \"x\": \"caf\\u00e9\",\n    \"crossSessionInbound\" :  \"refuse\",\n    \"y\": -0.0e+00\n}",
                setPolicy("accept"),
                "{\n    \"x\": \"caf\\u00e9\",\n    \"crossSessionInbound\" :  \"accept\",\n    \"y\": -0.0e+00\n}"
              ],
              [
                "{\r\n  \"env\": {\r\n    \"A\": \"1\"\r\n  }\r\n}\r\n",
                setPolicy("hold"),
                "{\r\n  \"env\": {\r\n    \"A\": \"1\"\r\n  },\r\n  \"crossSessionInbound\": \"hold\"\r\n}\r\n"
              ],
              [
                "{\n  \"crossSessionInbound\": \"hold\",\n  \"permissions\": {\"allow\": []}\n}\n",
                resetPolicy,
                "{\n  \"permissions\": {\"allow\": []}\n}\n"
              ],
              ["{ }", setPolicy("hold"), "{\n  \"crossSessionInbound\": \"hold\"\n}"],
              ["  {\"crossSessionInbound\":\"hold\"}  \n", resetPolicy, "  {}  \n"],
              ["{\"a\": 1, \"b\": 2}", setPolicy("hold"), "{\"a\": 1, \"b\": 2, \"crossSessionInbound\": \"hold\"}"]
            ]
            for (const [before, change, after] of cases) {
              home.write("settings.json", before)
              const view = yield* update(change)
              expectWritten(home, view, after)
              expect(yield* read).toEqual(view)
            }
          })
        ))

      it.live("duplicate keys are collapsed so that JSON.parse (last wins) sees the requested value", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const doc = "{\"crossSessionInbound\":\"hold\",\"a\":1,\"crossSessionInbound\":\"refuse\"}"
            home.write("settings.json", doc)
            const view = yield* set("accept")
            const after = text(home.read("settings.json"))!
            expect(JSON.parse(after)).toEqual({ a: 1, crossSessionInbound: "accept" })
            expect(after.match(/crossSessionInbound/g)).toHaveLength(1)
            expect(yield* read).toEqual(view)
            home.write("settings.json", doc)
            yield* reset()
            expect(text(home.read("settings.json"))).toBe("{\"a\":1}")
            // The value in effect is already "refuse": nothing to write.
            home.write("settings.json", doc)
            const identity = home.identityOf("settings.json")
            expect((yield* set("refuse")).revision).toBe(hex(utf8(doc)))
            expect(home.identityOf("settings.json")).toBe(identity)
          })
        ))

      it.live("an invalid existing value is repaired by set and by reset", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", "{\"crossSessionInbound\": null, \"k\": true}")
            expect((yield* set("hold")).crossSessionInbound).toBe("hold")
            expect(text(home.read("settings.json"))).toBe("{\"crossSessionInbound\": \"hold\", \"k\": true}")
            home.write("settings.json", "{\"k\": true, \"crossSessionInbound\": \"ACCEPT\"}")
            expect((yield* reset()).crossSessionInbound).toBe(null)
            expect(text(home.read("settings.json"))).toBe("{\"k\": true}")
          })
        ))

      it.live("nothing is written when the value would not change (not even the same bytes)", () =>
        withHome((home) =>
          Effect.gen(function*() {
            // reset on a missing file creates nothing
            expect(yield* reset()).toEqual(viewOf(home, null, emptyRevision))
            expect(home.list()).toEqual([])
            home.write("settings.json", fixture("hold"))
            const identity = home.identityOf("settings.json")
            expect(yield* set("hold")).toEqual(viewOf(home, "hold", hex(utf8(fixture("hold")))))
            expect(home.identityOf("settings.json")).toBe(identity)
            home.write("settings.json", "{\"a\":1}")
            const other = home.identityOf("settings.json")
            expect((yield* reset()).crossSessionInbound).toBe(null)
            expect(home.identityOf("settings.json")).toBe(other)
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("the old file's permission bits are kept", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", fixture("default"), 0o640)
            yield* set("refuse")
            expect(home.modeOf("settings.json")).toBe(0o640)
            home.chmod("settings.json", 0o604)
            yield* reset()
            expect(home.modeOf("settings.json")).toBe(0o604)
          })
        ))

      it.live("with an expected revision: the right one writes, any other is changed_during_write and writes nothing", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const created = yield* set("hold", emptyRevision)
            expect(created.crossSessionInbound).toBe("hold")
            const stale = emptyRevision
            const before = home.read("settings.json")
            const error = yield* Effect.flip(set("accept", stale))
            expect(error._tag).toBe("ChangedDuringWrite")
            expect(error).toMatchObject({ expectedRevision: stale, actualRevision: created.revision, conflict: "revision" })
            expect(error.message).toContain(home.settingsFile)
            expectUntouched(home, before, ["settings.json"])
            // The revision is compared before "nothing to change": the caller decided on other bytes.
            expect((yield* Effect.flip(set("hold", stale)))._tag).toBe("ChangedDuringWrite")
            expect((yield* Effect.flip(reset("0".repeat(64))))._tag).toBe("ChangedDuringWrite")
            const updated = yield* set("accept", created.revision)
            expect(updated.crossSessionInbound).toBe("accept")
            expect((yield* reset(updated.revision)).crossSessionInbound).toBe(null)
          })
        ))

      it.live("a symbolic link is refused with invalid_settings; the link and its target stay as they were", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("real.json", fixture("hold"))
            home.symlink(path.join(home.home, "real.json"), "settings.json")
            for (const change of [setPolicy("accept"), resetPolicy]) {
              const error = yield* Effect.flip(update(change))
              expect(error).toMatchObject({ _tag: "InvalidSettings", problem: "symlink" })
              expect(error.message).toContain("symbolic link")
              expect(home.isSymlink("settings.json")).toBe(true)
              expect(text(home.read("real.json"))).toBe(fixture("hold"))
            }
            home.remove("real.json")
            expect((yield* Effect.flip(set("accept")))._tag).toBe("InvalidSettings")
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("a FIFO or a directory at the settings path is refused, and nothing hangs", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.mkfifo("settings.json")
            expect(yield* Effect.flip(set("hold"))).toMatchObject({ _tag: "InvalidSettings", problem: "not_a_file", detail: "a FIFO" })
            expect(home.list()).toEqual(["settings.json"])
            home.remove("settings.json")
            home.mkdir("settings.json")
            expect(yield* Effect.flip(reset())).toMatchObject({ _tag: "InvalidSettings", problem: "not_a_file", detail: "a directory" })
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("a document that is not JSON or not an object is refused, byte for byte untouched", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const cases: ReadonlyArray<readonly [Uint8Array, string]> = [
              [utf8("{\"a\": 1,}"), "InvalidJson"],
              [utf8("\uFEFF{\"a\": 1}"), "InvalidJson"],
              [new Uint8Array([0x7b, 0x7d, 0xc3]), "InvalidJson"],
              [utf8("\n"), "InvalidJson"],
              [utf8("[\"crossSessionInbound\"]"), "InvalidSettings"],
              [utf8("null"), "InvalidSettings"],
              [utf8(`{"a":"${"x".repeat(1024 * 1024)}"}`), "InvalidSettings"]
            ]
            for (const [bytes, tag] of cases) {
              home.write("settings.json", bytes)
              for (const change of [setPolicy("hold"), resetPolicy]) {
                const error = yield* Effect.flip(update(change))
                expect(error._tag).toBe(tag)
                expect(error.message).toContain(home.settingsFile)
                expectUntouched(home, bytes, ["settings.json"])
              }
            }
          })
        ))

      it.live("a missing parent directory is created, 0700", () =>
        withHome(
          (home) =>
            Effect.gen(function*() {
              expect(home.exists("")).toBe(false)
              yield* set("refuse")
              expect(home.modeOf("")).toBe(0o700)
              expect(text(home.read("settings.json"))).toBe(fixture("refuse"))
            }),
          { missingHome: true }
        ))

      it.live("a settings path whose parent is not a directory is an I/O error for get and for set", () =>
        withHome(
          (home) =>
            Effect.gen(function*() {
              expect((yield* Effect.flip(read))._tag).toBe("SystemError")
              expect((yield* Effect.flip(set("hold")))._tag).toBe("SystemError")
              expect((yield* Effect.flip(reset()))._tag).toBe("SystemError")
              expect(text(home.read(""))).toBe("not a directory")
            }),
          { homeIsAFile: true }
        ))
    })

    describe("limits", () => {
      const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels)

      it.live("a document too deep for the editor is invalid_settings for set and reset, untouched; get reads it", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const doc = `{"model":"opus","deep":${nested(100_000)},"crossSessionInbound":"hold"}`
            home.write("settings.json", doc)
            for (const change of [setPolicy("accept"), resetPolicy]) {
              const error = yield* Effect.flip(update(change))
              expect(error).toMatchObject({ _tag: "InvalidSettings", problem: "too_deep", during: "update" })
              expect(error.message).toContain("deep")
              expectUntouched(home, utf8(doc), ["settings.json"])
            }
            // Nothing to change needs no editor: the value is already in place.
            expect(yield* set("hold")).toEqual(viewOf(home, "hold", hex(utf8(doc))))
            expect(yield* read).toEqual(viewOf(home, "hold", hex(utf8(doc))))
          })
        ))

      it.live("a deeply nested invalid value is invalid_settings for get, not a crash", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const doc = `{"crossSessionInbound":${nested(100_000)}}`
            home.write("settings.json", doc)
            const error = yield* Effect.flip(read)
            expect(error).toMatchObject({ _tag: "InvalidSettings", problem: "invalid_value", during: "read" })
            expect(error.message).toContain("[[[")
            expect(error.message.length).toBeLessThan(1000)
            expect((yield* Effect.flip(set("hold")))._tag).toBe("InvalidSettings")
            expectUntouched(home, utf8(doc), ["settings.json"])
          })
        ))

      it.live("an update never writes what a read would refuse: past 1 MiB of UTF-8 it is invalid_settings", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const bytes = (s: string) => utf8(s).length
            // Two-byte characters, so that the document's string length stays under 1 MiB.
            const exact = (pad: string) => `{"pad":"${pad}","crossSessionInbound":"accept"}`
            const room = 1024 * 1024 - bytes(exact(""))
            const pad = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2)
            expect(bytes(exact(pad))).toBe(1024 * 1024)
            home.write("settings.json", `{"pad":"${pad}"}`)
            expectWritten(home, yield* set("accept"), exact(pad))
            expect((yield* read).crossSessionInbound).toBe("accept")
            const over = `{"pad":"${pad}x"}`
            expect(over.length).toBeLessThan(1024 * 1024)
            home.write("settings.json", over)
            const error = yield* Effect.flip(set("accept"))
            expect(error).toMatchObject({ _tag: "InvalidSettings", problem: "too_large", during: "update" })
            expect(error.message).toContain("1 MiB")
            expectUntouched(home, utf8(over), ["settings.json"])
          })
        ))

      it.live("10,000 duplicate members are collapsed by set and removed by reset, every other byte kept", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const runs = `{\n  "model": "opus",\n${"  \"crossSessionInbound\": \"hold\",\n".repeat(10_000)}  "z": 1\n}\n`
            home.write("settings.json", runs)
            expectWritten(home, yield* set("accept"), "{\n  \"model\": \"opus\",\n  \"crossSessionInbound\": \"accept\",\n  \"z\": 1\n}\n")
            home.write("settings.json", runs)
            expectWritten(home, yield* reset(), "{\n  \"model\": \"opus\",\n  \"z\": 1\n}\n")
            // Each duplicate between two other members: 10,000 separate removals.
            const others = Array.from({ length: 10_000 }, (_, i) => `"k${i}":${i}`)
            const alternating = `{${others.map((member) => `"crossSessionInbound":"hold",${member}`).join(",")}}`
            home.write("settings.json", alternating)
            expectWritten(home, yield* reset(), `{${others.join(",")}}`)
            home.write("settings.json", alternating)
            const last = others.length - 1
            expectWritten(
              home,
              yield* set("refuse"),
              `{${others.slice(0, last).join(",")},"crossSessionInbound":"refuse",${others[last]}}`
            )
          })
        ))
    })

    describe("the lock", () => {
      it.live("a lock whose holder is dead is broken", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const dead = yield* Effect.promise(() => home.deadPid())
            home.write(".settings.json.claude-peers.lock", lockOf(dead, "12345"))
            expect((yield* set("hold")).crossSessionInbound).toBe("hold")
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("a lock path that is not a regular file (a directory, a FIFO, a link) is never opened nor removed: io, naming it", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", "{}\n")
            const lock = ".settings.json.claude-peers.lock"
            for (const make of [() => home.mkdir(lock), () => home.mkfifo(lock), () => home.symlink("/nowhere", lock)]) {
              make()
              const error = yield* Effect.flip(set("hold"))
              expect(error._tag).toBe("SystemError")
              expect(error.message).toContain(home.lockFile)
              expect(error.message).toMatch(/not a lock file of claude-peers/)
              expect(home.exists(lock)).toBe(true)
              expect(text(home.read("settings.json"))).toBe("{}\n")
              expect(home.list()).toEqual([lock, "settings.json"])
              home.remove(lock)
            }
          })
        ))

      it.live("a lock whose pid now belongs to another process is broken", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const other = home.spawn()
            home.write(".settings.json.claude-peers.lock", lockOf(other.pid, `${other.startTime}9`))
            expect((yield* set("hold")).crossSessionInbound).toBe("hold")
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("a live holder is waited for up to the lock wait, then changed_during_write; its lock and the file stay", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", fixture("accept"))
            const holder = home.spawn()
            home.write(".settings.json.claude-peers.lock", lockOf(holder.pid, holder.startTime))
            const started = Date.now()
            const error = yield* Effect.flip(set("refuse"))
            // Timers may fire a millisecond early; waiting longer is the machine's, and not indefinitely the test timeout's.
            expect(Date.now() - started).toBeGreaterThanOrEqual(190)
            expect(error._tag).toBe("ChangedDuringWrite")
            expect(error).toMatchObject({ expectedRevision: null, actualRevision: null, conflict: "lock_held" })
            expect(error.message).toContain(`pid ${holder.pid}`)
            expect(text(home.read(".settings.json.claude-peers.lock"))).toBe(lockOf(holder.pid, holder.startTime))
            expectUntouched(home, utf8(fixture("accept")), [".settings.json.claude-peers.lock", "settings.json"])
          })
        ))

      it.live("a live holder that lets go within the lock wait is waited for, then the update goes ahead", () =>
        withHome(
          (home) =>
            Effect.gen(function*() {
              const holder = home.spawn()
              home.write(".settings.json.claude-peers.lock", lockOf(holder.pid, holder.startTime))
              const fiber = yield* Effect.fork(set("hold"))
              yield* Effect.sleep("300 millis")
              // Still waiting, nothing written: the wait outlasts any test.
              expect(Option.isNone(yield* fiber.poll)).toBe(true)
              expect(home.exists("settings.json")).toBe(false)
              home.remove(".settings.json.claude-peers.lock")
              expect((yield* fiber.await)._tag).toBe("Success")
              expect(text(home.read("settings.json"))).toBe(fixture("hold"))
              expect(home.list()).toEqual(["settings.json"])
            }),
          undefined,
          lockWaitOutlasted
        ))

      it.live("a lock without a holder's pid (a writer killed between create and write) is broken after the wait", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write(".settings.json.claude-peers.lock", "")
            const started = Date.now()
            expect((yield* set("hold")).crossSessionInbound).toBe("hold")
            expect(Date.now() - started).toBeGreaterThanOrEqual(190)
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("a lock over 1 MiB (no holder's) is broken once unchanged for the lock wait", () =>
        withHome((home) =>
          Effect.gen(function*() {
            home.write("settings.json", "{}\n")
            home.write(".settings.json.claude-peers.lock", "x".repeat(2_000_000))
            const started = Date.now()
            expect((yield* set("hold")).crossSessionInbound).toBe("hold")
            expect(Date.now() - started).toBeGreaterThanOrEqual(190)
            expect(home.list()).toEqual(["settings.json"])
          })
        ))

      it.live("temporary files left by dead writers are swept; a live writer's is kept", () =>
        withHome((home) =>
          Effect.gen(function*() {
            const dead = yield* Effect.promise(() => home.deadPid())
            const live = home.spawn()
            home.write(`.settings.json.claude-peers-${dead}-00ff.tmp`, "{")
            home.write(`.settings.json.claude-peers-${live.pid}-00ff.tmp`, "{")
            home.write("settings.json.tmp.4242", "{")
            yield* set("hold")
            expect(home.list()).toEqual([
              `.settings.json.claude-peers-${live.pid}-00ff.tmp`,
              "settings.json",
              "settings.json.tmp.4242"
            ])
          })
        ))
    })
  })

suite("memory", makeMemoryHome)
suite("node", makeNodeHome)

describe("settings conformance: the contract's own lock wait (node)", () => {
  // The one test that waits the contract's real 2 s (every other one shortens it through `timing`):
  // the shipped default, on the real OS and the real clock.
  it.live("with the default timing, a live holder is waited for 2 s, then changed_during_write", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => makeNodeHome()),
      (home) =>
        Effect.gen(function*() {
          const holder = home.spawn()
          home.write(".settings.json.claude-peers.lock", lockOf(holder.pid, holder.startTime))
          const started = Date.now()
          const error = yield* Effect.flip(Effect.flatMap(Settings, (settings) => settings.update(setPolicy("hold"))))
          expect(Date.now() - started).toBeGreaterThanOrEqual(1990)
          expect(error).toMatchObject({ _tag: "ChangedDuringWrite", conflict: "lock_held" })
          expect(home.list()).toEqual([".settings.json.claude-peers.lock"])
        }).pipe(Effect.provide(home.layer)),
      (home) => Effect.promise(() => home.close())
    ))
})
