/**
 * What each command does, over the services it uses. Both parsers end here (see `Invocation.ts`),
 * so a command answers the same whichever path parsed it. Each handler is a span named for its
 * command, and an export of its own, free of side effects (`#__PURE__`): the bundle gives every
 * recognized command a part of its own (`scripts/build-bin.mjs`), and a part keeps only its
 * command's handler and what that handler uses, so `list` loads neither the settings nor `watch`.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { sessionJson } from "../domain/Session.js"
import { SessionEvent } from "../domain/SessionEvent.js"
import { resetPolicy, setPolicy, type PolicyChange } from "../domain/Settings.js"
import { Registry } from "../services/Registry.js"
import { Settings } from "../services/Settings.js"
import { Watch } from "../services/Watch.js"
import type { CommandOf } from "./Invocation.js"
import { OutputFailed, printLine, stdoutReaderGone } from "./Output.js"
import { entriesTable, eventLine, inspectRow, sessionDetails, sessionsTable, settingsText } from "./Render.js"
import { type ExitCode, printData, reportFailures, type ReportedError } from "./Report.js"
import { endOnSignal, interruptOnSignal } from "./Signals.js"

/** A handler's failures are reported where they happen; what is left is its exit code, or output that could not be written. */
const reported = <A, R>(effect: Effect.Effect<A, ReportedError | OutputFailed, R>, json: boolean) => reportFailures(json)(effect)

export const list = /*#__PURE__*/ Effect.fn("list")(function*(json: boolean) {
  const sessions = yield* (yield* Registry).list
  yield* printData(json, () => sessions.map(sessionJson), () => sessionsTable(sessions))
}, reported)

export const inspect = /*#__PURE__*/ Effect.fn("inspect")(function*(json: boolean) {
  const entries = yield* (yield* Registry).inspect
  yield* printData(json, () => entries.map(inspectRow), () => entriesTable(entries))
}, reported)

export const resolve = /*#__PURE__*/ Effect.fn("resolve")(function*(json: boolean, command: CommandOf<"resolve">) {
  const session = yield* (yield* Registry).resolve(command.query, { allowSharedName: command.allowSharedName })
  yield* printData(json, () => sessionJson(session), () => sessionDetails(session))
}, reported)

export const settingsGet = /*#__PURE__*/ Effect.fn("settings get")(function*(json: boolean) {
  const view = yield* (yield* Settings).read
  yield* printData(json, () => view, () => settingsText(view))
}, reported)

const settingsUpdate = (json: boolean, change: PolicyChange, expectRevision: string | undefined) =>
  Effect.gen(function*() {
    // A signal must let the lock and the temporary file go, and must not end the command with 0.
    yield* interruptOnSignal
    const view = yield* (yield* Settings).update(change, expectRevision)
    yield* printData(json, () => view, () => settingsText(view))
  })

export const settingsSet = /*#__PURE__*/ Effect.fn("settings set")(
  (json: boolean, command: CommandOf<"settings set">) => settingsUpdate(json, setPolicy(command.value), command.expectRevision),
  reported
)

export const settingsReset = /*#__PURE__*/ Effect.fn("settings reset")(
  (json: boolean, command: CommandOf<"settings reset">) => settingsUpdate(json, resetPolicy, command.expectRevision),
  reported
)

/** Until interrupted (a signal ends it with exit 0), or until nobody reads its output. */
export const watch = /*#__PURE__*/ Effect.fn("watch")(function*(json: boolean, command: CommandOf<"watch">) {
  const encodeEvent = Schema.encodeSync(SessionEvent)
  const signalled = yield* endOnSignal
  const events = (yield* Watch).sessions(command.intervalMillis === undefined ? {} : { interval: command.intervalMillis })
  yield* events.pipe(
    Stream.mapEffect((event) => printLine(json ? JSON.stringify(encodeEvent(event)) : eventLine(event))),
    Stream.takeUntil(stdoutReaderGone),
    Stream.interruptWhen(signalled),
    Stream.runDrain
  )
}, reported)

export type { ExitCode }
export { OutputFailed }
