/**
 * Start-up work of Effect's own modules that the command never needs, patched out of the command's
 * bundle (`build-bin.mjs`); the library imports Effect as it is. Each patch names its module, the
 * exact texts it replaces (a text that is missing fails the build: another version of Effect is
 * read again before it is bundled), and code it appends. `test/EffectPatches.test.ts` holds each
 * patch to the behaviour of the code it replaces.
 */
import * as Arr from "effect/Array"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { structuralRegionState } from "effect/Utils"

/**
 * `MetricBoundaries.fromIterable`'s de-duplication. `Arr.dedupe` compares with `Equal.equals`, which
 * makes an `arguments` object and boxes both numbers at every comparison. For two numbers
 * `Equal.equals` is `===` unless a structural region's tester says otherwise, so outside a region
 * the same pairwise test runs on `===`, keeping the first of each (two NaN stay two, 0 and -0 one).
 */
const dedupeNumbersSource = `function dedupeNumbers(values) {
  if (structuralRegionState.enabled || !values.every((value) => typeof value === "number")) return Arr.dedupe(values);
  const out = [];
  next: for (const value of values) {
    for (const kept of out) if (kept === value) continue next;
    out.push(value);
  }
  return out;
}`

/** The function the patch appends to the module, over the same `Arr` and region state, for the tests. */
export const dedupeNumbers = new Function("Arr", "structuralRegionState", `${dedupeNumbersSource}\nreturn dedupeNumbers`)(
  Arr,
  structuralRegionState
)

/**
 * The question `Utils` asks: is a frame named `effect_internal_function` in a stack trace taken
 * inside one? Where `Error.prepareStackTrace` cannot be set (a frozen `Error`: `node
 * --frozen-intrinsics`, a lockdown), it is asked as `Utils` asks it, of the formatted stack.
 */
export const isNotOptimizedAwayProbe = `(() => {
  const prepare = Error.prepareStackTrace;
  const ask = (_, frames) => frames.some((frame) => frame.getFunctionName() === "effect_internal_function");
  try {
    Error.prepareStackTrace = ask;
  } catch {}
  if (Error.prepareStackTrace !== ask) {
    return standard.effect_internal_function(() => new Error().stack)?.includes("effect_internal_function") === true;
  }
  try {
    return standard.effect_internal_function(() => new Error().stack) === true;
  } finally {
    Error.prepareStackTrace = prepare;
  }
})()`

const effectModule = (name) => new RegExp(`[\\\\/]effect[\\\\/]dist[\\\\/]esm[\\\\/]${name.replace(/[/.]/g, (c) => (c === "/" ? "[\\\\/]" : "\\."))}$`)

export const libraryPatches = [
  {
    // The logger module reads `process.stdout` when it is initialized, to pick the pretty logger's
    // colors, and reading it creates the stream: on a pipe (a status line, a script) that loads `net`
    // and the streams, which the command never uses (it prints with `fs.writeSync`, see `Output.ts`).
    // Measured on `list --json` into a pipe: 15 M of 180 M instructions. The three constants become
    // functions, computed when a pretty logger is made.
    module: effectModule("internal/logger.js"),
    edits: [
      ['const hasProcessStdout = typeof process === "object" && process !== null && typeof process.stdout === "object" && process.stdout !== null;', ""],
      ["const processStdoutIsTTY = hasProcessStdout && process.stdout.isTTY === true;", ""],
      ['const hasProcessStdoutOrDeno = hasProcessStdout || "Deno" in globalThis;', ""],
      [/\b(hasProcessStdout|processStdoutIsTTY|hasProcessStdoutOrDeno)\b/g, "$1()"]
    ],
    append: `
function hasProcessStdout() { return typeof process === "object" && process !== null && typeof process.stdout === "object" && process.stdout !== null }
function processStdoutIsTTY() { return hasProcessStdout() && process.stdout.isTTY === true }
function hasProcessStdoutOrDeno() { return hasProcessStdout() || "Deno" in globalThis }
`
  },
  {
    // `Utils` asks whether V8 keeps a frame's name in stack traces by formatting one, `new
    // Error().stack`: formatting a position in the bundle makes V8 index the line ends of the whole
    // part first (3.75 M instructions of `list --json`'s 155 M, 3.4 M of them the line ends). The
    // same question is asked of the frames themselves, through a `prepareStackTrace` of its own for
    // that one error, which formats nothing.
    module: effectModule("Utils.js"),
    edits: [[
      '/*#__PURE__*/standard.effect_internal_function(() => new Error().stack)?.includes("effect_internal_function") === true;',
      `/*#__PURE__*/${isNotOptimizedAwayProbe};`
    ]]
  },
  {
    // The fiber runtime imports `Micro` for one thing: running a `Micro` yielded inside an `Effect`.
    // Initializing `Micro` (its classes, constants and scheduler) was 0.6 ms of `list --json`'s
    // start-up here, the most of any module after the runtime's own two; it is now initialized
    // when a fiber first meets a `Micro`.
    module: effectModule("internal/fiberRuntime.js"),
    edits: [
      ['import * as Micro from "../Micro.js";', ""],
      [
        "const fiber = Micro.runFork(Micro.provideContext(op, this.currentContext));",
        "const Micro = microModule();\n      const fiber = Micro.runFork(Micro.provideContext(op, this.currentContext));"
      ]
    ],
    append: `
let micro;
function microModule() { return micro ??= require(${JSON.stringify(fileURLToPath(new URL("effect-micro-run.mjs", import.meta.url)))}); }
`
  },
  {
    // The fiber runtime's lifetime histogram, built as the runtime loads, de-duplicates its 35
    // boundaries pairwise: about 600 comparisons, each with an `arguments` object (see `dedupeNumbers`).
    module: effectModule("internal/metric/boundaries.js"),
    edits: [[
      "const values = pipe(iterable, Arr.appendAll(Chunk.of(Number.POSITIVE_INFINITY)), Arr.dedupe);",
      "const values = pipe(iterable, Arr.appendAll(Chunk.of(Number.POSITIVE_INFINITY)), dedupeNumbers);"
    ]],
    append: `
import { structuralRegionState } from "../../Utils.js";
${dedupeNumbersSource}
`
  }
]

/** An esbuild plugin that applies every patch to the module it names. */
export const libraryPatchesPlugin = {
  name: "library-patches",
  setup(build) {
    for (const patch of libraryPatches) {
      build.onLoad({ filter: patch.module }, async (args) => ({
        contents: applyPatch(patch, await fs.promises.readFile(args.path, "utf8"), args.path),
        loader: "js"
      }))
    }
  }
}

/** A module's text with `patch` applied; fails when an edit's text (or pattern) is not there. */
export const applyPatch = (patch, source, file) => {
  let text = source
  for (const [from, to] of patch.edits) {
    const found = typeof from === "string" ? text.includes(from) : text.search(from) !== -1
    if (!found) throw new Error(`${file}: expected \`${from}\``)
    text = text.replace(from, to)
  }
  return text + (patch.append ?? "")
}
