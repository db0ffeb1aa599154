/**
 * Pure functions over JSON text and parsed JSON values that hold for any input a settings file can
 * bring: none of them recurses, so no document (a settings file may be 1 MiB of `[`) can exhaust
 * the stack, and each runs in time linear in its input.
 */

/** A replacement of `length` characters at `offset` with `content`, as jsonc-parser spells an edit. */
export interface TextEdit {
  readonly offset: number
  readonly length: number
  readonly content: string
}

const quote = 0x22
const backslash = 0x5c
const openers = new Set([0x5b, 0x7b])
const closers = new Set([0x5d, 0x7d])

/**
 * The deepest nesting of arrays and objects in the text: `{}` is 1, `{"a":[]}` is 2. Brackets
 * inside strings do not count. Text that is not JSON gets a number too (an unterminated string
 * ends the count), so that a caller can check the depth before handing the text to a parser.
 */
export const nestingDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === quote) {
      for (i++; i < text.length; i++) {
        const inString = text.charCodeAt(i)
        if (inString === backslash) i++
        else if (inString === quote) break
      }
    } else if (openers.has(code)) {
      depth++
      if (depth > deepest) deepest = depth
    } else if (closers.has(code)) {
      depth--
    }
  }
  return deepest
}

/**
 * Applies edits that do not overlap, in one pass. jsonc-parser's `applyEdits` copies the whole
 * text once per edit, which for the thousands of removals a document of duplicates needs is
 * quadratic. Edits that overlap are a bug of the caller's, never a property of a document.
 */
export const applyTextEdits = (text: string, edits: ReadonlyArray<TextEdit>): string => {
  const sorted = [...edits].sort((a, b) => a.offset - b.offset)
  const pieces: Array<string> = []
  let from = 0
  for (const edit of sorted) {
    if (edit.offset < from) throw new Error(`applyTextEdits: an edit at ${edit.offset} overlaps the one before it`)
    pieces.push(text.slice(from, edit.offset), edit.content)
    from = edit.offset + edit.length
  }
  pieces.push(text.slice(from))
  return pieces.join("")
}

/** An array or object being written: its members in order, and how many are written. */
interface Open {
  readonly keys: ReadonlyArray<string> | null
  readonly valueAt: (index: number) => unknown
  readonly size: number
  readonly closing: string
  written: number
}

const opened = (value: object): Open => {
  if (Array.isArray(value)) {
    return { keys: null, valueAt: (i) => value[i], size: value.length, closing: "]", written: 0 }
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  return { keys, valueAt: (i) => record[keys[i]!], size: keys.length, closing: "}", written: 0 }
}

/** A string is cut before it is quoted: a megabyte-long value needs only its first characters. */
const scalarJson = (value: unknown, limit: number): string =>
  typeof value === "string"
    ? JSON.stringify(value.slice(0, limit + 1))
    : typeof value === "number" || typeof value === "boolean"
    ? JSON.stringify(value)
    : "null"

/** A JSON object: not null, not an array. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A parsed JSON value as compact JSON, cut after `limit` characters (with `...`): an error message
 * names a value, it does not reprint a document. `JSON.stringify` would give the same text, but it
 * recurses (a value nested a few thousand levels deep overflows the stack) and renders all of a
 * value before anything can be cut. Here the work stops with the output, beyond listing the keys of
 * each object it enters.
 */
export const jsonPreview = (value: unknown, limit = 60): string => {
  let out = ""
  const open: Array<Open> = []
  let next: { readonly value: unknown } | null = { value }
  while (out.length <= limit) {
    if (next !== null) {
      const { value } = next
      next = null
      if (typeof value === "object" && value !== null) {
        out += Array.isArray(value) ? "[" : "{"
        open.push(opened(value))
      } else {
        out += scalarJson(value, limit)
      }
      continue
    }
    const innermost = open[open.length - 1]
    if (innermost === undefined) break
    if (innermost.written === innermost.size) {
      out += innermost.closing
      open.pop()
      continue
    }
    const key = innermost.keys?.[innermost.written]
    out += `${innermost.written === 0 ? "" : ","}${key === undefined ? "" : `${scalarJson(key, limit)}:`}`
    next = { value: innermost.valueAt(innermost.written) }
    innermost.written++
  }
  return out.length <= limit ? out : `${out.slice(0, limit - 3)}...`
}
