/**
 * The command prints sessions, `inspect` rows and settings views as they are, without building
 * their schemas' encoders (the schemas are the contract's shapes; building them is most of what a
 * short command would spend). These hold what it prints to what the schemas encode, for any value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { InspectRow, inspectRow } from "../src/cli/Render.js"
import { Session, sessionJson } from "../src/domain/Session.js"
import { makeSettingsView, SettingsView } from "../src/domain/Settings.js"
import { RegistryEntry } from "../src/domain/Verdict.js"

const json = (value: unknown) => JSON.stringify(value)

describe("the command's JSON", () => {
  it("a session: every key in the schema's order, whatever else the object carries", () => {
    const encode = Schema.encodeSync(Session)
    fc.assert(
      fc.property(Arbitrary.make(Session), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }), (session, extra) => {
        expect(json(sessionJson(session))).toBe(json(encode(session)))
        expect(json(sessionJson({ ...extra, ...session }))).toBe(json(encode({ ...extra, ...session })))
      }),
      { numRuns: 500 }
    )
  })

  it("an inspect row, for any entry", () => {
    const encode = Schema.encodeSync(InspectRow)
    fc.assert(
      fc.property(Arbitrary.make(RegistryEntry), (entry) => {
        expect(json(inspectRow(entry))).toBe(json(encode(inspectRow(entry))))
      }),
      { numRuns: 500 }
    )
  })

  it("a settings view, as the settings service makes them", () => {
    const encode = Schema.encodeSync(SettingsView)
    const policy = fc.constantFrom("accept" as const, "hold" as const, "refuse" as const, null)
    fc.assert(
      fc.property(fc.string(), fc.hexaString({ minLength: 64, maxLength: 64 }), policy, (path, revision, value) => {
        const view = makeSettingsView(path, revision, value)
        expect(json(view)).toBe(json(encode(view)))
      }),
      { numRuns: 200 }
    )
  })
})
