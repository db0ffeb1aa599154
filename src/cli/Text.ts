/**
 * Human output never passes a record's control characters through to the terminal: a name or a
 * path is written by whoever wrote the file, and an escape sequence in it could rewrite the screen
 * or the window title. C0, DEL, C1 and the bidirectional overrides are shown as `\u{…}` escapes.
 */
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

export const terminalSafe = (text: string): string => text.replace(unsafe, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)

/** The longest part of a typed word that a usage error quotes. */
const quotedLength = 200

/**
 * A word of the command line as a message quotes it: whatever was typed, so made terminal-safe
 * (a line feed in it must not start a line of its own), and cut short past `quotedLength`
 * characters, so that a huge argument does not come back whole.
 */
export const quotedWord = (word: string): string => {
  const characters = [...word.slice(0, 2 * quotedLength)]
  const cut = characters.length > quotedLength || word.length > 2 * quotedLength
  return `'${terminalSafe(cut ? `${characters.slice(0, quotedLength).join("")}…` : word)}'`
}

/** What `JSON.stringify` leaves raw among the characters above: it escapes C0 itself, but not DEL, C1 or the overrides. */
const unsafeInJson = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * A value as JSON that is safe on a terminal too (`--json` is often read there): the characters
 * `terminalSafe` escapes are written as `\uXXXX`, which every JSON parser reads back as themselves.
 */
export const jsonText = (value: unknown): string => JSON.stringify(value).replace(unsafeInJson, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** How many items one piece of `jsonArrayPieces` holds. */
export const itemsPerPiece = 256

/**
 * `jsonText(items.map(encode))` as pieces that join to exactly that text, each made only when it is
 * asked for: `[`, then `itemsPerPiece` items at a time, separated by `,`, then `]`. A JSON array is its
 * items' texts joined by commas, so no piece needs the others.
 */
export function* jsonArrayPieces<A>(items: ReadonlyArray<A>, encode: (item: A) => unknown, size = itemsPerPiece): Generator<string, void> {
  if (items.length === 0) {
    yield "[]"
    return
  }
  for (let start = 0; start < items.length; start += size) {
    const text = jsonText(items.slice(start, start + size).map(encode))
    const last = start + size >= items.length
    yield `${start === 0 ? "[" : ","}${text.slice(1, last ? text.length : -1)}`
  }
}

/**
 * An empty last cell leaves its row's padding at the end of the line: that is cut, spaces only.
 * A loop, not `/ +$/`: the regular expression tries the rest of the line from every space of every
 * run, quadratic in a run's length, and a record's 100,000-character name pads its column so.
 */
const withoutTrailingSpaces = (line: string): string => {
  let end = line.length
  while (end > 0 && line.charCodeAt(end - 1) === 32) end--
  return end === line.length ? line : line.slice(0, end)
}

/** Lays out rows as columns separated by two spaces; every cell is made terminal-safe first. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const cells = [header, ...rows].map((row) => row.map(terminalSafe))
  const widths = header.map((_, i) => Math.max(...cells.map((row) => [...(row[i] ?? "")].length)))
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - [...cell].length)))
        .join("  ")
    )
    .map(withoutTrailingSpaces)
    .join("\n")
}

/** Text of several lines, each made terminal-safe: the line breaks are the text's own. */
export const terminalSafeLines = (text: string): string => text.split("\n").map(terminalSafe).join("\n")

/** Select Graphic Rendition (colour, bold), the only escape sequence the command itself writes. */
const sgr = /(\u001b\[[0-9;]*m)/

/** Text that carries its own colours: kept when `colour`, dropped otherwise; everything else terminal-safe. */
export const withColours = (text: string, colour: boolean): string =>
  text.split(sgr).map((part, at) => (at % 2 === 1 ? (colour ? part : "") : terminalSafeLines(part))).join("")
