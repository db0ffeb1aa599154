/**
 * Bundles the command into one minified file, `dist/claude-peers.cjs`, which `bin/claude-peers.js`
 * loads through `vm.Script` with V8 code caches. The library entries stay as `tsc` output; this
 * file is only the command.
 *
 * Three rules earn their place here:
 * - Start-up is the product's speed for `list --json` in a status line, and with this stack it is
 *   dominated by how much code is read, compiled and initialized. The sources import deeply
 *   (`effect/Effect`, `@effect/cli/Command`), never through the packages' barrels, which would keep
 *   `Stream`, `PubSub`, `FastCheck` and `@effect/cli`'s YAML/TOML/INI parsers in every part.
 * - A recognized command must not pay for the command-line parser. The entry (`command/src/bin.ts`) only
 *   picks a part: `Direct.ts` for the documented spellings, `CommandLine.ts` for everything else. Each
 *   part is bundled whole and on its own (a shared bundle would wrap every module in a lazy
 *   initializer and make `list` compile and initialize more), and kept as its own section of the
 *   file, so that the loader reads, compiles and caches only the part a run uses.
 * - Every section is one CommonJS function expression, `(function (exports, require, module,
 *   __filename, __dirname) {…})`: `vm.Script` compiles scripts, not ES modules, and a script is what
 *   a code cache can be produced for and checked against. The file's second line indexes them:
 *   `// {"entry":[start,end,lineOffset],"claude-peers:direct":[…],"claude-peers:command-line":[…]}`.
 *
 * `node command/build.mjs --analyze` also prints what dominates each part. For profiling,
 * `OUT=file` writes elsewhere, `NOMINIFY=1` keeps the names and `EAGER_ERRORS=1` builds the error
 * classes at start-up, as the library does.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { purePlugin } from "../command/pure.mjs"
import { libraryPatchesPlugin } from "./effect-patches.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const outfile = process.env.OUT ?? path.join(root, "dist", "claude-peers.cjs")
const analyze = process.argv.includes("--analyze")

/**
 * The entry's dynamic imports become requests for parts, which the loader finds in the file: one
 * part per module of `src/cli/direct/` (a recognized command), and the full command line.
 */
const directory = path.join(root, "command", "src", "direct")
const parts = Object.fromEntries([
  ...fs.readdirSync(directory).filter((name) => name.endsWith(".ts")).sort().map((name) => {
    const base = name.slice(0, -".ts".length)
    return [`./direct/${base}.js`, { id: `claude-peers:${base}`, entry: `command/src/direct/${name}` }]
  }),
  ["./CommandLine.js", { id: "claude-peers:command-line", entry: "command/src/CommandLine.ts" }]
])

const partsPlugin = {
  name: "parts",
  setup(build) {
    build.onResolve({ filter: /^\.\/(direct\/[A-Za-z]+|CommandLine)\.js$/ }, (args) => {
      const part = parts[args.path]
      if (part === undefined) throw new Error(`${args.path}: no such part`)
      return { path: part.id, external: true }
    })
  }
}

/**
 * The build's one replacement table: each module is replaced, for the command's bundle only and
 * where one of our library modules (`src/`) imports it, by a module of the command's (`command/src/`)
 * with the same exports. The library imports the originals. A stand-in that loads its original on
 * first use does it through `require`, which esbuild turns into a call of the original's lazy
 * initializer, so the first use is still synchronous.
 * - The error classes (`Errors.ts`, `@effect/platform/Error`): the library builds them when
 *   imported; the command builds them on the first failure, and a command that succeeds never does.
 *   `list --json` measured 6 ms (0.09× `node -e 0`) faster in one interleaved run, the lazy
 *   initializers' wrapping included. `EAGER_ERRORS=1` keeps the library's modules.
 * - The file port's watch (`FilesNodeWatch.ts`), its only use of `Stream`, in the parts that watch
 *   (`watching`): the full command line initializes `Stream` and the channel machinery only when it
 *   runs `watch`. The other parts do not carry the watch at all (`replacementsOf`).
 * - `kill(pid, 0)` (`SignalZero.ts`) through the binding, which answers a dead pid without building
 *   an error.
 * - The registry scan without turns of the event loop between its batches (`ScanBatches.ts`): the
 *   command has no host whose event loop must turn during a scan.
 */
