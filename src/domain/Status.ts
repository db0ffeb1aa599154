import * as Schema from "effect/Schema"

/**
 * `status` is vendor-owned open text. The known words map onto a small union; anything else is
 * `null` with the original text kept, so a new status never drops a record.
 */
export const Status = Schema.Literal("busy", "idle", "waiting")
export type Status = typeof Status.Type

export const statusFromRaw = (raw: string | null): Status | null => {
  switch (raw) {
    case "busy":
      return "busy"
    // `shell`: a backgrounded shell command still runs, but the session waits at its prompt.
    case "idle":
    case "shell":
      return "idle"
    case "waiting":
      return "waiting"
    default:
      return null
  }
}
