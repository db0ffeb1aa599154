/**
 * An application with an incompatible `effect` (Effect 4, say) learns it in one sentence when it
 * imports the package, not from a link error ("Cannot find module …/effect/dist/Either.js"): each
 * entry checks the installed peers before it loads the library (scripts/build-entries.mjs). The
 * package is copied as built into a temporary project whose `node_modules` holds a fake `effect`
 * of the version under test; no network.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-peers-"))
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  readonly version: string
  readonly peerDependencies: Record<string, string>
}

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const real = (name: string) => fs.realpathSync(path.join(root, "node_modules", name))

/** A project holding the built package, its dependencies, and `effect` as `effect` says (a version, or the real one). */
const project = (name: string, effect: string | "real" | "absent") => {
  const dir = path.join(scratch, name)
  const modules = path.join(dir, "node_modules")
  fs.mkdirSync(path.join(modules, "@effect"), { recursive: true })
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }))
  const pkg = path.join(modules, "claude-peers")
  fs.mkdirSync(pkg)
  fs.copyFileSync(path.join(root, "package.json"), path.join(pkg, "package.json"))
  fs.cpSync(path.join(root, "dist"), path.join(pkg, "dist"), { recursive: true, filter: (p) => !/\.(cjs|map|v8-cache)$/.test(p) })
  for (const dependency of ["@effect/platform", "@effect/cli", "@noble/hashes", "jsonc-parser"]) {
    fs.mkdirSync(path.dirname(path.join(modules, dependency)), { recursive: true })
    fs.symlinkSync(real(dependency), path.join(modules, dependency), "dir")
  }
  if (effect === "real") fs.symlinkSync(real("effect"), path.join(modules, "effect"), "dir")
  else if (effect !== "absent") {
    // Effect 4's layout: `effect/*` maps into `dist/`, where there is no `Either` any more.
    fs.mkdirSync(path.join(modules, "effect", "dist"), { recursive: true })
    fs.writeFileSync(
      path.join(modules, "effect", "package.json"),
      JSON.stringify({ name: "effect", version: effect, type: "module", exports: { "./package.json": "./package.json", "./*": "./dist/*.js" } })
    )
  }
  return dir
}

const importIn = (dir: string, entry: string) =>
  spawnSync(process.execPath, ["--input-type=module", "-e", `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).length)`], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" }
  })

const entries = ["claude-peers", "claude-peers/node", "claude-peers/testing", "claude-peers/cli", "claude-peers/Registry"]

describe("the peers' check at import", () => {
  it("Effect 4 installed: every entry ends the import with one sentence, naming what to install", () => {
    const dir = project("effect-4", "4.0.0")
    for (const entry of entries) {
      const result = importIn(dir, entry)
      expect(result.status, entry).not.toBe(0)
      expect(result.stdout).toBe("")
      expect(result.stderr).not.toContain("Cannot find module")
      const range = manifest.peerDependencies["effect"]
      const sentence =
        `claude-peers ${manifest.version} runs on Effect 3 and needs effect ${range} (this application has 4.0.0): install effect@${range} beside it.`
      expect(result.stderr, entry).toContain(sentence)
    }
  })

  it("an effect 3 older than the range, and no effect at all, are named as such", () => {
    const range = manifest.peerDependencies["effect"]!
    const old = importIn(project("effect-3-old", "3.10.0"), "claude-peers")
    expect(old.stderr).toContain(
      `claude-peers ${manifest.version} runs on Effect 3 and needs effect ${range} (this application has 3.10.0): install effect@${range} beside it.`
    )
    const none = importIn(project("no-effect", "absent"), "claude-peers/node")
    expect(none.stderr).toContain(`needs effect ${range} (not installed): install effect@${range} beside it.`)
  })

  it("the effect the package is built with passes, and each entry holds the library's names", async () => {
    const dir = project("effect-3", "real")
    for (const entry of entries) {
      const result = importIn(dir, entry)
      expect([result.status, result.stderr], entry).toEqual([0, ""])
      expect(Number(result.stdout.trim()), entry).toBeGreaterThan(0)
    }
    const library = await import("claude-peers")
    const built = await import(path.join(root, "dist", "index.js"))
    expect(Object.keys(library).sort()).toEqual(Object.keys(built).sort())
    expect(library.Registry).toBe(built.Registry)
  })
})
