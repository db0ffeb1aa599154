/**
 * `settings get | set accept|hold|refuse | reset`: the user-level `crossSessionInbound`. Every
 * output says it is the user file's value, which managed, project and command-line settings can
 * override; the JSON says so with `scope: "user"`.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import {
  absentPolicyWords,
  type InboundPolicy,
  inboundPolicies,
  type PolicyChange,
  resetPolicy,
  setPolicy,
  type SettingsView,
  userScopeNote
} from "../domain/Settings.js"
import * as Settings from "../services/Settings.js"
import { json } from "./Options.js"
import { printData, reportFailures, UsageError } from "./Report.js"
import { terminalSafe } from "./Text.js"

/** A few labelled lines; the path is the only text that did not come from this program. */
export const settingsText = (view: SettingsView): string =>
  [
    `settings file        ${terminalSafe(view.path)}`,
    `revision             ${view.revision}`,
    `crossSessionInbound  ${view.crossSessionInbound ?? absentPolicyWords}`,
    userScopeNote
  ].join("\n")

// A value outside the three is a usage error (exit 2), decided by @effect/cli before anything runs.
const value = Args.choice(inboundPolicies.map((policy): [string, InboundPolicy] => [policy, policy]), { name: "VALUE" })
  .pipe(Args.withDescription("accept, hold or refuse"))

const expectRevision = Options.text("expect-revision").pipe(
  // A revision is 64 lowercase hex digits; uppercase is the same revision, anything else is a
  // mistyped argument (exit 2), not another writer's change (exit 5).
  Options.filterMap((rev) => {
    const lower = rev.trim().toLowerCase()
    return /^[0-9a-f]{64}$/.test(lower) ? Option.some(lower) : Option.none()
  }, "--expect-revision must be a revision from `settings get`: 64 hexadecimal digits"),
  Options.withDescription("fail with exit 5 unless the file is still at this revision (from `settings get`)"),
  Options.optional
)

const runUpdate = (json: boolean, change: PolicyChange, expectedRevision: Option.Option<string>) =>
  Effect.flatMap(Settings.Settings, (settings) =>
    settings.update(change, Option.getOrUndefined(expectedRevision)).pipe(
      Effect.flatMap((view) => printData(json, view, () => settingsText(view))),
      reportFailures(json)
    ))

const getCommand = Command.make("get", { json }, Effect.fn("settings-get")(function*({ json }) {
  const settings = yield* Settings.Settings
  yield* settings.read.pipe(
    Effect.flatMap((view) => printData(json, view, () => settingsText(view))),
    reportFailures(json)
  )
})).pipe(Command.withDescription("show the user-level crossSessionInbound and the file's revision"))

const setCommand = Command.make(
  "set",
  { value, expectRevision, json },
  Effect.fn("settings-set")(function*({ expectRevision, json, value }) {
    yield* runUpdate(json, setPolicy(value), expectRevision)
  })
).pipe(Command.withDescription("set the user-level crossSessionInbound, keeping every other byte of the file"))

const resetCommand = Command.make(
  "reset",
  { expectRevision, json },
  Effect.fn("settings-reset")(function*({ expectRevision, json }) {
    yield* runUpdate(json, resetPolicy, expectRevision)
  })
).pipe(Command.withDescription("remove the user-level crossSessionInbound (Claude Code then decides by permission modes)"))

export const settingsCommand = Command.make(
  "settings",
  {},
  Effect.fn("settings")(function*() {
    return yield* new UsageError({ message: "settings takes a subcommand: get, set accept|hold|refuse, or reset" })
  })
).pipe(
  Command.withDescription(
    "read or update crossSessionInbound in the user settings file (managed, project and command-line settings can override it)"
  ),
  Command.withSubcommands([getCommand, setCommand, resetCommand])
)
