/**
 * `claude-peers policy [SESSION_ID | --name NAME] [--managed-dir DIR]`: the inbound policy in effect
 * for every live session, or for the one the id or name resolves to (as `resolve` resolves it).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { invoke } from "./Base.js"
import type { Command as Invoked } from "./Invocation.js"
import { json } from "./Options.js"
import { UsageError } from "./Report.js"

const sessionId = Args.text({ name: "SESSION_ID" }).pipe(Args.optional)
const name = Options.text("name").pipe(
  Options.optional,
  Options.withDescription("the session with this registry name (compared as Claude Code compares names)")
)
const managedDir = Options.text("managed-dir").pipe(
  // An empty directory would silently become the current one.
  Options.filterMap((dir) => (dir.length > 0 ? Option.some(dir) : Option.none()), "--managed-dir needs a directory, not an empty string"),
  Options.withDescription("the managed settings directory (default: the platform's, /etc/claude-code on Linux)"),
  Options.optional
)

/** At most one session: an id and a name together would be two questions with one answer. */
export const policyCommandOf = (
  sessionId: string | undefined,
  name: string | undefined,
  managedDirectory: string | undefined
): Extract<Invoked, { _tag: "policy" }> | UsageError => {
  if (sessionId !== undefined && name !== undefined) {
    return new UsageError({ message: "policy takes a SESSION_ID or --name NAME, not both" })
  }
  if (sessionId === "") return new UsageError({ message: "policy takes a SESSION_ID, and an empty one names no session" })
  const query = sessionId !== undefined ? { sessionId } : name !== undefined ? { name } : undefined
  return { _tag: "policy", query, managedDirectory }
}

export const policyCommand = Command.make(
  "policy",
  { sessionId, name, managedDir, json },
  ({ json, managedDir, name, sessionId }) => {
    const command = policyCommandOf(Option.getOrUndefined(sessionId), Option.getOrUndefined(name), Option.getOrUndefined(managedDir))
    return command instanceof UsageError ? Effect.fail(command) : invoke(command, json)
  }
).pipe(
  Command.withDescription(
    "tell the inbound policy in effect for each live session (or one), from managed, command-line, user and project settings, and how sure that is"
  )
)
