/**
 * Hostile registry files for the fuzz properties: records whose members hold any JSON value (nested
 * tens of thousands of levels deep, tens of thousands wide, strings of a hundred thousand characters
 * with escapes, control characters and lone surrogates, every type), written as text so that no
 * deep value is ever built here, then sometimes damaged byte by byte; file names that are and are
 * not a record's; and arbitrary bytes.
 *
 * The expected verdict comes from the contract's table alone (`expectedVerdict`), read off the bytes
 * written, never from the code under test.
 */
import { FastCheck as fc } from "effect"

/** What the world offers a file: a live process, or a pid nobody has. */
export type Target = "live" | "dead"

export interface Context {
  readonly pid: number
  readonly alive: boolean
  /** The live process's start time, as the probe reads it. */
  readonly startTime: string
  /** This machine's pid domain. */
  readonly here: string
}

/**
 * A hostile JSON value, as a recipe rather than as its text: a failed property then reports
 * "an array nested 4186 levels deep", not the 8 KB of brackets.
 */
export type HostileValue =
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "long"; readonly parts: ReadonlyArray<string>; readonly length: number }
  | { readonly _tag: "deep"; readonly depth: number; readonly shape: "array" | "object" | "mixed"; readonly leaf: string }
  | { readonly _tag: "wide"; readonly width: number; readonly shape: "array" | "object" }

/** A member's value: the valid one for its key in the file's context, or a hostile one. */
type Value = { readonly _tag: "valid" } | { readonly _tag: "hostile"; readonly value: HostileValue }

export const aboutValue = (value: HostileValue): string => {
  switch (value._tag) {
    case "text":
      return value.text.length <= 40 ? value.text : `${value.text.length} characters of JSON`
    case "long":
      return `a string of ${value.length} characters`
    case "deep":
      return `${value.shape} nested ${value.depth} levels deep`
    case "wide":
      return `${value.shape} of ${value.width} members`
  }
}

export const textOf = (value: HostileValue): string => {
  switch (value._tag) {
    case "text":
      return value.text
    case "long": {
      const unit = value.parts.join("")
      return JSON.stringify(unit.repeat(Math.ceil(value.length / unit.length)).slice(0, value.length))
    }
    case "deep": {
      const isArray = (level: number) => value.shape === "array" || (value.shape === "mixed" && level % 2 === 0)
      const opening: Array<string> = []
      const closing: Array<string> = []
      for (let level = 0; level < value.depth; level++) {
        opening.push(isArray(level) ? "[" : "{\"k\":")
        closing.push(isArray(level) ? "]" : "}")
      }
      return opening.join("") + value.leaf + closing.reverse().join("")
    }
    case "wide":
      return value.shape === "array"
        ? `[${Array.from({ length: value.width }, (_, i) => i % 7).join(",")}]`
        : `{${Array.from({ length: value.width }, (_, i) => `"k${i}":${i}`).join(",")}}`
  }
}

type Damage =
  | { readonly _tag: "none" }
  | { readonly _tag: "truncate"; readonly at: number }
  | { readonly _tag: "flip"; readonly at: number; readonly byte: number }
  | { readonly _tag: "bom" }
  | { readonly _tag: "invalidUtf8"; readonly at: number; readonly bytes: ReadonlyArray<number> }
  | { readonly _tag: "replace"; readonly bytes: Uint8Array }

type NameKind = "canonical" | "leadingZero" | "word" | "escape" | "digits"

export interface FilePlan {
  readonly target: Target
  readonly nameKind: NameKind
  readonly members: ReadonlyArray<readonly [string, Value]>
  readonly damage: Damage
}

/** The keys the contract reads, and the valid value of each in a file's context. */
const validValues: Record<string, (context: Context, index: number) => unknown> = {
  pid: (c) => c.pid,
  sessionId: (_, i) => `00000000-0000-4000-8000-${String(i % 3).padStart(12, "0")}`,
  name: (_, i) => ["app", "App", "docs", "(backgrounded)"][i % 4],
  cwd: () => "/home/user/app",
  messagingSocketPath: (c) => `/tmp/cc-socks/${c.pid}.sock`,
  status: () => "idle",
  updatedAt: () => 1796007033251,
  statusUpdatedAt: () => 1796007033251,
  startedAt: () => 1796007021392,
  version: () => "2.1.332",
  kind: () => "interactive",
  entrypoint: () => "cli",
  nameSource: () => "derived",
  procStart: (c) => c.startTime,
  pidDomain: (c) => c.here
}
const knownKeys = Object.keys(validValues)
/** Keys a valid record may lack, and keys the contract reads that a valid record does not carry. */
const otherKeys = ["tmux", "parkedJobId", "spare", "waitingFor", "jobId", "peerProtocol", "formerNames", "agent"]
const oddKeys = ["__proto__", "constructor", "toString", "hasOwnProperty", "", "\u001b]0;title\u0007", "pid ", "PID", "sessionid"]

