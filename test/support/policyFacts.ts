/**
 * Building blocks for the policy tests: settings files as bytes, readings as Claude Code's reader
 * would report them, and whole sessions as the service would see them.
 */
import * as Observed from "../../src/domain/Observed.js"
import type { SettingsSource, SourceReading } from "../../src/domain/Policy.js"
import type { FileFact, SessionFacts } from "../../src/domain/PolicyEvidence.js"

const utf8 = new TextEncoder()

export const bytes = (text: string): Uint8Array => utf8.encode(text)

/** A file that holds `{"crossSessionInbound": value}` plus any other members. */
export const settingsFile = (path: string, value: unknown, others: Record<string, unknown> = {}): FileFact => ({
  path,
  read: { _tag: "Bytes", bytes: bytes(JSON.stringify({ ...others, crossSessionInbound: value })) }
})

export const textFile = (path: string, text: string): FileFact => ({ path, read: { _tag: "Bytes", bytes: bytes(text) } })
export const missing = (path: string): FileFact => ({ path, read: { _tag: "Missing" } })
export const failed = (path: string): FileFact => ({ path, read: { _tag: "Failed", reason: "permission denied" } })

type Launchable<A> = A | null | Observed.Observed<A>

const isObserved = <A>(value: Launchable<A>): value is Observed.Observed<A> =>
  typeof value === "object" && value !== null && "_tag" in value && (value._tag === "Read" || value._tag === "Unreadable")

/** A launch fact as a case spells it: the value, null for "could not be read", or an `Observed`. */
const observed = <A>(value: Launchable<A>): Observed.Observed<A> =>
  isObserved(value) ? value : value === null ? Observed.unreadable("permission denied") : Observed.read(value as A)

export type SessionOverrides = Omit<Partial<SessionFacts>, "cmdline" | "environ"> & {
  readonly cmdline?: Launchable<ReadonlyArray<string>>
  readonly environ?: Launchable<ReadonlyMap<string, string>>
}

/** A session with nothing set anywhere, readable throughout; override what a case needs. */
export const session = ({ cmdline, environ, ...overrides }: SessionOverrides = {}): SessionFacts => ({
  pid: 4242,
  sessionId: "6f1c0000-0000-4000-8000-000000000000",
  name: "app",
  hasSocket: true,
  cmdline: observed(cmdline === undefined ? ["/usr/local/bin/claude"] : cmdline),
  environ: observed(environ === undefined ? new Map([["HOME", "/home/u"]]) : environ),
  managed: [missing("/etc/claude-code/managed-settings.json")],
  flag: null,
  user: missing("/home/u/.claude/settings.json"),
  project: missing("/home/u/app/.claude/settings.json"),
  local: [missing("/home/u/app/.claude/settings.local.json")],
  globalConfig: [missing("/home/u/.claude.json")],
  sdkHosted: false,
  ...overrides
})

export const reading = (
  source: SettingsSource,
  state: SourceReading["state"],
  value: unknown = null,
  problem: SourceReading["problem"] = null
): SourceReading => ({ source, path: `/files/${source}`, value, state, problem, detail: null })

export const set = (source: SettingsSource, value: "accept" | "hold" | "refuse") => reading(source, "set", value)
export const invalidValue = (source: SettingsSource, value: unknown = "Accept") => reading(source, "invalid", value, "invalid_value")
export const unreadable = (source: SettingsSource) => reading(source, "unreadable")
