import * as Command from "@effect/cli/Command"
import { invoke } from "./Base.js"
import { json } from "./Options.js"

export const listCommand = Command.make("list", { json }, ({ json }) => invoke({ _tag: "list" }, json)).pipe(
  Command.withDescription("list the live Claude Code sessions, sorted by pid")
)