const onFirstUse = [
  ...(process.env.EAGER_ERRORS === undefined
    ? [["src/domain/Errors.ts", "command/src/ErrorsOnFirstUse.ts"], ["@effect/platform/Error", "command/src/PlatformErrorsOnFirstUse.ts"]]
    : []),
  ["src/layers/FilesNodeWatch.ts", "command/src/FilesNodeWatchOnFirstUse.ts"],
  ["src/layers/SignalZero.ts", "command/src/SignalZero.ts"],
  ["src/services/ScanBatches.ts", "command/src/ScanBatches.ts"]
].map(([original, replacement]) => [original.startsWith("src/") ? path.join(root, original) : original, path.join(root, replacement)])

/**
 * The parts that watch a directory: `watch`, and the full command line, which runs any command.
 * Every other part gets `command/src/FilesNodeWatchNone.ts` in place of the port's watch, so that it carries
 * neither `Stream` nor the channel machinery, and the build fails if such a part holds the one
 * caller of the port's watch (the `Watch` service).
 */
const watching = new Set(["claude-peers:watch", "claude-peers:command-line"])
const watchCaller = "src/services/Watch.ts"

/** A part's replacements: the table above, with the watch left out where the part never watches. */
const replacementsOf = (id) =>
  watching.has(id)
    ? onFirstUse
    : onFirstUse.map((
      [original, replacement]
    ) => [original, original === path.join(root, "src/layers/FilesNodeWatch.ts") ? path.join(root, "command/src/FilesNodeWatchNone.ts") : replacement])

/**
 * Resolves each module of `table` to its replacement where a library module imports it: by a relative
 * path (`./Errors.js`, `../domain/Errors.js`) for our own modules, by its name for a package's.
 */
const replacing = (table) => {
  const library = path.join(root, "src") + path.sep
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")
  const names = table.map(([original]) => path.isAbsolute(original) ? `\\.\\.?/(?:.*/)?${escape(path.basename(original, ".ts"))}\\.js` : escape(original))
  const filter = new RegExp(`^(?:${names.join("|")})$`)
  return {
    name: "replacements",
    setup(build) {
      build.onResolve({ filter }, (args) => {
        if (!args.importer.startsWith(library)) return undefined
        const target = args.path.startsWith(".") ? path.join(args.resolveDir, args.path.replace(/\.js$/, ".ts")) : args.path
        const replacement = table.find(([original]) => original === target)?.[1]
        return replacement === undefined || args.importer === replacement ? undefined : { path: replacement }
      })
    }
  }
}

/** Whether a part's code holds any of the watch's caller (a module tree-shaken away holds nothing). */
const holdsWatchCaller = (result) =>
  Object.entries(Object.values(result.metafile.outputs)[0].inputs).some(
    ([file, input]) => path.resolve(root, file) === path.join(root, watchCaller) && input.bytesInOutput > 0
  )

/**
 * Checks a part against `watching`: one that watches holds the caller (else the check could not
 * see it, a path esbuild spelled otherwise, say), one without the watch does not.
 */
const checkWatch = (id) => (result) => {
  if (watching.has(id) && !holdsWatchCaller(result)) throw new Error(`${id}: the part watches, but the build cannot find ${watchCaller} in it`)
  if (!watching.has(id) && holdsWatchCaller(result)) {
    throw new Error(`${id}: the part holds ${watchCaller}, so it must keep the port's watch (add it to \`watching\`)`)
  }
  return result
}

const ours = [path.join(root, "src") + path.sep, path.join(root, "command", "src") + path.sep]

const bundle = (entry, plugins, replacements = onFirstUse) =>
  esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    write: false,
    outfile: "part.cjs",
    // Minified after the interop rewrite below, which reads esbuild's helper by its name.
    minify: false,
    platform: "node",
    target: "node20",
    format: "cjs",
    // ESM builds of the dependencies tree-shake; their CommonJS builds do not.
    mainFields: ["module", "main"],
    conditions: ["import"],
    // A script compiled by `vm.Script` has no module loader behind it: `import()` must be `require`.
    supported: { "dynamic-import": false },
    legalComments: "none",
    metafile: true,
    // Effect's modules, patched where they do start-up work the command never needs (see the module);
    // our own modules, with the pure annotations that let esbuild drop what a part does not use.
    plugins: [libraryPatchesPlugin, replacing(replacements), purePlugin(ours), ...plugins],
    logLevel: "warning"
  })

/**
 * `import * as fs from "node:fs"` bundles as `fs = __toESM(require("node:fs"), 1)`: a new object with
 * a getter for each of the module's exports, made at start-up for every module that imports it (in
 * `list`, nine of them: about 1.5 ms here). A namespace import of a Node built-in only reads the
 * module's properties, so the module itself serves: such an assignment becomes the plain `require`.
 * Only the copy has a `default`, so the build fails if any name so assigned is read as `.default`
 * (what esbuild makes of a default import); dynamic imports keep their copy.
 */
