/**
 * `readRecord` decodes a record's descriptive fields by reading each one as the field table says,
 * rather than through the `RecordDescription` Schema made from the same table (it runs thousands of times per scan): the
 * two must give the same answer for any input.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import { decodeRecordDescription, readRecord, RecordDescription } from "../src/domain/Record.js"

const keys = [
  "cwd",
  "messagingSocketPath",
  "status",
  "statusUpdatedAt",
  "updatedAt",
  "startedAt",
  "kind",
  "entrypoint",
  "nameSource",
  "waitingFor",
  "jobId",
  "version",
  "tmux"
]

const value = fc.oneof(
  fc.string(),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, null, undefined, true, false, ""),
  fc.integer(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })
)

const record = fc.dictionary(fc.constantFrom(...keys, "other", "name"), value)

describe("decodeRecordDescription", () => {
  const bySchema = Schema.decodeUnknownSync(RecordDescription)

  it("answers as the RecordDescription Schema does, whatever the fields hold", () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(decodeRecordDescription(r)).toEqual(bySchema(r))
      }),
      { numRuns: 2000 }
    )
  })

  it("reads own properties only, wrong types and non-finite numbers as null, status as its raw text", () => {
    const inherited = Object.create({ cwd: "/inherited", updatedAt: 1 }) as object
    expect(decodeRecordDescription(inherited)).toEqual(bySchema(inherited))
    expect(decodeRecordDescription(inherited).cwd).toBeNull()
    const read = decodeRecordDescription({ cwd: 3, status: "thinking", updatedAt: Number.POSITIVE_INFINITY, startedAt: 12.5 })
    expect(read).toMatchObject({ cwd: null, rawStatus: "thinking", updatedAtMs: null, startedAtMs: 12.5, kind: null })
  })

  it("is what readRecord puts in a candidate's session, when asked for one", () => {
    const json = { pid: 42, sessionId: "s", name: "n", messagingSocketPath: "/s", status: "shell", cwd: "/w", updatedAt: "x" }
    const undescribed = readRecord(json, 42, null)
    expect(undescribed).toMatchObject({ _tag: "Candidate", pid: 42, sessionId: "s", name: "n", session: null })
    const reading = readRecord(json, 42, "/r/42.json")
    expect(reading._tag).toBe("Candidate")
    if (reading._tag !== "Candidate") return
    expect(reading.session).toMatchObject({
      pid: 42,
      sessionId: "s",
      name: "n",
      status: "idle",
      rawStatus: "shell",
      cwd: "/w",
      updatedAtMs: null,
      file: "/r/42.json"
    })
  })
})
