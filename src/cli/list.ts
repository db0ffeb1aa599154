import { Command } from "@effect/cli"
import { Effect } from "effect"
import { Registry } from "../services/Registry.js"
import { json } from "./Options.js"
import { sessionsTable } from "./Render.js"
import { printData, reportFailures } from "./Report.js"

export const listCommand = Command.make("list", { json }, Effect.fn("list")(function*({ json }) {
  const registry = yield* Registry
  yield* registry.list.pipe(
    Effect.flatMap((sessions) => printData(json, sessions, () => sessionsTable(sessions))),
    reportFailures(json)
  )
})).pipe(Command.withDescription("list the live Claude Code sessions, sorted by pid"))
