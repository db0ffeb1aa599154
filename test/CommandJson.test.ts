/**
 * The command prints sessions, policies, `inspect` rows and settings views as they are, without building
 * their schemas' encoders (the schemas are the contract's shapes; building them is most of what a
 * short command would spend). These hold what it prints to what the schemas encode, for any value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { InspectRow, inspectRow } from "../src/cli/Render.js"
import { SessionPolicy, sessionPolicyJson } from "../src/domain/Policy.js"
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

  it("a policy: every key in the schema's order, at every depth, whatever else the objects carry", () => {
    const encode = Schema.encodeSync(SessionPolicy)
    const extra = fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })
    // Extra members at every depth the projection rebuilds, as a caller's objects may carry them.
    const carrying = fc.tuple(Arbitrary.make(SessionPolicy), extra, extra, extra).map(([p, top, nested, mode]) => ({
      ...top,
      ...p,
      sources: p.sources.map((s) => ({ ...nested, ...s })),
      killSwitch: { ...nested, ...p.killSwitch },
      partialBecause: p.partialBecause.map((u) => ({ ...nested, ...u })),
      receiverMode: { ...mode, ...p.receiverMode, partialBecause: p.receiverMode.partialBecause.map((u) => ({ ...nested, ...u })) },
      forSender: p.forSender.map((o) => ({ ...nested, ...o }))
    }))
    fc.assert(
      fc.property(carrying, (policy) => {
        expect(json(sessionPolicyJson(policy))).toBe(json(encode(policy)))
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
