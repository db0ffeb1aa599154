/**
 * The command's lazy stand-ins for the error classes (`command/src/OnFirstUse.ts`) act as the real
 * classes do wherever the library and its users meet them: `new`, `instanceof` both ways, `_tag`,
 * `Schema.is`, encoding, `catchTag`, decoding, and a subclass of a stand-in.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { onFirstUse } from "../command/src/OnFirstUse.js"
import * as Errors from "../src/domain/Errors.js"

const NotLive = onFirstUse(() => Errors.NotLive)
const encodeError = onFirstUse(() => Errors.encodeError)
const fields = { query: { sessionId: "x", name: null }, reasons: [] }

describe("a stand-in built on first use", () => {
  it("constructs, matches and encodes as the real class", () => {
    const error = new NotLive(fields)
    expect(error).toBeInstanceOf(Errors.NotLive)
    expect(error).toBeInstanceOf(NotLive)
    expect(new Errors.NotLive(fields)).toBeInstanceOf(NotLive)
    expect(error._tag).toBe("NotLive")
    expect(error.message).toBe(new Errors.NotLive(fields).message)
    expect(Schema.is(NotLive)(error)).toBe(true)
    expect(encodeError(error)).toEqual(Errors.encodeError(new Errors.NotLive(fields)))
    expect(Exit.isSuccess(Effect.runSyncExit(Effect.catchTag(Effect.fail(error), "NotLive", () => Effect.succeed(1))))).toBe(true)
    expect(Schema.decodeUnknownSync(NotLive)(Schema.encodeSync(Errors.NotLive)(new Errors.NotLive(fields)))).toBeInstanceOf(NotLive)
  })

  it("a subclass of the stand-in is its own class, as a subclass of the real one is", () => {
    class Sub extends NotLive {}
    class SubReal extends Errors.NotLive {}
    const decodedReal = Schema.decodeUnknownSync(SubReal)(Schema.encodeSync(Errors.NotLive)(new Errors.NotLive(fields)))
    expect(decodedReal).toBeInstanceOf(SubReal)
    const decoded = Schema.decodeUnknownSync(Sub)(Schema.encodeSync(Errors.NotLive)(new Errors.NotLive(fields)))
    expect(decoded).toBeInstanceOf(Sub)
    expect(new Sub(fields)).toBeInstanceOf(Sub)
    expect(new Sub(fields)._tag).toBe("NotLive")
  })
})
