/**
 * The package as a user gets it: `npm pack`, then a scratch project that installs the tarball with
 * the peers the README names (`effect@^3.22`, `@effect/platform@^0.97`, and `@effect/cli` with
 * `@effect/platform-node` for the mounting example), typechecks `examples/` against the installed
 * types, runs the embedding examples on a temporary Claude home, and runs the testing example's own
 * tests with `@effect/vitest`. The project must end up with exactly one copy of `effect`.
 *
 * The install prefers npm's cache (`--prefer-offline`); it reaches the registry only for what the
 * cache lacks. Nothing here is timed: the install's duration is printed, for the record.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { recordText } from "./support/records.js"
import { killAndReap, startSleeper, startTimeOf } from "./support/worlds.js"

const root = path.resolve(import.meta.dirname, "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-package-"))
const consumer = path.join(scratch, "consumer")
const claudeHome = path.join(scratch, "claude-home")
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  readonly devDependencies: Record<string, string>
}
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")

/**
 * npm may reach the registry (for what its cache lacks), with the certificates the environment
 * named, which vitest.config.ts takes out of every other process's environment.
 */
const npmEnvironment: NodeJS.ProcessEnv = process.env.CLAUDE_PEERS_TEST_NODE_EXTRA_CA_CERTS === undefined
  ? {}
  : { NODE_EXTRA_CA_CERTS: process.env.CLAUDE_PEERS_TEST_NODE_EXTRA_CA_CERTS }

/**
 * Runs a program to its end without blocking the worker: an install or a compile here can take
 * longer than vitest's 60 s for an answer from the main process, which a blocked worker never reads.
 */
const run = (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }) =>
  new Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...(command === "npm" ? npmEnvironment : {}), ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 240_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

const sleeper = startSleeper()

beforeAll(async () => {
  fs.mkdirSync(path.join(claudeHome, "sessions"), { recursive: true })
  fs.writeFileSync(
    path.join(claudeHome, "sessions", `${sleeper.pid}.json`),
    recordText(sleeper.pid, { procStart: startTimeOf(sleeper.pid), sessionId: "example-session", name: "example" })
  )
  fs.mkdirSync(consumer)
  // `npm test` built `dist/` before the tests ran: pack it as it is.
  const pack = await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", scratch], { cwd: root })
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stdout}\n${pack.stderr}`)
  const packed = pack.stdout.trim().split("\n").pop()!
  fs.cpSync(path.join(root, "examples"), consumer, { recursive: true, filter: (p) => !p.includes(`${path.sep}dist`) })
  fs.writeFileSync(
    path.join(consumer, "package.json"),
    JSON.stringify({
      name: "claude-peers-consumer",
      private: true,
      type: "module",
      dependencies: {
        "claude-peers": `file:${path.join(scratch, packed)}`,
        effect: "^3.22",
        "@effect/platform": "^0.97",
        "@effect/cli": "^0.77",
        "@effect/platform-node": "^0.108"
      },
      devDependencies: {
        "@effect/vitest": manifest.devDependencies["@effect/vitest"],
        "@types/node": manifest.devDependencies["@types/node"],
        vitest: manifest.devDependencies["vitest"]
      }
    })
  )
  const started = Date.now()
  const install = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: consumer })
  console.info(`npm install of the packed package and its peers: ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (install.status !== 0) throw new Error(`npm install failed:\n${install.stdout}\n${install.stderr}`)
}, 300_000)

afterAll(async () => {
  await killAndReap(sleeper)
  fs.rmSync(scratch, { recursive: true, force: true })
})

