/**
 * Session names as Claude Code compares them when it keeps user-given names unique and when it
 * addresses a peer by name: two names equal under this normalization are one address. So `resolve
 * --name "Api Server"` finds the session named `api-server`, and two live sessions named `Docs` and
 * `docs` share one address, which makes resolving either by name a refusal.
 *
 * The steps are Claude Code 2.1.332's, in its order: angle brackets (and the characters that look
 * like them) become parentheses, NFKC, control, format and surrogate code points are removed unless
 * they are white space, then trim, lower case, and each run of white space becomes `-`.
 */

/** Characters that read as `<` or `>`, as Claude Code lists them (it rewrites all of them alike). */
const lookAlikes: ReadonlyArray<readonly [string, "<" | ">"]> = [
  ...([
    ["\u02C2", "<"],
    ["\u02C3", ">"],
    ["\u1433", ">"],
    ["\u1438", "<"],
    ["\u16B2", "<"],
    ["\u2039", "<"],
    ["\u203A", ">"],
    ["\u226E", "<"],
    ["\u226F", ">"],
    ["\u227A", "<"],
    ["\u227B", ">"],
    ["\u2280", "<"],
    ["\u2281", ">"],
    ["\u22D6", "<"],
    ["\u22D7", ">"],
    ["\u2329", "<"],
    ["\u232A", ">"],
    ["\u276C", "<"],
    ["\u276D", ">"],
    ["\u276E", "<"],
    ["\u276F", ">"],
    ["\u2770", "<"],
    ["\u2771", ">"],
    ["\u27E8", "<"],
    ["\u27E9", ">"],
    ["\u2991", "<"],
    ["\u2992", ">"],
    ["\u2993", "<"],
    ["\u2994", ">"],
    ["\u29FC", "<"],
    ["\u29FD", ">"],
    ["\u2A79", "<"],
    ["\u2A7A", ">"],
    ["\u2AA6", "<"],
    ["\u2AA7", ">"],
    ["\u3008", "<"],
    ["\u3009", ">"],
    ["\uFE3F", "<"],
    ["\uFE40", ">"],
    ["\uFE64", "<"],
    ["\uFE65", ">"],
    ["\uFF1C", "<"],
    ["\uFF1E", ">"],
    ["\u{16F3F}", ">"],
    ["\u{1D236}", "<"],
    ["\u{1D237}", ">"]
  ] as const),
  ...Array.from("\u226A\u22D8\u2AA1\u2AF7\u27EA\uFE3D", (c) => [c, "<"] as const),
  ...Array.from("\u226B\u22D9\u2AA2\u2AF8\u27EB\uFE3E", (c) => [c, ">"] as const)
]

/** `<` or `>` and every character that reads as it. */
const readingAs = (bracket: "<" | ">"): string => lookAlikes.reduce<string>((chars, [c, reads]) => (reads === bracket ? chars + c : chars), bracket)

/**
 * The bracket patterns, built on the first name that needs them: their Unicode classes cost more to
 * build than a whole `list` spends on its names, and names are almost always plain ASCII.
 */
interface BracketPatterns {
  readonly anyBracketed: RegExp
  readonly openingOutsideWords: RegExp
  readonly anyClosing: RegExp
}

let bracketPatterns: BracketPatterns | undefined

const makeBracketPatterns = (): BracketPatterns => {
  const opening = readingAs("<")
  const closing = readingAs(">")
  /** An opening bracket, and what follows it up to a closing one, if one closes it. */
  const bracketed = `[${opening}](?:([^${opening}${closing}]*)[${closing}])?`
  return {
    anyBracketed: new RegExp(bracketed, "gu"),
    /**
     * Without any closing bracket in the name, an opening look-alike that is a letter of a Canadian
     * Aboriginal or Runic word is left alone, as Claude Code leaves it.
     */
    openingOutsideWords: new RegExp(
      `(?!\\p{L}(?![${opening}${closing}])[\\p{Script=Canadian_Aboriginal}\\p{Script=Runic}]{1,32}(?![\\p{L}\\p{N}\\p{C}\\p{M}]))${bracketed}`,
      "gu"
    ),
    anyClosing: new RegExp(`[${closing}]`, "u")
  }
}

const asParentheses = (name: string): string => {
  const { anyBracketed, anyClosing, openingOutsideWords } = (bracketPatterns ??= makeBracketPatterns())
  return name.replace(anyClosing.test(name) ? anyBracketed : openingOutsideWords, (_, inner: string | undefined) => inner === undefined ? "(" : `(${inner})`)
}

/** Control, format and surrogate code points; white space among them (tab, line breaks) is kept. */
const invisible = /[\p{Cc}\p{Cf}\p{Cs}]/gu
const whiteSpace = /\s/

/**
 * Printable ASCII without `<` and `>`: every step but the last three leaves such a name as it is
 * (NFKC changes no ASCII character, and none of them is invisible), so it skips them. A test holds
 * the shortcut to the full steps.
 */
const plainAscii = /^[\x20-\x3b\x3d\x3f-\x7e]*$/

export const normalizeName = (name: string): string => plainAscii.test(name) ? name.trim().toLowerCase().replace(/\s+/g, "-") : normalizeFully(name)

/** Every step, in Claude Code's order. */
export const normalizeFully = (name: string): string =>
  asParentheses(name)
    .normalize("NFKC")
    .replace(invisible, (c) => (whiteSpace.test(c) ? c : ""))
    .trim()
    .toLowerCase()
    .replace(/\s+/g, "-")