const nasty = [
  "\u001b]52;c;aGVsbG8=\u0007",
  "\u001b[2J\u001b[H",
  "\u009b31m",
  "\u202eevil",
  "\u2066\u2069",
  "\r",
  "\u0000",
  "\ud800",
  "\udc00",
  "\ud83d\ude00",
  "\u2028",
  "\\",
  "\"",
  "é",
  " ",
  "a"
]

const text = (t: string): HostileValue => ({ _tag: "text", text: t })

const stringValue: fc.Arbitrary<HostileValue> = fc.oneof(
  fc.string({ maxLength: 40 }).map((v) => text(JSON.stringify(v))),
  fc.array(fc.constantFrom(...nasty), { minLength: 1, maxLength: 20 }).map((parts) => text(JSON.stringify(parts.join("")))),
  fc.record({
    _tag: fc.constant("long" as const),
    parts: fc.array(fc.constantFrom(...nasty), { minLength: 1, maxLength: 8 }),
    length: fc.integer({ min: 1_000, max: 100_000 })
  }),
  // Escapes written as escapes, lone surrogates included: the parser, not this file, makes them characters.
  fc.array(fc.constantFrom("\\u0000", "\\u001b", "\\ud800", "\\udfff", "\\u202e", "\\u009b", "\\n", "\\t", "x"), { maxLength: 30 })
    .map((parts) => text(`"${parts.join("")}"`))
)

const scalarValue = fc.constantFrom(
  "0",
  "-0",
  "1",
  "-1",
  "0.5",
  "1e400",
  "-1e400",
  "1e-400",
  "2147483647",
  "2147483648",
  "4.2e1",
  "1E3",
  "123456789012345678901234567890",
  "true",
  "false",
  "null"
).map(text)

const deepValue: fc.Arbitrary<HostileValue> = fc.record({
  _tag: fc.constant("deep" as const),
  depth: fc.integer({ min: 2, max: 20_000 }),
  shape: fc.constantFrom("array" as const, "object" as const, "mixed" as const),
  leaf: fc.constantFrom("1", "\"x\"", "null", "[]", "{}")
})

const wideValue: fc.Arbitrary<HostileValue> = fc.record({
  _tag: fc.constant("wide" as const),
  width: fc.integer({ min: 100, max: 30_000 }),
  shape: fc.constantFrom("array" as const, "object" as const)
})

const smallJsonValue = fc.jsonValue({ maxDepth: 3 }).map((v) => text(JSON.stringify(v) ?? "null"))

/** Any JSON value. */
export const hostileValue: fc.Arbitrary<HostileValue> = fc.oneof(
  { arbitrary: stringValue, weight: 4 },
  { arbitrary: scalarValue, weight: 3 },
  { arbitrary: deepValue, weight: 3 },
  { arbitrary: wideValue, weight: 1 },
  { arbitrary: smallJsonValue, weight: 3 }
)

const hostileMember = fc.tuple(
  fc.oneof(
    { arbitrary: fc.constantFrom(...knownKeys), weight: 6 },
    { arbitrary: fc.constantFrom(...otherKeys), weight: 3 },
    { arbitrary: fc.constantFrom(...oddKeys), weight: 1 },
    { arbitrary: fc.string({ maxLength: 6 }), weight: 1 }
  ),
  hostileValue,
  // Where it goes: in place of the valid member, or as a duplicate before it or after it (the last wins).
  fc.constantFrom("replace", "before", "after")
)

const damage: fc.Arbitrary<Damage> = fc.oneof(
  { arbitrary: fc.constant({ _tag: "none" } as const), weight: 14 },
  { arbitrary: fc.nat().map((at) => ({ _tag: "truncate", at }) as const), weight: 1 },
  { arbitrary: fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => ({ _tag: "flip", at, byte }) as const), weight: 1 },
  { arbitrary: fc.constant({ _tag: "bom" } as const), weight: 1 },
  {
    arbitrary: fc.tuple(fc.nat(), fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]))
      .map(([at, bytes]) => ({ _tag: "invalidUtf8", at, bytes }) as const),
    weight: 1
  },
  { arbitrary: fc.uint8Array({ maxLength: 2048 }).map((bytes) => ({ _tag: "replace", bytes }) as const), weight: 1 }
)

