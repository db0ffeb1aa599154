/**
 * What each command does, over the services. Both parsers end here (see `Invocation.ts`), so a
 * command answers the same whichever path parsed it. Each handler is a span named for its command.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { SessionPolicy } from "../domain/Policy.js"
import { Session } from "../domain/Session.js"
import { SessionEvent } from "../domain/SessionEvent.js"
import { emptyRevision, resetPolicy, setPolicy, SettingsView, type PolicyChange } from "../domain/Settings.js"
import { ClaudeHome } from "../services/ClaudeHome.js"
import { Files } from "../services/Files.js"
import { Policy } from "../services/Policy.js"
import { Registry } from "../services/Registry.js"
import { Settings } from "../services/Settings.js"
import { type NotificationsRefused, Watch } from "../services/Watch.js"
import type { Command } from "./Invocation.js"
import { OutputFailed, printError, printLine, stdoutReaderGone } from "./Output.js"
import {
  entriesTable,
  eventLine,
  InspectRow,
  inspectRow,
  policiesText,
  policyText,
  sessionDetails,
  sessionsTable,
  settingsText
} from "./Render.js"
import { type ExitCode, printData, reportFailures, type ReportedError } from "./Report.js"
import { endOnSignal, interruptOnSignal } from "./Signals.js"
import { jsonText, terminalSafe } from "./Text.js"

const encodeSessions = Schema.encodeSync(Schema.Array(Session))
const encodeSession = Schema.encodeSync(Session)
const encodeRows = Schema.encodeSync(Schema.Array(InspectRow))
const encodeView = Schema.encodeSync(SettingsView)
const encodeEvent = Schema.encodeSync(SessionEvent)
const encodePolicy = Schema.encodeSync(SessionPolicy)
const encodePolicies = Schema.encodeSync(Schema.Array(SessionPolicy))

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/**
 * The directory (the Claude home, else its `sessions`) that does not exist, when that is why an
 * answer is empty: a mistyped `--claude-home` must not look like a machine with no sessions. Only
 * human output asks, and only for an empty answer (`watch`: once, before it starts), so that the
 * usual answer costs nothing more.
 */
const missingDirectory = Effect.gen(function*() {
  const home = yield* ClaudeHome
  const files = yield* Files
  for (const directory of [home.root, home.sessionsDirectory]) {
    if (yield* Effect.match(files.stat(directory), { onFailure: isNotFound, onSuccess: () => false })) return directory
  }
  return undefined
})

/** A refusal because no registry file carried the id or name: said with the directory that does not exist, if one does not. */
const noFileNote = (error: ReportedError) =>
  error._tag === "NotLive" && error.reasons.length === 0
    ? Effect.map(missingDirectory, (missing) => (missing === undefined ? undefined : `${missing} does not exist`))
    : Effect.succeed(undefined)

const list = Effect.fn("list")(function*(json: boolean) {
  const sessions = yield* (yield* Registry).list
  const missing = sessions.length === 0 && !json ? yield* missingDirectory : undefined
  yield* printData(json, () => encodeSessions(sessions), () => sessionsTable(sessions, missing))
})

const inspect = Effect.fn("inspect")(function*(json: boolean) {
  const entries = yield* (yield* Registry).inspect
  const missing = entries.length === 0 && !json ? yield* missingDirectory : undefined
  yield* printData(json, () => encodeRows(entries.map(inspectRow)), () => entriesTable(entries, missing))
})

const resolve = Effect.fn("resolve")(function*(json: boolean, command: Extract<Command, { _tag: "resolve" }>) {
  const session = yield* (yield* Registry).resolve(command.query, { allowSharedName: command.allowSharedName })
  yield* printData(json, () => encodeSession(session), () => sessionDetails(session))
})

/**
 * The Claude home, when it does not exist: a settings file read there is absent because the home
 * is (a mistyped `--claude-home`), which human output says. Asked only when the file read as empty.
 */
const missingHome = (view: SettingsView) =>
  Effect.gen(function*() {
    if (view.revision !== emptyRevision) return undefined
    const home = yield* ClaudeHome
    const absent = yield* Effect.match((yield* Files).stat(home.root), { onFailure: isNotFound, onSuccess: () => false })
    return absent ? home.root : undefined
  })

