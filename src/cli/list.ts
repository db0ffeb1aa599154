import { Command } from "@effect/cli"
import { listSessions } from "./ListSessions.js"
import { json } from "./Options.js"

export const listCommand = Command.make("list", { json }, listSessions).pipe(
  Command.withDescription("list the live Claude Code sessions, sorted by pid")
)
