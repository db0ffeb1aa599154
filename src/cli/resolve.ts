import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { Registry } from "../services/Registry.js"
import { json } from "./Options.js"
import { sessionDetails } from "./Render.js"
import { printData, reportFailures, UsageError } from "./Report.js"

const sessionId = Args.text({ name: "SESSION_ID" }).pipe(Args.optional)
const name = Options.text("name").pipe(Options.optional, Options.withDescription("resolve by registry name"))

export const resolveCommand = Command.make(
  "resolve",
  { sessionId, name, json },
  Effect.fn("resolve")(function*({ json, name, sessionId }) {
    const registry = yield* Registry
    // Exactly one of the two: an id and a name together would be two questions with one answer.
    const query = Option.isSome(sessionId) && Option.isNone(name)
      ? { sessionId: sessionId.value }
      : Option.isSome(name) && Option.isNone(sessionId)
      ? { name: name.value }
      : undefined
    if (query === undefined) {
      return yield* Effect.fail(new UsageError({ message: "resolve takes a SESSION_ID or --name NAME, not both" }))
    }
    yield* registry.resolve(query).pipe(
      Effect.flatMap((session) => printData(json, session, () => sessionDetails(session))),
      reportFailures(json)
    )
  })
).pipe(Command.withDescription("resolve a session id (or --name) to its one live session, or refuse"))
