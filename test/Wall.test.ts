/**
 * The wall between the library and the standalone command: every module the library's entries reach
 * by their relative imports reads as ordinary Effect code. The command's start-up engineering lives in
 * `command/` and reaches library modules only through the build's replacement table.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(__dirname, "..")
/** Every entry the package exports (`exports`' types name the source module each is built from). */
const entries = Object.values(
  (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { exports: Record<string, { types?: string } | string> }).exports
).flatMap((target) => typeof target === "object" && target.types !== undefined ? [target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts")] : [])

const rules: ReadonlyArray<readonly [string, RegExp]> = [
  ["imports the command's modules", /from\s+["'](?:\.\.\/)+command\//],
  ["calls require(", /(?<![\w$.])require\(/],
  ["holds a claude-peers global symbol", /Symbol\.for\(\s*["']claude-peers\//],
  ["holds a pure annotation", /__PURE__/],
  ["uses a private process API", /process\._|process\.binding/],
  ["has a comment about the command's bundle", /(?:\/\/|\/\*|^\s*\*).*\b(?:bundles?|parts? of the command|code caches?|loader)\b/i]
]

/** Each line of `source` that breaks a rule, as `file:line: what`. */
export const findings = (file: string, source: string): Array<string> =>
  source.split("\n").flatMap((line, i) => rules.filter(([, pattern]) => pattern.test(line)).map(([what]) => `${file}:${i + 1}: ${what}`))

const importsOf = (source: string): Array<string> => [...source.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!)

/** Every module reachable from the entries by relative imports, relative to the repository. */
const reachable = (): Array<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const source = fs.readFileSync(path.join(root, file), "utf8")
    for (const specifier of importsOf(source)) {
      const target = path.relative(root, path.resolve(path.dirname(path.join(root, file)), specifier.replace(/\.js$/, ".ts")))
      if (fs.existsSync(path.join(root, target))) visit(target)
      else if (target.startsWith("command")) seen.add(target)
    }
  }
  for (const entry of entries) visit(entry)
  return [...seen].sort()
}

describe("the wall", () => {
  it("the scanner flags each pattern in a synthetic bad source, and not a clean one", () => {
    const bad = [
      "import { x } from \"../../command/src/Provide.js\"",
      "const m = require(\"./Errors.js\")",
      "const s = Symbol.for(\"claude-peers/cold-path\")",
      "export const a = /*#__PURE__*/ f()",
      "process._kill(1, 0)",
      "// loaded lazily so the bundle stays small"
    ].join("\n")
    expect(findings("bad.ts", bad)).toEqual([
      "bad.ts:1: imports the command's modules",
      "bad.ts:2: calls require(",
      "bad.ts:3: holds a claude-peers global symbol",
      "bad.ts:4: holds a pure annotation",
      "bad.ts:5: uses a private process API",
      "bad.ts:6: has a comment about the command's bundle"
    ])
    expect(findings("good.ts", "import * as Effect from \"effect/Effect\"\nexport const x = Effect.fail(new Error(\"no\"))\n")).toEqual([])
  })

  it("no library module imports the command's or holds its start-up devices", () => {
    const modules = reachable()
    expect(modules).toEqual(expect.arrayContaining(["src/services/Registry.ts", "src/layers/Node.ts", "src/cli/Root.ts"]))
    expect(entries).toEqual(expect.arrayContaining(["src/index.ts", "src/node.ts", "src/testing.ts", "src/testing/conformance.ts", "src/cli.ts"]))
    const found = modules.flatMap((file) =>
      file.startsWith("command") ? [`${file}: a library module imports it`] : findings(file, fs.readFileSync(path.join(root, file), "utf8"))
    )
    expect(found).toEqual([])
  })
})