describe("the packed package in a consumer project", { timeout: 240_000 }, () => {
  it("installs with exactly one copy of effect, and without the command's own dependencies", async () => {
    const tree = JSON.parse((await run("npm", ["ls", "effect", "--all", "--json"], { cwd: consumer })).stdout) as unknown
    const versions = new Set<string>()
    const walk = (node: unknown, name = "") => {
      if (typeof node !== "object" || node === null) return
      const { dependencies, version } = node as { version?: string; dependencies?: Record<string, unknown> }
      if (name === "effect" && version !== undefined) versions.add(version)
      for (const [child, value] of Object.entries(dependencies ?? {})) walk(value, child)
    }
    walk(tree)
    expect([...versions]).toHaveLength(1)
    expect(fs.existsSync(path.join(consumer, "node_modules", "claude-peers", "node_modules", "effect"))).toBe(false)
    const installed = JSON.parse(fs.readFileSync(path.join(consumer, "node_modules", "claude-peers", "package.json"), "utf8")) as {
      dependencies: Record<string, string>
    }
    expect(Object.keys(installed.dependencies).sort()).toEqual(["@noble/hashes", "jsonc-parser"])
  })

  it("ships its sources beside the source maps that point at them", () => {
    const installed = path.join(consumer, "node_modules", "claude-peers")
    const map = JSON.parse(fs.readFileSync(path.join(installed, "dist", "index.js.map"), "utf8")) as { sources: Array<string> }
    for (const source of map.sources) expect(fs.existsSync(path.resolve(installed, "dist", source)), source).toBe(true)
  })

  it("claude-peers/testing imports no test runner; only claude-peers/testing/conformance needs @effect/vitest", () => {
    const installed = path.join(consumer, "node_modules", "claude-peers")
    /** Every bare specifier the module imports, following its relative imports through the installed dist/. */
    const bareImports = (entry: string): Set<string> => {
      const seen = new Set<string>()
      const bare = new Set<string>()
      const visit = (file: string) => {
        if (seen.has(file)) return
        seen.add(file)
        const text = fs.readFileSync(file, "utf8")
        for (const [, specifier] of text.matchAll(/(?:^|\n)\s*(?:import|export)[^"'\n]*?from\s*["']([^"']+)["']/g)) {
          if (specifier!.startsWith(".")) visit(path.resolve(path.dirname(file), specifier!))
          else bare.add(specifier!)
        }
      }
      visit(path.join(installed, "dist", entry))
      return bare
    }
    const runners = (entry: string) => [...bareImports(entry)].filter((name) => /^(@effect\/)?vitest(\/|$)/.test(name))
    expect(runners("testing.js")).toEqual([])
    expect(runners(path.join("testing", "conformance.js"))).toEqual(["@effect/vitest"])
  })

  it("the examples typecheck against the installed package's types", async () => {
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: consumer })
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

  it("the embedding examples run on a Claude home", async () => {
    const env = { CLAUDE_CONFIG_DIR: claudeHome, HOME: scratch }
    const node = (script: string, ...args: Array<string>) => run(process.execPath, [path.join("dist", script), ...args], { cwd: consumer, env })

    const listed = await node("list-sessions.js")
    expect(listed.status, listed.stderr).toBe(0)
    expect(listed.stdout).toBe(`${sleeper.pid} example idle → example\n1 live session(s)\n`)

    const resolved = await node("resolve-session.js", "example-session")
    expect(resolved).toMatchObject({ status: 0, stdout: `deliver to example (pid ${sleeper.pid})\n` })
    expect((await node("resolve-session.js", "nobody")).stdout).toBe("not live: no file carries it\n")

    const settings = await node("settings.js")
    expect(settings.status, settings.stderr).toBe(0)
    expect(JSON.parse(settings.stdout)).toMatchObject({ before: null, after: "hold" })
    expect(fs.readFileSync(path.join(claudeHome, "settings.json"), "utf8")).toBe("{\n  \"crossSessionInbound\": \"hold\"\n}\n")

    const followed = await node("follow-watch.js", "1")
    expect(followed).toMatchObject({ status: 0, stdout: `appeared ${sleeper.pid} example\n` })

    const mounted = await node("mount-command.js", "claude-peers", "--claude-home", claudeHome, "resolve", "nobody", "--json")
    expect(mounted.status).toBe(3)
    expect(JSON.parse(mounted.stdout)).toMatchObject({ error: { reason: "not_live" } })
  })

  it("the testing example's own tests pass with @effect/vitest", async () => {
    const result = await run(process.execPath, [path.join(consumer, "node_modules", "vitest", "vitest.mjs"), "run", "testing", "--exclude", "dist/**"], {
      cwd: consumer
    })
    expect(result.status, result.stdout + result.stderr).toBe(0)
    // Every test of the example ran and passed (the count is the example's, read from the file).
    const declared = (fs.readFileSync(path.join(consumer, "testing", "router.test.ts"), "utf8").match(/^\s+it\.effect(\.prop)?\(/gm) ?? []).length
    expect(declared).toBeGreaterThanOrEqual(4)
    expect(result.stdout.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(new RegExp(`Tests\\s+${declared} passed`))
  })
})
