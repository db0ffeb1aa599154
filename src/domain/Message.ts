/**
 * What a message to another session must be, decided before anything resolves or runs: a bad
 * message costs nothing and relays nothing. Plain functions over plain values, so that the command
 * line's recognizer can refuse a bad message without loading anything more.
 */

/**
 * The longest message sent in one piece, in UTF-16 code units. Claude Code 2.1.332's `SendMessage`
 * refuses only an empty or white-space message and states no length limit of its own, so this bound
 * is claude-peers' own, conservative: the message travels as one tool argument of a model turn and
 * one frame on the receiver's socket, and a receiver shows a very long text only in part.
 */
export const maxMessageLength = 100_000

/** Why a message cannot be sent as it is. */
export type MessageProblem = "empty" | "too_long" | "not_utf8"

/** An unpaired UTF-16 surrogate: a string holding one has no UTF-8 encoding. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Why `message` cannot be sent, or undefined: empty or white space only (what `SendMessage` itself
 * refuses), not representable as UTF-8, or over `maxMessageLength`.
 */
export const messageProblem = (message: string): MessageProblem | undefined => {
  if (message.trim().length === 0) return "empty"
  if (loneSurrogate.test(message)) return "not_utf8"
  if (message.length > maxMessageLength) return "too_long"
  return undefined
}

/** The problem in a sentence, which never quotes the message: it may be long, private, or hold escape sequences. */
export const messageProblemSentence = (problem: MessageProblem, length: number, limit: number = maxMessageLength): string => {
  switch (problem) {
    case "empty":
      return "the message is empty (white space only counts as empty): nothing to send"
    case "too_long":
      return `the message is ${length} characters long, over the ${limit} claude-peers sends in one message`
    case "not_utf8":
      return "the message is not valid UTF-8 text (or holds an unpaired surrogate), which Claude Code cannot carry"
  }
}
