/**
 * The patch the command's bundle applies to Effect (`command/effect-patches.mjs`): it still matches
 * the installed version, and a bundle built with it keeps Effect's behaviour without creating
 * `process.stdout` at start-up.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { applyPatch, libraryPatches, libraryPatchesPlugin } from "../command/effect-patches.mjs"

const effectDist = path.join(path.dirname(createRequire(import.meta.url).resolve("effect/package.json")), "dist", "esm")

/** Every file of Effect's ESM build. */
const effectFiles = (fs.readdirSync(effectDist, { recursive: true }) as Array<string>)
  .filter((file) => file.endsWith(".js"))
  .map((file) => path.join(effectDist, file))

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-patches-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** Runs an effect, then says on fd 1 (without touching `process.stdout`) whether `net` was loaded by then. */
const startUp = `
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
const answer = Effect.runSync(Effect.succeed(42))
fs.writeSync(1, JSON.stringify({ answer, netLoaded: process.moduleLoadList.includes("NativeModule net") }))
`

/** Logs through the pretty logger, whose default reads `process.stdout` (which the patch defers). */
const logging = `
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
Effect.runSync(Effect.logInfo("hello").pipe(Effect.provide(Logger.pretty)))
`

/** `source` bundled as the command bundles Effect (ESM builds), run with stdout a pipe, as for a status line. */
const run = async (source: string, name: string, plugins: Array<esbuild.Plugin>) => {
  const entry = path.join(tmp, `${name}.src.mjs`)
  fs.writeFileSync(entry, source)
  const outfile = path.join(tmp, `${name}.mjs`)
  await esbuild.build({
    entryPoints: [entry],
    nodePaths: [path.resolve(effectDist, "..", "..", "..")],
    bundle: true,
    outfile,
    platform: "node",
    format: "esm",
    mainFields: ["module", "main"],
    conditions: ["import"],
    plugins,
    logLevel: "silent"
  })
  const result = spawnSync(process.execPath, [outfile], { encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "" } })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

const patch = [libraryPatchesPlugin as esbuild.Plugin]

describe("the bundle's patch of Effect", () => {
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

  it("a bundle built with it does not create process.stdout at start-up, and still logs as Effect does", async () => {
    expect(JSON.parse(await run(startUp, "start-patched", patch))).toEqual({ answer: 42, netLoaded: false })
    // Without the patch the logger module creates the stream as it loads: the patch is what saves it.
    expect(JSON.parse(await run(startUp, "start-plain", []))).toEqual({ answer: 42, netLoaded: true })
    const shape = (logged: string) => logged.replace(/\d{2}:\d{2}:\d{2}\.\d{3}/g, "T").replace(/#\d+/g, "#F")
    const patched = await run(logging, "log-patched", patch)
    expect(patched).toContain("hello")
    expect(shape(patched)).toBe(shape(await run(logging, "log-plain", [])))
  })
})