const builtinNamespace = /([\w$]+) = __toESM\((require\("node:[a-z_/]+"\))(?:, 1)?\)/g

const lazyModuleKey = /(= __esm\(\{\n\s*)"[^"\n]+"\(\)/g

const finish = async (result) => {
  const names = new Set()
  // Each lazily initialized module is keyed by its path, which only names its initializer: the
  // bundle's own minifier would shorten it, the later one does not know to.
  const code = result.outputFiles[0].text
    .replace(builtinNamespace, (_, name, call) => (names.add(name), `${name} = ${call}`))
    .replace(lazyModuleKey, "$1\"init\"()")
  for (const name of names) {
    if (new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?:\\.default\\b|\\[\\s*["']default["']\\s*\\])`).test(code)) {
      throw new Error(`${name}: a Node built-in's namespace, read as \`.default\` (a default import?): import it as a namespace`)
    }
  }
  if (process.env.NOMINIFY !== undefined) return { code, metafile: result.metafile }
  const minified = await esbuild.transform(code, { minify: true, format: "cjs", platform: "node", target: "node20", legalComments: "none" })
  return { code: minified.code, metafile: result.metafile }
}

const [dispatcher, ...built] = await Promise.all([
  bundle("command/src/bin.ts", [partsPlugin]).then(finish),
  ...Object.values(parts).map((part) => bundle(part.entry, [], replacementsOf(part.id)).then(checkWatch(part.id)).then(finish))
])

/**
 * Each part is a whole bundle with its own copy of what it uses, kept as its own function
 * expression at byte offsets the file's header lists. The loader compiles the entry, then only the
 * part the entry asks for, each with its own code cache: `list` never reads, compiles or
 * initializes the command-line parser, and a cache written by `list` does not grow with it.
 */
// A hashbang is only valid on a file's first line.
// esbuild escapes every string and regular expression to ASCII; an unminified build also keeps
// comments, whose characters are escaped here alike (harmless in a comment).
const text = (result) => result.code.replace(/^#!.*\n/, "").replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
const wrap = (code) => `(function (exports, require, module, __filename, __dirname) {\n${code}})\n`
const sections = [["entry", wrap(text(dispatcher))], ...Object.values(parts).map((part, i) => [part.id, wrap(text(built[i]))])]
const headerBytes = 2048
const title = "// claude-peers command: an entry and the parts it loads, each a function expression at the offsets below\n"
const index = {}
let offset = headerBytes
let line = 2
for (const [id, code] of sections) {
  if (!/^[\x00-\x7f]*$/.test(code)) throw new Error(`${id}: the bundle must be ASCII, so that its byte offsets are character offsets`)
  index[id] = [offset, offset + code.length, line]
  offset += code.length
  line += code.split("\n").length - 1
}
const indexLine = `// ${JSON.stringify(index)}`
const padding = headerBytes - title.length - indexLine.length - 1
if (padding < 0) throw new Error("the bundle's header outgrew its bytes")
const source = title + indexLine + " ".repeat(padding) + "\n" + sections.map(([, code]) => code).join("")
// Renamed into place: a command running meanwhile reads the old file or the new one, never half of one.
fs.mkdirSync(path.dirname(outfile), { recursive: true })
const temporary = `${outfile}.${process.pid}.tmp`
fs.writeFileSync(temporary, source)
fs.renameSync(temporary, outfile)

if (analyze) {
  for (const [name, result] of [["entry", dispatcher], ...Object.keys(parts).map((key, i) => [key, built[i]])]) {
    const output = Object.values(result.metafile.outputs)[0]
    // The inputs' shares are esbuild's, before minifying; the part's size is what ships.
    console.log(`${name}: ${(result.code.length / 1024).toFixed(0)} KiB (the sizes below are before minifying)`)
    const byPackage = new Map()
    for (const [file, input] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)
      const key = match === null ? "(claude-peers)" : match[1]
      byPackage.set(key, (byPackage.get(key) ?? 0) + input.bytesInOutput)
    }
    for (const [pkg, bytes] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`${String(bytes).padStart(8)}  ${pkg}`)
    const largest = Object.entries(output.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).slice(0, Number(process.env.ANALYZE_TOP ?? 12))
    for (const [file, input] of largest) console.log(`${String(input.bytesInOutput).padStart(8)}    ${file}`)
  }
}
console.log(`${path.relative(root, outfile)}: ${(Buffer.byteLength(source) / 1024).toFixed(0)} KiB`)
