/**
 * `settings get | set accept|hold|refuse | reset`: the user-level `crossSessionInbound`. Every
 * output says it is the user file's value, which managed, project and command-line settings can
 * override; the JSON says so with `scope: "user"`.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type InboundPolicy, inboundPolicies } from "../domain/Settings.js"
import { invoke } from "./Base.js"
import { parseRevision } from "./Invocation.js"
import { json } from "./Options.js"
import { UsageError } from "./Report.js"

// A value outside the three is a usage error (exit 2), decided by the parser before anything runs.
const value = Args.choice(inboundPolicies.map((policy): [string, InboundPolicy] => [policy, policy]), { name: "VALUE" })
  .pipe(Args.withDescription("accept, hold or refuse"))

const expectRevision = Options.text("expect-revision").pipe(
  // A mistyped revision is a usage error (exit 2), not another writer's change (exit 5).
  Options.filterMap((rev) => Option.fromNullable(parseRevision(rev)), "--expect-revision must be a revision from `settings get`: 64 hexadecimal digits"),
  Options.withDescription("fail with exit 5 unless the file is still at this revision (from `settings get`)"),
  Options.optional
)

const getCommand = Command.make("get", { json }, ({ json }) => invoke({ _tag: "settings get" }, json)).pipe(
  Command.withDescription("show the user-level crossSessionInbound and the file's revision")
)

const setCommand = Command.make(
  "set",
  { value, expectRevision, json },
  ({ expectRevision, json, value }) => invoke({ _tag: "settings set", value, expectRevision: Option.getOrUndefined(expectRevision) }, json)
).pipe(Command.withDescription("set the user-level crossSessionInbound, keeping every other byte of the file"))

const resetCommand = Command.make(
  "reset",
  { expectRevision, json },
  ({ expectRevision, json }) => invoke({ _tag: "settings reset", expectRevision: Option.getOrUndefined(expectRevision) }, json)
).pipe(Command.withDescription("remove the user-level crossSessionInbound (Claude Code then decides by permission modes)"))

export const settingsCommand = Command.make(
  "settings",
  {},
  () => Effect.fail(new UsageError({ message: "settings takes a subcommand: get, set accept|hold|refuse, or reset" }))
).pipe(
  Command.withDescription(
    "read or update crossSessionInbound in the user settings file (managed, project and command-line settings can override it)"
  ),
  Command.withSubcommands([getCommand, setCommand, resetCommand])
)
