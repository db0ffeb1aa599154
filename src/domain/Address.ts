/**
 * The address rule: what `address` a live session gets. This is the one function that decides it;
 * the registry calls it once per live session with what the other live sessions share with it.
 *
 * A name is an address only where Claude Code 2.1.332 would read it as that session's name. Its
 * `SendMessage` parses a `to` as another kind of address first, and never looks such a text up as
 * a name (`parsedAsAddress`): a message sent to it would go elsewhere, or nowhere. For those, and
 * for a name or an id another live session shares, the address is the socket form, which no other
 * process can hold.
 */
import { normalizeName } from "./Names.js"
import type { Session, Unaddressable } from "./Session.js"

/** Schemes and socket paths, as Claude Code's address parser reads the start of a `to`. */
const socketPathWhole = /^\/\S*\.sock$/
const socketPathStart = /^\/\S*\.sock/
const windowsPipe = /^[\\/]{2}[.?][\\/]pipe[\\/]/i
/** A cloud or bridge session id, whole. */
const sessionIdWhole = /^(?:session|cse)_(?:vrtx_|bdrk_)?(?:staging_|local_)?01[1-9a-z]{22}$/i
/** A local session id, whole. */
const localIdWhole = /^local_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/
/** Any session id inside a text. */
const anyIdInside = /(?:session|cse)_(?:vrtx_|bdrk_)?(?:staging_|local_)?01[1-9a-z]{22}|local_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/i
/** An opening bracket other than `(`, `{` and `（`: Claude Code reads an id after one as the address. */
const openingBracket = /[^\P{Ps}({\uFF08]/u
/** What Claude Code removes before it looks for an id after a bracket. */
const invisible = /(?!\s)[\p{Default_Ignorable_Code_Point}\p{M}\p{C}]/gu
/** `name [id]`: a trailing bracketed id is taken for the address. */
const trailingBracketedId = /\S \[([\w-]+)\]$/
const bridgeId = /^(?:session|cse)_(?:staging_|local_)?01[1-9A-HJ-NP-Za-km-z]{22}$/
const localIdLoose = /^local_[0-9a-f-]{8,72}$/

const hasScheme = (text: string): boolean =>
  text.startsWith("uds:") || text.startsWith("bridge:") || text.startsWith("did:") || socketPathWhole.test(text) ||
  windowsPipe.test(text)

const idAfterBracket = (text: string): boolean => {
  const at = text.search(openingBracket)
  return at !== -1 && anyIdInside.test(text.slice(at).normalize("NFKC").replace(invisible, ""))
}

/**
 * Whether Claude Code 2.1.332 would read `name`, handed to `SendMessage` as `to`, as something else
 * than a session's name: a `uds:`, `bridge:` or `did:` address, a socket path, a session id, or a
 * name followed by a bracketed id (`name [session_01…]`). Each test runs on the text and on its
 * normalized form, as Claude Code's does. Claude Code has one more such rule, for remote sessions
 * behind a feature flag; it does not apply to local sessions.
 */
export const parsedAsAddress = (name: string): boolean => {
  const normalized = normalizeName(name)
  if (hasScheme(name) || hasScheme(normalized)) return true
  if (sessionIdWhole.test(normalized) || localIdWhole.test(normalized)) return true
  if (socketPathStart.test(name) || socketPathStart.test(normalized)) return true
  if (idAfterBracket(name) || idAfterBracket(normalized)) return true
  const bracketed = trailingBracketedId.exec(name.trim())?.[1]
  return bracketed !== undefined && (bridgeId.test(bracketed) || localIdLoose.test(bracketed))
}

/** What the other live sessions (of the caller's view) share with a session. */
export interface Shared {
  /** Another live session's name is the same under Claude Code's name normalization. */
  readonly name: boolean
  /** Another live session carries the same session id (`--resume`, `--session-id`, `--continue`). */
  readonly sessionId: boolean
  /** The sender is not in the session's Claude home (`AddressScope`): no name reaches it from there. */
  readonly otherHome?: boolean
}

/**
 * A live session's `address` and why it has none: null when it has no socket or is another user's;
 * its name when the name reaches it alone; else `uds:<socket>`.
 */
export const addressOf = (
  session: Pick<Session, "name" | "socketPath">,
  unaddressable: Unaddressable | null,
  shared: Shared
): { readonly address: string | null; readonly unaddressable: Unaddressable | null } => {
  if (session.socketPath === null) return { address: null, unaddressable: "no_socket" }
  if (unaddressable !== null) return { address: null, unaddressable }
  const byName = shared.otherHome !== true && !shared.name && !shared.sessionId && !parsedAsAddress(session.name)
  return { address: byName ? session.name : `uds:${session.socketPath}`, unaddressable: null }
}

/** Whom an `address` serves. */
export interface AddressScope {
  /**
   * Whether a name can be an address at all: only for a sender in the session's own Claude home
   * (from another home Claude Code answers "No agent named … is reachable"). So it is false for
   * sessions listed over several homes, or from another home than the caller's own.
   */
  readonly names: boolean
}

/** Every live session with its address, decided against the others of `sessions` (one home's). */
export const withAddresses = (sessions: ReadonlyArray<Session>, scope: AddressScope = { names: true }): ReadonlyArray<Session> => {
  const names = new Map<string, number>()
  const ids = new Map<string, number>()
  for (const s of sessions) {
    const name = normalizeName(s.name)
    names.set(name, (names.get(name) ?? 0) + 1)
    ids.set(s.sessionId, (ids.get(s.sessionId) ?? 0) + 1)
  }
  return sessions.map((s) => ({
    ...s,
    ...addressOf(s, s.unaddressable === "other_user" ? "other_user" : null, {
      name: names.get(normalizeName(s.name))! > 1,
      sessionId: ids.get(s.sessionId)! > 1,
      otherHome: !scope.names
    })
  }))
}
