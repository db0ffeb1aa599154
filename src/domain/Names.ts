/**
 * Session names as Claude Code compares them when it keeps user-given names unique and when it
 * addresses a peer by name: two names equal under this normalization are one address. So `resolve
 * --name "Api Server"` finds the session named `api-server`, and two live sessions named `Docs` and
 * `docs` share one address, which makes resolving either by name a refusal.
 */

/** Control, format and surrogate code points; white space among them (tab, line breaks) is kept. */
const invisible = /[\p{Cc}\p{Cf}\p{Cs}]/gu
const whiteSpace = /\s/u

/** NFKC, invisible characters removed except white space, trimmed, lower-cased, white-space runs as `-`. */
export const normalizeName = (name: string): string =>
  name
    .normalize("NFKC")
    .replace(invisible, (c) => (whiteSpace.test(c) ? c : ""))
    .trim()
    .toLowerCase()
    .replace(/\s+/gu, "-")
