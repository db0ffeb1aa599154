/**
 * What `list` does, apart from how the command line declares it. It imports nothing from
 * `@effect/cli`, so that `bin.ts` can run the common `list` invocations without loading the parser
 * (status lines call `list --json` many times a minute, and the parser is a third of start-up);
 * `list.ts` declares the same handler as the `list` subcommand, so the two paths cannot drift.
 */
import { Effect } from "effect"
import { Registry } from "../services/Registry.js"
import { sessionsTable } from "./Render.js"
import { printData, reportFailures } from "./Report.js"

export const listSessions = Effect.fn("list")(function*({ json }: { readonly json: boolean }) {
  const registry = yield* Registry
  yield* registry.list.pipe(
    Effect.flatMap((sessions) => printData(json, sessions, () => sessionsTable(sessions))),
    reportFailures(json)
  )
})
