/**
 * The patches the command's bundle applies to Effect (`scripts/effect-patches.mjs`): each still
 * matches the installed version, and each answers what the code it replaces answers.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Array as Arr, FastCheck as fc, MetricBoundaries, Utils } from "effect"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as vm from "node:vm"
import {
  applyPatch,
  dedupeNumbers,
  isNotOptimizedAwayProbe,
  libraryPatches,
  libraryPatchesPlugin
} from "../scripts/effect-patches.mjs"

const effectDist = path.join(path.dirname(createRequire(import.meta.url).resolve("effect/package.json")), "dist", "esm")

/** Every file of Effect's ESM build. */
const effectFiles = (fs.readdirSync(effectDist, { recursive: true }) as Array<string>)
  .filter((file) => file.endsWith(".js"))
  .map((file) => path.join(effectDist, file))

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-patches-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

/**
 * A program that uses what the patches touch, bundled as the command is (ESM builds, the patches
 * applied), printing one JSON object.
 */
const program = `
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Micro from "effect/Micro"
import * as Utils from "effect/Utils"
class Greeting extends Context.Tag("Greeting")() {}
const sync = Effect.runSync(Effect.gen(function* () { return yield* Micro.succeed(1) }))
const fromContext = Effect.runSync(Effect.gen(function* () { return yield* Micro.service(Greeting) }).pipe(Effect.provideService(Greeting, "hello")))
const failed = Effect.runSync(Effect.flip(Effect.gen(function* () { return yield* Micro.fail("no") })))
const later = await Effect.runPromise(Effect.gen(function* () { return yield* Micro.sleep(5).pipe(Micro.as(2)) }))
const boundaries = MetricBoundaries.exponential({ start: 0.5, factor: 2, count: 35 }).values
console.log(JSON.stringify({ sync, fromContext, failed, later, boundaries, internalCallHasFinally: Utils.internalCall.toString().includes("finally") }))
`

describe("the bundle's patches of Effect", () => {
  it("each patch names exactly one module of the installed Effect, and all its edits match it", () => {
    for (const patch of libraryPatches) {
      const files = effectFiles.filter((file) => patch.module.test(file))
      expect(files, String(patch.module)).toHaveLength(1)
      const source = fs.readFileSync(files[0]!, "utf8")
      for (const edit of patch.edits) {
        expect(applyPatch({ module: patch.module, edits: [edit] }, source, files[0]!), String(edit[0])).not.toBe(source)
      }
    }
  })

  it("an edit whose text or pattern is missing fails, naming the file", () => {
    expect(() => applyPatch({ module: /x/, edits: [["not there", ""]] }, "some text", "x.js")).toThrow(/x\.js: expected `not there`/)
    expect(() => applyPatch({ module: /x/, edits: [[/\bnot there\b/g, ""]] }, "some text", "x.js")).toThrow(/x\.js: expected/)
    expect(applyPatch({ module: /x/, edits: [[/\b(some)\b/g, "$1()"]] }, "some text", "x.js")).toBe("some() text")
  })

  it("dedupeNumbers keeps what Array.dedupe keeps, in order, for any numbers", () => {
    const numbers = fc.array(
      fc.oneof(fc.double(), fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, 0.5, 1, 2 ** 53)),
      { maxLength: 40 }
    )
    fc.assert(fc.property(numbers, (values) => {
      expect(dedupeNumbers(values)).toEqual(Arr.dedupe(values))
    }))
    expect(dedupeNumbers([Number.NaN, Number.NaN, 0, -0])).toEqual([Number.NaN, Number.NaN, 0])
  })

  it("dedupeNumbers defers to Array.dedupe inside a structural region and for values that are not numbers", () => {
    const close = (a: unknown, b: unknown) => typeof a === "number" && typeof b === "number" && Math.abs(a - b) < 0.01
    const inRegion = (f: () => unknown) => Utils.structuralRegion(f, close)
    expect(inRegion(() => dedupeNumbers([1, 1.001, 2]))).toEqual([1, 2])
    expect(inRegion(() => dedupeNumbers([1, 1.001, 2]))).toEqual(inRegion(() => Arr.dedupe([1, 1.001, 2])))
    const objects = [{ a: 1 }, "1", 1]
    expect(dedupeNumbers(objects)).toEqual(Arr.dedupe(objects))
  })

  it("the stack-trace probe answers what formatting the stack answers, and leaves prepareStackTrace as it was", () => {
    const standard = { effect_internal_function: <A>(body: () => A): A => body() }
    const probe = new Function("standard", `return ${isNotOptimizedAwayProbe}`) as (s: typeof standard) => boolean
    const original = () => standard.effect_internal_function(() => new Error().stack)?.includes("effect_internal_function") === true
    const before = Error.prepareStackTrace
    const limit = Error.stackTraceLimit
    try {
      expect(probe(standard)).toBe(true)
      expect(probe(standard)).toBe(original())
      // No frames at all: neither finds the name.
      Error.stackTraceLimit = 0
      expect(probe(standard)).toBe(false)
      expect(original()).toBe(false)
    } finally {
      Error.stackTraceLimit = limit
    }
    expect(Error.prepareStackTrace).toBe(before)
  })

  it("where Error is frozen (node --frozen-intrinsics), the probe asks the formatted stack, as Effect does", () => {
    // A context of its own each time, so that freezing its Error touches nothing of this process.
    const ask = (freeze: boolean) =>
      vm.runInNewContext(
        `"use strict";
        ${freeze ? "Object.freeze(Error);" : ""}
        const standard = { effect_internal_function: (body) => body() };
        const original = standard.effect_internal_function(() => new Error().stack)?.includes("effect_internal_function") === true;
        [${isNotOptimizedAwayProbe}, original, Object.isFrozen(Error)]`
      ) as [boolean, boolean, boolean]
    expect(ask(false)).toEqual([true, true, false])
    expect(ask(true)).toEqual([true, true, true])
  })

  it("a bundle built with them runs Micro inside Effect, builds the same boundaries, and picks the same internal call", async () => {
    const entry = path.join(tmp, "program.mjs")
    fs.writeFileSync(entry, program)
    const outfile = path.join(tmp, "program.cjs")
    await esbuild.build({
      entryPoints: [entry],
      nodePaths: [path.resolve(effectDist, "..", "..", "..")],
      bundle: true,
      outfile,
      platform: "node",
      format: "esm",
      mainFields: ["module", "main"],
      conditions: ["import"],
      plugins: [libraryPatchesPlugin],
      logLevel: "silent"
    })
    const bundled = fs.readFileSync(outfile, "utf8")
    // The patches were applied: Micro is initialized on first use.
    expect(bundled).toContain("microModule()")
    const mjs = path.join(tmp, "program.bundle.mjs")
    fs.renameSync(outfile, mjs)
    const result = spawnSync(process.execPath, [mjs], { encoding: "utf8", timeout: 30_000 })
    expect(result.stderr).toBe("")
    expect(JSON.parse(result.stdout)).toEqual({
      sync: 1,
      fromContext: "hello",
      failed: "no",
      later: 2,
      // Through JSON, as printed (Infinity, the last boundary, is null there).
      boundaries: JSON.parse(JSON.stringify(MetricBoundaries.exponential({ start: 0.5, factor: 2, count: 35 }).values)),
      internalCallHasFinally: Utils.internalCall.toString().includes("finally")
    })
  })
})
