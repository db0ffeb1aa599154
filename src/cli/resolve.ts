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
const name = Options.text("name").pipe(Options.optional, Options.withDescription("resolve by registry name (compared as Claude Code compares names)"))
const allowSharedName = Options.boolean("allow-shared-name").pipe(
  Options.withDescription("resolve SESSION_ID even when its name is shared with another live session; its address is then its socket")
)

/** Exactly one question: an id and a name together would be two questions with one answer. */
export const resolveQuery = (
  sessionId: string | undefined,
  name: string | undefined,
  allowSharedName: boolean
): Extract<Invoked, { _tag: "resolve" }> | UsageError => {
  if (sessionId === undefined && name === undefined) return new UsageError({ message: "resolve takes a SESSION_ID or --name NAME" })
  if (sessionId !== undefined && name !== undefined) return new UsageError({ message: "resolve takes a SESSION_ID or --name NAME, not both" })
  // No session has an empty id: an empty argument is a mistake (an unset shell variable), not a question.
  if (sessionId === "") return new UsageError({ message: "resolve takes a SESSION_ID, and an empty one names no session" })
  if (name !== undefined) {
    return allowSharedName
      ? new UsageError({ message: "--allow-shared-name applies to a SESSION_ID: a name shared by two live sessions addresses neither" })
      : { _tag: "resolve", query: { name }, allowSharedName: false }
  }
  return { _tag: "resolve", query: { sessionId: sessionId! }, allowSharedName }
}

export const resolveCommand = Command.make(
  "resolve",
  { sessionId, name, allowSharedName, json },
  ({ allowSharedName, json, name, sessionId }) => {
    const query = resolveQuery(Option.getOrUndefined(sessionId), Option.getOrUndefined(name), allowSharedName)
    return query instanceof UsageError ? Effect.fail(query) : invoke(query, json)
  }
).pipe(Command.withDescription("resolve a session id (or --name) to its one live session, or refuse"))
