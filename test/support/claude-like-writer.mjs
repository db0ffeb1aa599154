#!/usr/bin/env node
/**
 * A writer that treats `settings.json` as Claude Code does: read it, change its own key, write
 * `settings.json.tmp.<pid>` and rename it over the file, with no lock. It adds one new key per
 * round (`<prefix><n>`) and prints `wrote <n>` once the rename is made, until the stop file exists,
 * then prints `{"written":N,"unparsable":U}`: every key it wrote must still be in the file at the
 * end, whatever else wrote meanwhile.
 *
 * Usage: node claude-like-writer.mjs SETTINGS_FILE STOP_FILE PREFIX
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"

const [file, stopFile, prefix] = process.argv.slice(2)
const temp = `${file}.tmp.${process.pid}`
let written = 0
let unparsable = 0

while (!existsSync(stopFile)) {
  let document = {}
  let ok = true
  try {
    const text = readFileSync(file, "utf8")
    document = text === "" ? {} : JSON.parse(text)
  } catch (error) {
    if (error?.code !== "ENOENT") {
      // A torn or invalid file: Claude Code would not write over it with an empty document.
      unparsable++
      ok = false
    }
  }
  if (ok) {
    document[`${prefix}${written}`] = written
    writeFileSync(temp, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600 })
    renameSync(temp, file)
    process.stdout.write(`wrote ${written}\n`)
    written++
  }
  // About three writes a second: far busier than Claude Code, which writes on a settings change.
  // An update overtaken six times in a row fails by contract (five merges, then
  // changed_during_write), and on a loaded machine an update's window from its read to its rename
  // reaches a few hundred milliseconds: a writer much busier than this would make that the norm.
  await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 300))
}
process.stdout.write(`${JSON.stringify({ written, unparsable })}\n`)
