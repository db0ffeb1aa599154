/**
 * `claude-peers watch [--interval MS] [--json]`: one line per change in the live sessions, until
 * interrupted (SIGINT and SIGTERM end it with exit 0) or until nobody reads its output.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import { invoke } from "./Base.js"
import { maxIntervalMillis } from "./Invocation.js"
import { json } from "./Options.js"

const interval = Options.integer("interval").pipe(
  // A zero or negative interval would re-read the registry in a busy loop.
  Options.filterMap(
    (ms) => (ms > 0 && ms <= maxIntervalMillis ? Option.some(ms) : Option.none()),
    `--interval must be a positive number of milliseconds, at most ${maxIntervalMillis}`
  ),
  Options.withDescription("how often, in ms, live sessions are re-checked for a process that died without touching its file (default 2000)"),
  Options.optional
)

export const watchCommand = Command.make("watch", { interval, json }, ({ interval, json }) =>
  invoke({ _tag: "watch", intervalMillis: Option.getOrUndefined(interval) }, json)).pipe(
    Command.withDescription("print a line for every session that appears, changes or is gone, until interrupted")
  )
