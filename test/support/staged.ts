/**
 * What a test runs as another user (uid 1000, nobody, a uid of its own) must be readable by that
 * user, and a clone may sit where only its owner can enter (`mktemp -d` makes 0700, root's clones
 * live under `/root`). So such a test runs a copy staged in a temporary directory that every user
 * may enter and read (and none but this one may write): the command as `npm run build` made it
 * (the loader `bin/` and the bundle `dist/claude-peers.cjs`, which holds everything the command
 * runs), or a script bundled into one file with the library modules it imports.
 *
 * Call `stagedForOtherUsers()` where a test file or `describe` is collected: the copy is made on
 * first use and removed after the file's tests.
 */
import { afterAll } from "@effect/vitest"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")

export interface Staged {
  /** The staged loader, `bin/claude-peers.js`, beside its bundle. */
  readonly command: () => string
  /**
   * `source` (an ES module that imports this repository's modules by their paths and its
   * dependencies by name) bundled into one ES module file; returns its path.
   */
  readonly script: (name: string, source: string) => string
}

export const stagedForOtherUsers = (): Staged => {
  let dir: string | undefined
  const directory = () => {
    if (dir === undefined) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "claude-peers-staged-"))
      fs.chmodSync(dir, 0o755)
    }
    return dir
  }
  let command: string | undefined
  afterAll(() => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
  })
  return {
    command: () => {
      if (command === undefined) {
        const install = directory()
        for (const sub of ["bin", "dist"]) fs.mkdirSync(path.join(install, sub), { mode: 0o755 })
        for (const file of ["claude-peers.js", "package.json"]) {
          fs.copyFileSync(path.join(root, "bin", file), path.join(install, "bin", file))
        }
        fs.copyFileSync(path.join(root, "dist", "claude-peers.cjs"), path.join(install, "dist", "claude-peers.cjs"))
        command = path.join(install, "bin", "claude-peers.js")
      }
      return command
    },
    script: (name, source) => {
      const outfile = path.join(directory(), `${name}.mjs`)
      esbuild.buildSync({
        stdin: { contents: source, resolveDir: root, loader: "ts", sourcefile: `${name}.ts` },
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        // jsonc-parser's `main` is a UMD build whose requires a bundler cannot follow.
        mainFields: ["module", "main"],
        // A CommonJS dependency's `require` of a Node module, inside an ES module.
        banner: { js: "import { createRequire } from \"node:module\"; const require = createRequire(import.meta.url);" },
        outfile,
        logLevel: "error"
      })
      fs.chmodSync(outfile, 0o644)
      return outfile
    }
  }
}
