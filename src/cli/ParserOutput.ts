/**
 * What `@effect/cli` prints, held to the command's rules. It writes help and its usage errors
 * through Effect's `Console`, in colour, quoting the arguments it could not parse as they were
 * typed: an argument can carry escape sequences (OSC 52 writes the clipboard), a help page piped to
 * a file would carry colour codes, and a write that fails would go unnoticed.
 * - Help and the version go to stdout (`log`), like every output of the command, with
 *   colours only for a terminal and never with `NO_COLOR` set (to anything but the empty string, as
 *   no-color.org says).
 * - A usage error is not printed by the parser: the command reports it once, as the contract's usage
 *   error, with every text it quotes made terminal-safe (`usageMessage`).
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Arr from "effect/Array"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as tty from "node:tty"
import { lineTo, type OutputFailed } from "./Output.js"
import { terminalSafe, withColours } from "./Text.js"

export const colourOn = (fd: number): boolean => tty.isatty(fd) && (process.env.NO_COLOR ?? "") === ""

const safeSpan = (span: Span.Span): Span.Span => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return { ...span, value: terminalSafe(span.value) }
    case "Highlight":
    case "Strong":
    case "Weak":
      return { ...span, value: safeSpan(span.value) }
    case "Sequence":
      return { ...span, left: safeSpan(span.left), right: safeSpan(span.right) }
  }
}

const safeDoc = (doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc => {
  switch (doc._tag) {
    case "Empty":
      return doc
    case "Header":
    case "Paragraph":
      return { ...doc, value: safeSpan(doc.value) }
    case "DescriptionList":
      return { ...doc, definitions: Arr.map(doc.definitions, ([term, description]) => [safeSpan(term), safeDoc(description)] as const) }
    case "Enumeration":
      return { ...doc, elements: Arr.map(doc.elements, safeDoc) }
    case "Sequence":
      return { ...doc, left: safeDoc(doc.left), right: safeDoc(doc.right) }
  }
}

/** A parser's usage error as one plain sentence (or a few lines), every quoted argument terminal-safe. */
export const usageMessage = (doc: HelpDoc.HelpDoc): string => withColours(HelpDoc.toAnsiText(safeDoc(doc)), false).trim()

/**
 * Runs the parser with its console held to the rules above. `parse` is given the console it was
 * called with, for the commands it runs: their own output is none of the parser's. A help page that
 * could not be written fails the command as any lost output does.
 */
export const withParserConsole = <A, E, R>(
  parse: (commandConsole: Console.Console) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | OutputFailed, R> =>
  Console.consoleWith((base) => {
    let lost: OutputFailed | undefined
    const keepFirstLoss = (failure: OutputFailed) =>
      Effect.sync(() => {
        lost ??= failure
      })
    const parserConsole: Console.Console = {
      ...base,
      log: (...parts: ReadonlyArray<unknown>) => Effect.catchAll(lineTo(base, withColours(parts.join(" "), colourOn(1))), keepFirstLoss),
      error: () => Effect.void
    }
    return parse(base).pipe(
      Console.withConsole(parserConsole),
      Effect.zipLeft(Effect.suspend(() => (lost === undefined ? Effect.void : Effect.fail(lost))))
    )
  })