export const filePlan: fc.Arbitrary<FilePlan> = fc.record({
  target: fc.constantFrom<Target>("live", "live", "dead"),
  nameKind: fc.oneof(
    { arbitrary: fc.constant<NameKind>("canonical"), weight: 12 },
    { arbitrary: fc.constantFrom<NameKind>("leadingZero", "word", "escape", "digits"), weight: 1 }
  ),
  dropped: fc.subarray(knownKeys.filter((key) => key !== "pid" && key !== "sessionId" && key !== "name"), { maxLength: 4 }),
  hostile: fc.array(hostileMember, { maxLength: 4 }),
  damage
}).map(({ damage, dropped, hostile, nameKind, target }) => {
  let members: Array<readonly [string, Value]> = knownKeys.filter((key) => !dropped.includes(key)).map((key) => [key, { _tag: "valid" }])
  for (const [key, value, where] of hostile) {
    const member = [key, { _tag: "hostile", value }] as const
    const at = members.findIndex(([k]) => k === key)
    if (where === "replace" && at >= 0) members[at] = member
    else if (where === "before" && at >= 0) members = [...members.slice(0, at), member, ...members.slice(at)]
    else members = [...members, member]
  }
  return { target, nameKind, members, damage }
})

/** 1 to 4 files; the expected verdict of each is `expectedVerdict` of its bytes. */
export const registryPlan = fc.array(filePlan, { minLength: 1, maxLength: 4 })

/** How a plan is described in a failed property's report: what each member holds, never the megabytes themselves. */
export const describePlan = (plan: FilePlan): string =>
  `${plan.target} ${plan.nameKind} [${
    plan.members.flatMap(([k, v]) => (v._tag === "hostile" ? [`${JSON.stringify(k)}: ${aboutValue(v.value)}`] : [])).join("; ")
  }] ${plan.damage._tag}`

/** The file's name for its pid; a name that is not a record's keeps the pid visible, so names stay distinct. */
export const fileNameOf = (plan: FilePlan, pid: number, index: number): string => {
  switch (plan.nameKind) {
    case "canonical":
      return `${pid}.json`
    case "leadingZero":
      return `0${pid}.json`
    case "word":
      return `pid-${pid}-${index}.json`
    case "escape":
      return `\u001b[2J${pid}-${index}\u0007.json`
    case "digits":
      return `\u0661\u0662${pid}-${index}.json`
  }
}

const encoder = new TextEncoder()

/** The file's bytes: the members as JSON text in their order, then the damage. */
export const bytesOf = (plan: FilePlan, context: Context, index: number): Uint8Array => {
  const text = `{${
    plan.members.map(([key, value]) =>
      `${JSON.stringify(key)}:${value._tag === "hostile" ? textOf(value.value) : JSON.stringify(validValues[key]!(context, index))}`
    ).join(",")
  }}`
  const bytes = encoder.encode(text)
  const damage = plan.damage
  switch (damage._tag) {
    case "none":
      return bytes
    case "truncate":
      return bytes.slice(0, damage.at % (bytes.length + 1))
    case "flip": {
      const copy = bytes.slice()
      copy[damage.at % copy.length] = damage.byte
      return copy
    }
    case "bom":
      return Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes])
    case "invalidUtf8": {
      const at = damage.at % (bytes.length + 1)
      return Uint8Array.from([...bytes.subarray(0, at), ...damage.bytes, ...bytes.subarray(at)])
    }
    case "replace":
      return damage.bytes
  }
}

export const maxRecordBytes = 256 * 1024

const sameWords = (a: string, b: string) => {
  const x = a.trim().split(/\s+/)
  const y = b.trim().split(/\s+/)
  return x.length === y.length && x.every((word, i) => word === y[i])
}

/**
 * The verdict the contract's table gives these bytes, in its order. `filePid` is null for a name
 * that is not a record's.
 */
export const expectedVerdict = (bytes: Uint8Array, filePid: number | null, context: Context): string => {
  if (filePid === null) return "not_a_record"
  if (bytes.length > maxRecordBytes) return "too_large"
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "malformed"
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return "malformed"
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "malformed"
  const record = json as Record<string, unknown>
  const { name, parkedJobId, pid, pidDomain, procStart, sessionId, spare } = record
  if (typeof sessionId !== "string" || typeof pid !== "number") return "malformed"
  if (!Number.isInteger(pid) || pid < 1 || pid > 2147483647) return "invalid_pid"
  if (pid !== filePid) return "pid_mismatch"
  if (typeof name !== "string" || name === "") return "no_name"
  if (sessionId === "") return "empty_session_id"
  if (parkedJobId !== undefined && parkedJobId !== null) return "parked"
  if (spare === true) return "spare"
  if (typeof pidDomain === "string" && pidDomain !== context.here) return "other_pid_domain"
  if (!context.alive) return "dead"
  if (typeof procStart === "string" && !sameWords(procStart, context.startTime)) return "pid_reused"
  return "live"
}

/** Characters that must never reach a terminal from human output (line breaks between lines aside). */
export const terminalUnsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

/** The longest a verdict's detail may be: a detail names a value, it never reprints a file. */
export const maxDetailLength = 400
