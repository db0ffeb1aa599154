/**
 * What a command line means, whoever parsed it: the standalone command's recognizer or `@effect/cli`
 * (`Root.ts`). Both hand the same value to the same handlers
 * (`Handlers.ts`) over the same layers, so the two paths cannot answer differently.
 */
import type { WaitState } from "../domain/Errors.js"
import type { InboundPolicy } from "../domain/Settings.js"
import type { Status } from "../domain/Status.js"
import type { ResolveQuery } from "../services/Registry.js"

export type Command =
  | { readonly _tag: "list" }
  | { readonly _tag: "inspect" }
  | { readonly _tag: "resolve"; readonly query: ResolveQuery; readonly allowSharedName: boolean }
  | { readonly _tag: "settings get" }
  | {
    readonly _tag: "settings set"
    readonly value: InboundPolicy
    readonly expectRevision: string | undefined
    /** Absent is false: a command built by a caller of the former shape still refuses a link. */
    readonly throughLink?: boolean
  }
  | { readonly _tag: "settings reset"; readonly expectRevision: string | undefined; readonly throughLink?: boolean }
  /**
   * Without an interval, the watch's default (`Timing`'s `watchInterval`). `filter`: only the events
   * of the sessions it matches (see `WatchFilter.ts`).
   */
  | { readonly _tag: "watch"; readonly intervalMillis: number | undefined; readonly filter: WatchFilter }
  /** Until the one session resolved at the start is in one of `until`; without a timeout, for as long as it takes. */
  | {
    readonly _tag: "wait"
    readonly query: ResolveQuery
    readonly until: ReadonlyArray<WaitState>
    readonly timeoutMillis: number | undefined
  }
  /**
   * Every live session's inbound policy in effect, or the one session's the query names.
   * `managedDirectory` replaces the platform's managed settings directory.
   */
  | {
    readonly _tag: "policy"
    readonly query: ResolveQuery | undefined
    readonly managedDirectory: string | undefined
    /** Answer for a sender of this class only; both classes when undefined. */
    readonly senderMode?: "bypass" | "prompting" | undefined
    /** Resolve the one session by its id even when its name is shared (as `resolve` and `send` do). */
    readonly allowSharedName?: boolean | undefined
  }
  /**
   * A message to one live session. `message` is the text given on the command line, or `stdin` for
   * `-`: read as bytes when the command runs, so that its UTF-8 can be checked.
   */
  | {
    readonly _tag: "send"
    readonly query: ResolveQuery
    readonly message: { readonly _tag: "text"; readonly text: string } | { readonly _tag: "stdin" }
    readonly allowHold: boolean
    readonly allowSharedName: boolean
    /** Without a timeout, `Timing`'s `sendTimeout`. */
    readonly timeoutMillis: number | undefined
  }

/** Which sessions' events `watch` prints: each criterion given must hold (a name compared as Claude Code compares names). */
export interface WatchFilter {
  readonly name: string | undefined
  readonly sessionId: string | undefined
  /** Any of these; empty for every status. */
  readonly statuses: ReadonlyArray<Status>
}

/** One command of the union, by its tag. */
export type CommandOf<T extends Command["_tag"]> = Extract<Command, { readonly _tag: T }>

export interface Invocation {
  /** `--claude-home DIR` (the first, when given more than once); undefined for `CLAUDE_CONFIG_DIR`, then `~/.claude`. */
  readonly claudeHome: string | undefined
  /**
   * Present when several homes are asked for: every `--claude-home` given, in order (`claudeHome`
   * is the first). The commands then read each home, and their sessions carry `home`.
   */
  readonly claudeHomes?: ReadonlyArray<string> | undefined
  /** `--all-homes`: also the default home, `$CLAUDE_CONFIG_DIR`'s and every live Claude Code process's. */
  readonly allHomes?: boolean | undefined
  readonly json: boolean
  readonly command: Command
}

/** A revision as `settings get` prints it: 64 hex digits; uppercase is the same revision. */
export const parseRevision = (text: string): string | undefined => {
  const lower = text.trim().toLowerCase()
  return /^[0-9a-f]{64}$/.test(lower) ? lower : undefined
}

/** The largest interval a timer keeps: past 2^31 - 1 ms one fires at once or never, depending on the runtime. */
export const maxIntervalMillis = 2147483647

/** A positive whole number of milliseconds a timer can keep, or undefined. */
export const parseInterval = (text: string): number | undefined => {
  if (!/^[0-9]+$/.test(text.trim())) return undefined
  const ms = Number(text.trim())
  return ms > 0 && ms <= maxIntervalMillis ? ms : undefined
}
