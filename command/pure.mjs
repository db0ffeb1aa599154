/**
 * Pure annotations for our own modules, added by the command's build (`command/build.mjs`) rather
 * than written in the sources. esbuild drops a module-level value that a part never uses only if
 * building it has no side effects, and it cannot know that of a call (`Schema.Struct({…})`): every
 * call and `new` that a module-level declaration evaluates gets `/* @__PURE__ *\/`, and an initializer
 * esbuild would still keep for what it reads (a spread, which runs an iterator; a property read,
 * which may run a getter) is built in an annotated immediately called arrow. Function bodies and
 * instance fields run later, never at a module's initialization, and are left as they are.
 *
 * It holds because our modules' declarations only build values: none is kept for a side effect of
 * building it.
 */
import * as fs from "node:fs"
import ts from "typescript"

const annotation = "/* @__PURE__ */ "

/** Whether `node` reads what esbuild cannot prove free of side effects outside of a call it may drop. */
const keptForReading = (node) => {
  if (ts.isFunctionLike(node)) return false
  let kept = ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)
  const visit = (child) => {
    if (kept || ts.isFunctionLike(child)) return
    if (ts.isSpreadElement(child) || ts.isSpreadAssignment(child)) kept = true
    else ts.forEachChild(child, visit)
  }
  ts.forEachChild(node, visit)
  return kept
}

/** The source with the annotations; `fileName` only names it for TypeScript's parser. */
export const annotatePure = (source, fileName) => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const inserts = []
  const visit = (node) => {
    if (ts.isFunctionLike(node)) return
    if (ts.isClassLike(node)) {
      for (const clause of node.heritageClauses ?? []) visit(clause)
      for (const member of node.members) {
        const isStatic = ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((m) => m.kind === ts.SyntaxKind.StaticKeyword)
        if (ts.isPropertyDeclaration(member) && isStatic && member.initializer !== undefined) visit(member.initializer)
      }
      return
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) inserts.push([node.getStart(file), annotation])
    ts.forEachChild(node, visit)
  }
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer
        if (init === undefined) continue
        if (ts.isIdentifier(declaration.name) && keptForReading(init)) {
          inserts.push([init.getStart(file), `${annotation}(() => `], [init.getEnd(), ")()"])
        }
        visit(init)
      }
    } else if (ts.isClassDeclaration(statement)) {
      visit(statement)
    }
  }
  // From the end, so that each position still holds; at one position the wrapper opens first.
  inserts.sort((a, b) => b[0] - a[0] || (a[1].startsWith(annotation + "(") ? 1 : -1))
  let text = source
  for (const [at, insert] of inserts) text = text.slice(0, at) + insert + text.slice(at)
  return text
}

/** An esbuild plugin that annotates the TypeScript modules under `directories` as they are loaded. */
export const purePlugin = (directories) => ({
  name: "pure-annotations",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!directories.some((directory) => args.path.startsWith(directory))) return undefined
      return { contents: annotatePure(await fs.promises.readFile(args.path, "utf8"), args.path), loader: "ts" }
    })
  }
})