const settingsGet = Effect.fn("settings get")(function*(json: boolean) {
  const view = yield* (yield* Settings).read
  const missing = json ? undefined : yield* missingHome(view)
  yield* printData(json, () => encodeView(view), () => settingsText(view, missing))
})

/**
 * An update whose result cannot be printed is still made (its output cannot be tried before the
 * update, and a full disk is only found out by writing): the command then exits 7, not 0, and says
 * on stderr what the file now holds, so that nobody takes the update for not done or for done unseen.
 */
const settingsUpdate = Effect.fn("settings update")(function*(json: boolean, change: PolicyChange, expectRevision: string | undefined) {
  // A signal must let the lock and the temporary file go, and must not end the command with 0.
  yield* interruptOnSignal
  const view = yield* (yield* Settings).update(change, expectRevision)
  yield* printData(json, () => encodeView(view), () => settingsText(view)).pipe(
    Effect.mapError((lost) =>
      new OutputFailed({
        stream: lost.stream,
        code: lost.code,
        done: `the update itself was made: ${view.path} now holds ${
          view.crossSessionInbound === null ? "no crossSessionInbound" : `crossSessionInbound "${view.crossSessionInbound}"`
        } (revision ${view.revision})`
      })
    )
  )
})

/** Every live session's policy as an array, or the one session's as an object, refused as `resolve` refuses. */
const policy = Effect.fn("policy")(function*(json: boolean, command: Extract<Command, { _tag: "policy" }>) {
  const policies = yield* Policy
  if (command.query === undefined) {
    const all = yield* policies.list
    const missing = all.length === 0 && !json ? yield* missingDirectory : undefined
    yield* printData(json, () => encodePolicies(all), () => policiesText(all, missing))
  } else {
    const one = yield* policies.resolve(command.query)
    yield* printData(json, () => encodePolicy(one), () => policyText(one))
  }
})

/** The one line a watch without change notifications says, on stderr whatever the output format. */
const sayReadingEveryInterval = ({ directory, error, interval }: NotificationsRefused) =>
  Effect.sync(() => {
    const why = error._tag === "SystemError" ? /^E[A-Z]+/.exec(error.description ?? "")?.[0] ?? error.reason : error._tag
    printError(terminalSafe(
      `claude-peers: the system refused change notifications for ${directory} (${why}); reading it every ${Duration.toMillis(interval)} ms instead`
    ))
  })

/** Until interrupted (a signal ends it with exit 0), or until nobody reads its output. */
const watch = Effect.fn("watch")(function*(json: boolean, intervalMillis: number | undefined) {
  const signalled = yield* endOnSignal
  const missing = json ? undefined : yield* missingDirectory
  if (missing !== undefined) printError(`claude-peers: ${terminalSafe(missing)} does not exist; watching for sessions to appear there`)
  const events = (yield* Watch).sessions({
    ...(intervalMillis === undefined ? {} : { interval: intervalMillis }),
    onNotificationsRefused: sayReadingEveryInterval
  })
  yield* events.pipe(
    Stream.mapEffect((event) => printLine(json ? jsonText(encodeEvent(event)) : eventLine(event))),
    Stream.takeUntil(stdoutReaderGone),
    Stream.interruptWhen(signalled),
    Stream.runDrain
  )
})

export const handle = (
  command: Command,
  json: boolean
): Effect.Effect<void, ExitCode | OutputFailed, Registry | Settings | Watch | Policy | Files | ClaudeHome> => {
  switch (command._tag) {
    case "list":
      return reportFailures(json)(list(json))
    case "inspect":
      return reportFailures(json)(inspect(json))
    case "resolve":
      return reportFailures(json, noFileNote)(resolve(json, command))
    case "settings get":
      return reportFailures(json)(settingsGet(json))
    case "settings set":
      return reportFailures(json)(settingsUpdate(json, setPolicy(command.value), command.expectRevision))
    case "settings reset":
      return reportFailures(json)(settingsUpdate(json, resetPolicy, command.expectRevision))
    case "watch":
      return reportFailures(json)(watch(json, command.intervalMillis))
    case "policy":
      return reportFailures(json, noFileNote)(policy(json, command))
  }
}

export { OutputFailed }
