import { Command } from "@effect/cli"
import { Effect } from "effect"
import { Registry } from "../services/Registry.js"
import { json } from "./Options.js"
import { entriesTable, entryJson } from "./Render.js"
import { printData, reportFailures } from "./Report.js"

export const inspectCommand = Command.make("inspect", { json }, Effect.fn("inspect")(function*({ json }) {
  const registry = yield* Registry
  yield* registry.inspect.pipe(
    Effect.flatMap((entries) => printData(json, entries.map(entryJson), () => entriesTable(entries))),
    reportFailures(json)
  )
})).pipe(Command.withDescription("show every registry file with its verdict"))
