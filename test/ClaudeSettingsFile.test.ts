/**
 * One settings file as Claude Code reads it: lenient about a byte-order mark, UTF-16 and white
 * space, and careful to tell a skipped file (no say at all) from an unrecognized value (holds
 * messages, or refuses them in managed settings).
 */
import { describe, expect, it } from "@effect/vitest"
import { fileOutcome, readingOfDocument, settingsFileMaxBytes } from "../src/domain/ClaudeSettingsFile.js"
import { bytes } from "./support/policyFacts.js"

const read = (text: string) => fileOutcome("userSettings", "/u/settings.json", { _tag: "Bytes", bytes: bytes(text) })

describe("fileOutcome", () => {
  it("reads a valid value as set", () => {
    expect(read("{\"crossSessionInbound\":\"hold\"}").reading).toMatchObject({ state: "set", value: "hold", problem: null })
  })

  it("strips a byte-order mark, as Claude Code does", () => {
    expect(read("\uFEFF{\"crossSessionInbound\":\"refuse\"}").reading).toMatchObject({ state: "set", value: "refuse" })
  })

  it("decodes UTF-16LE with its mark", () => {
    const text = "{\"crossSessionInbound\":\"accept\"}"
    const utf16 = new Uint8Array([0xff, 0xfe, ...Array.from(text).flatMap((c) => [c.charCodeAt(0), 0])])
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "Bytes", bytes: utf16 }).reading).toMatchObject({
      state: "set",
      value: "accept"
    })
  })

  it("reads empty, white space and a document without the key as absent", () => {
    for (const text of ["", "  \n\t", "{}", "{\"model\":\"x\"}"]) expect(read(text).reading.state).toBe("absent")
  })

  it("reads any other value as invalid_value, keeping the value to show", () => {
    for (const value of ["Accept", " accept", null, 1, true, ["hold"], { a: "hold" }]) {
      expect(read(JSON.stringify({ crossSessionInbound: value })).reading).toMatchObject({
        state: "invalid",
        problem: "invalid_value",
        value: typeof value === "object" && value !== null ? JSON.stringify(value) : value
      })
    }
  })

  it("takes the last of duplicate members, as JSON.parse does", () => {
    expect(read("{\"crossSessionInbound\":\"refuse\",\"crossSessionInbound\":\"accept\"}").reading.value).toBe("accept")
  })

  it("cuts a long invalid value short", () => {
    const reading = readingOfDocument("userSettings", null, { crossSessionInbound: "x".repeat(10_000) })
    expect(String(reading.value).length).toBeLessThanOrEqual(80)
  })

  it("names a value nested 100,000 levels deep or a million members wide in a few characters, without a stack overflow", () => {
    const depth = 100_000
    const deep = read(`{"crossSessionInbound":${"[".repeat(depth)}${"]".repeat(depth)}}`).reading
    expect(deep).toMatchObject({ state: "invalid", problem: "invalid_value" })
    expect(deep.value).toBe(`${"[".repeat(77)}...`)
    const wide = readingOfDocument("projectSettings", null, { crossSessionInbound: { a: Array.from({ length: 1_000_000 }, () => 1) } })
    expect(String(wide.value)).toMatch(/^\{"a":\[1,1,1,.*\.\.\.$/)
    expect(String(wide.value).length).toBeLessThanOrEqual(80)
  })

  it("skips a file that is not JSON, or not an object, with the reason and no value", () => {
    expect(read("{\"crossSessionInbound\": \"refuse\",,}").reading).toMatchObject({ state: "invalid", problem: "invalid_json", value: null })
    for (const text of ["[]", "null", "\"hold\"", "3"]) {
      expect(read(text).reading).toMatchObject({ state: "invalid", problem: "not_an_object", value: null })
    }
  })

  it("skips a file over 2 MiB, and reports missing, non-regular and failed reads", () => {
    const big = new Uint8Array(settingsFileMaxBytes + 1).fill(0x20)
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "Bytes", bytes: big }).reading.problem).toBe("too_large")
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "Missing" }).reading.state).toBe("absent")
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "NotAFile" }).reading.problem).toBe("not_a_file")
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "Failed", reason: "EACCES" }).reading).toMatchObject({
      state: "unreadable",
      detail: "EACCES"
    })
  })

  it("reports the file's env value for the kill switch, none for a skipped file, unknown for an unread one", () => {
    expect(read("{\"env\":{\"CLAUDE_CODE_HARBOR_KITE\":\"0\"}}").killSwitch).toBe("0")
    expect(read("{\"env\":{\"CLAUDE_CODE_HARBOR_KITE\":\"0\"},}").killSwitch).toBeUndefined()
    expect(read("{\"crossSessionInbound\":\"Hold\",\"env\":{\"CLAUDE_CODE_HARBOR_KITE\":\"no\"}}").killSwitch).toBe("no")
    expect(fileOutcome("userSettings", "/u/s.json", { _tag: "Failed", reason: "EIO" }).killSwitch).toBeNull()
  })

  it("treats a broken managed file as unknown: Claude Code does not start on one", () => {
    const managed = fileOutcome("policySettings", "/etc/claude-code/managed-settings.json", { _tag: "Bytes", bytes: bytes("{") })
    expect(managed.reading.problem).toBe("invalid_json")
    expect(managed.killSwitch).toBeNull()
  })
})
