/**
 * What each command does, over the services it uses. Both parsers end here (see `Invocation.ts`),
 * so a command answers the same whichever path parsed it. Each handler is a span named for its
 * command; it prints through `Console` and reports its failures as the contract says.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { DeliveryResult, invalidMessage, messageFromBytes } from "../domain/Delivery.js"
import type { InvalidMessage } from "../domain/Errors.js"
import { maxMessageLength } from "../domain/Message.js"
import { type SessionPolicy, sessionPolicyJson } from "../domain/Policy.js"
import { sessionJson } from "../domain/Session.js"
import { SessionEvent } from "../domain/SessionEvent.js"
import { emptyRevision, type PolicyChange, resetPolicy, setPolicy, type SettingsView } from "../domain/Settings.js"
import type { Services } from "../layers/Services.js"
import { ClaudeHome } from "../services/ClaudeHome.js"
import { Delivery } from "../services/Delivery.js"
import { Files } from "../services/Files.js"
import { Policy } from "../services/Policy.js"
import { Registry } from "../services/Registry.js"
import { Settings } from "../services/Settings.js"
import { Wait, type WaitOutcome } from "../services/Wait.js"
import { type NotificationsRefused, Watch } from "../services/Watch.js"
import { StandardInput } from "./Input.js"
import type { CommandOf, Invocation } from "./Invocation.js"
import { OutputFailed, printError, printLine, readerGone } from "./Output.js"
import { deliveryText, entriesTable, eventLine, inspectRow, policiesText, policyText, sessionDetails, sessionsTable, settingsText, waitText } from "./Render.js"
import { ExitCode, exitCodes, printData, printList, type ReportedError, reportFailures, reportUsageError } from "./Report.js"
import { jsonText, terminalSafe } from "./Text.js"
import { eventMatches, filters } from "./WatchFilter.js"

/** A handler's failures are reported where they happen; what is left is its exit code, or output that could not be written. */
const reported = <A, R>(effect: Effect.Effect<A, ReportedError | OutputFailed, R>, json: boolean) => reportFailures(json)(effect)

/** As `reported`, a refusal for want of any registry file also naming the directory that does not exist. */
const reportedWithNote = <A, R>(effect: Effect.Effect<A, ReportedError | OutputFailed, R>, json: boolean) => reportFailures(json, noFileNote)(effect)

const isNotFound = (error: PlatformError): boolean => error._tag === "SystemError" && error.reason === "NotFound"

/** Whether nothing is at `path` (any other failure to stat it is not that). */
const isAbsent = (path: string) => Effect.flatMap(Files, (files) => Effect.match(files.stat(path), { onFailure: isNotFound, onSuccess: () => false }))

/**
 * The directory (the Claude home, else its `sessions`) that does not exist, when that is why an
 * answer is empty: a mistyped `--claude-home` must not look like a machine with no sessions. Only
 * human output asks, and only for an empty answer (`watch`: once, before it starts), so that the
 * usual answer costs nothing more.
 */
const missingDirectory = Effect.flatMap(
  Registry,
  (registry) => Effect.map(registry.missingDirectory, Option.match({ onNone: () => undefined, onSome: (missing) => missing.path }))
)

/** A refusal because no registry file carried the id or name: said with the directory that does not exist, if one does not. */
const noFileNote = (error: ReportedError) =>
  error._tag === "NotLive" && error.reasons.length === 0
    ? Effect.map(missingDirectory, (missing) => (missing === undefined ? undefined : `${missing} does not exist`))
    : Effect.succeed(undefined)

export const list = Effect.fn("list")(function*(json: boolean) {
  const sessions = yield* (yield* Registry).list
  const missing = sessions.length === 0 && !json ? yield* missingDirectory : undefined
  yield* printList(json, sessions, sessionJson, () => sessionsTable(sessions, missing))
}, reported)

export const inspect = Effect.fn("inspect")(function*(json: boolean) {
  const registry = yield* Registry
  // Each live session with its transcript, as `resolve` gives it.
  const entries = yield* Effect.flatMap(registry.inspect, (all) =>
    Effect.forEach(all, (entry) =>
      entry.verdict._tag === "live"
        ? Effect.map(registry.transcript(entry.verdict.session), (session) => ({ ...entry, verdict: { _tag: "live" as const, session } }))
        : Effect.succeed(entry)))
  const missing = entries.length === 0 && !json ? yield* missingDirectory : undefined
  yield* printList(json, entries, inspectRow, () => entriesTable(entries, missing))
}, reported)

export const resolve = Effect.fn("resolve")(function*(json: boolean, command: CommandOf<"resolve">) {
  const session = yield* (yield* Registry).resolve(command.query, { allowSharedName: command.allowSharedName })
  yield* printData(json, () => sessionJson(session), () => sessionDetails(session))
}, reportedWithNote)

/**
 * The Claude home, when it does not exist: a settings file read there is absent because the home
 * is (a mistyped `--claude-home`), which human output says. Asked only when the file read as empty.
 */
const missingHome = (view: SettingsView) =>
  Effect.gen(function*() {
    if (view.revision !== emptyRevision) return undefined
    const home = yield* ClaudeHome
    return (yield* isAbsent(home.root)) ? home.root : undefined
  })

export const settingsGet = Effect.fn("settings get")(function*(json: boolean) {
  const view = yield* (yield* Settings).read
  const missing = json ? undefined : yield* missingHome(view)
  yield* printData(json, () => view, () => settingsText(view, missing))
}, reported)

/** Output lost after the command's work was done: the sentence says what was `done`. */
const sayingDone = (done: string) => Effect.mapError((lost: OutputFailed) => new OutputFailed({ stream: lost.stream, code: lost.code, done }))

/**
 * An update whose result cannot be printed is still made (its output cannot be tried before the
 * update, and a full disk is only found out by writing): the command then exits 7, not 0, and says
 * on stderr what the file now holds, so that nobody takes the update for not done or for done unseen.
 */
const settingsUpdate = (json: boolean, change: PolicyChange, expectRevision: string | undefined, throughLink: boolean) =>
  Effect.gen(function*() {
    // An interruption lets the lock and the temporary file go (Settings' finalizers).
    const view = yield* (yield* Settings).update(change, { expectRevision, throughLink })
    yield* printData(json, () => view, () => settingsText(view)).pipe(
      sayingDone(
        `the update itself was made: ${view.path} now holds ${
          view.crossSessionInbound === null ? "no crossSessionInbound" : `crossSessionInbound "${view.crossSessionInbound}"`
        } (revision ${view.revision})`
      )
    )
  })

export const settingsSet = Effect.fn("settings set")(
  (json: boolean, command: CommandOf<"settings set">) => settingsUpdate(json, setPolicy(command.value), command.expectRevision, command.throughLink === true),
  reported
)

export const settingsReset = Effect.fn("settings reset")(
  (json: boolean, command: CommandOf<"settings reset">) => settingsUpdate(json, resetPolicy, command.expectRevision, command.throughLink === true),
  reported
)

/** Every live session's policy as an array, or the one session's as an object, refused as `resolve` refuses. */
export const policy = Effect.fn("policy")(function*(json: boolean, command: CommandOf<"policy">) {
  const policies = yield* Policy
  const forSender = (policy: SessionPolicy): SessionPolicy =>
    command.senderMode === undefined ? policy : { ...policy, forSender: policy.forSender.filter((o) => o.senderMode === command.senderMode) }
  if (command.query === undefined) {
    const all = (yield* policies.list).map(forSender)
    const missing = all.length === 0 && !json ? yield* missingDirectory : undefined
    yield* printList(json, all, sessionPolicyJson, () => policiesText(all, missing))
  } else {
    const one = forSender((yield* policies.resolve(command.query, { allowSharedName: command.allowSharedName === true })).policy)
    yield* printData(json, () => sessionPolicyJson(one), () => policyText(one))
  }
}, reportedWithNote)

/** The one line a watch without change notifications says, on stderr whatever the output format. */
const sayReadingEveryInterval = ({ directory, error, interval }: NotificationsRefused) =>
  Effect.suspend(() => {
    const why = error._tag === "SystemError" ? /^E[A-Z]+/.exec(error.description ?? "")?.[0] ?? error.reason : error._tag
    return printError(terminalSafe(
      `claude-peers: the system refused change notifications for ${directory} (${why}); reading it every ${Duration.toMillis(interval)} ms instead`
    ))
  })

/** Until interrupted (the standalone command ends it so on a signal, with exit 0), or until nobody reads its output. */
export const watch = Effect.fn("watch")(function*(json: boolean, command: CommandOf<"watch">) {
  const encodeEvent = Schema.encodeSync(SessionEvent)
  const gone = yield* readerGone
  const missing = json ? undefined : yield* missingDirectory
  if (missing !== undefined) yield* printError(`claude-peers: ${terminalSafe(missing)} does not exist; watching for sessions to appear there`)
  const events = (yield* Watch).sessions({
    ...(command.intervalMillis === undefined ? {} : { interval: command.intervalMillis }),
    onNotificationsRefused: sayReadingEveryInterval
  })
  yield* events.pipe(
    filters(command.filter) ? Stream.filter(eventMatches(command.filter)) : identity,
    Stream.mapEffect((event) => printLine(json ? jsonText(encodeEvent(event)) : eventLine(event))),
    Stream.takeUntil(gone),
    Stream.runDrain
  )
}, reported)

/**
 * Until the session is in a state asked for (exit 0, the session printed; for `gone`, with the
 * verdict that ended it), or refused as `resolve` refuses (3 unless `gone` was asked, 4; a session
 * without a socket is waited for all the same), or
 * `timed_out` (12), or `ended` (13, with its verdict).
 */
export const wait = Effect.fn("wait")(function*(json: boolean, command: CommandOf<"wait">) {
  const outcome = yield* (yield* Wait).waitFor(command.query, command.until, {
    ...(command.timeoutMillis === undefined ? {} : { timeout: command.timeoutMillis })
  })
  yield* printData(json, () => waitJson(outcome), () => waitText(outcome))
}, reportedWithNote)

/** `{"state", "verdict", "session"}`: the state reached (`gone` with its verdict, else a null verdict) and the session, null when it was never live. */
const waitJson = (outcome: WaitOutcome) =>
  outcome._tag === "Reached"
    ? { state: outcome.state, verdict: null, session: sessionJson(outcome.session) }
    : { state: "gone", verdict: outcome.verdict, session: outcome.session === null ? null : sessionJson(outcome.session) }

/**
 * The message to send: the command line's, or standard input's bytes for `-`, refused when it is
 * not UTF-8 (UTF-8 takes at most 4 bytes per UTF-16 unit, so more bytes than that are too long).
 */
const messageOf = (command: CommandOf<"send">) =>
  command.message._tag === "text"
    ? Effect.succeed(command.message.text)
    : Effect.flatMap(StandardInput, (input) => input.read(4 * maxMessageLength)).pipe(
      Effect.flatMap(messageFromBytes),
      Effect.filterOrFail((message) => invalidMessage(message) === undefined, (message) => invalidMessage(message)!)
    )

/**
 * As an update's: a message whose result cannot be printed was still sent, and sending it again
 * because the answer was lost would deliver it twice.
 */
const printDelivery = (json: boolean, result: DeliveryResult) =>
  printData(json, () => Schema.encodeSync(DeliveryResult)(result), () => deliveryText(result)).pipe(
    sayingDone(`the message itself was relayed: SendMessage reported it ${result.outcome} (pid ${result.session.pid})`)
  )

/**
 * `send`, stopped through its `cancel` when the command is interrupted (a signal, or its host
 * interrupting it), so that what became of the message is still told (`tell`) before the
 * interruption ends the command: a message already in the session's inbox must not look unsent
 * to a script, which would send it again.
 */
const toldWhenInterrupted = <A, E, R, R2>(
  send: (cancel: Effect.Effect<void>) => Effect.Effect<A, E, R>,
  tell: (exit: Exit.Exit<A, E>) => Effect.Effect<void, never, R2>
) =>
  // Uninterruptible until the wait is in place, so that no interruption can leave the send running
  // untold; the send itself, and the wait for it, stay interruptible.
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const cancel = yield* Deferred.make<void>()
      // A daemon, so that the interruption stops it through `cancel` and not by interrupting it.
      const running = yield* Effect.forkDaemon(restore(send(Deferred.await(cancel))))
      return yield* restore(Fiber.join(running)).pipe(
        Effect.onInterrupt(() => Deferred.succeed(cancel, undefined).pipe(Effect.zipRight(Fiber.await(running)), Effect.flatMap(tell)))
      )
    })
  )

/**
 * A message sent, and its receipt printed whatever it says: `refused` then ends with 9, as a
 * refusal predicted before relaying does, and `held` without `--allow-hold` with 10 (it was held
 * all the same; the policy had not said it would be). A message refused as it is, read from
 * standard input, is a usage error, as it is on the command line.
 */
export const send = Effect.fn("send")(
  function*(json: boolean, command: CommandOf<"send">) {
    const message = yield* messageOf(command)
    const delivery = yield* Delivery
    const result = yield* toldWhenInterrupted(
      (cancel) =>
        delivery.send(command.query, message, {
          allowHold: command.allowHold,
          allowSharedName: command.allowSharedName,
          timeout: command.timeoutMillis,
          cancel
        }),
      // What is told cannot end the command (the interruption does), so output lost on the way is
      // said on stderr, with what became of the message.
      (exit) =>
        Exit.match(exit, {
          onSuccess: (result) =>
            printDelivery(json, result).pipe(Effect.catchTag("OutputFailed", (lost) => printError(`claude-peers: ${terminalSafe(lost.sentence)}`))),
          onFailure: (cause) =>
            Option.match(Cause.failureOption(cause), {
              onNone: () => Effect.void,
              onSome: (error) =>
                error._tag === "InvalidMessage" ? Effect.void : reportFailures(json, noFileNote)(Effect.fail(error)).pipe(
                  Effect.catchTag("OutputFailed", (lost) => printError(`claude-peers: ${terminalSafe(`${lost.sentence}; ${error.message}`)}`))
                )
            })
        }).pipe(Effect.ignore)
    )
    yield* printDelivery(json, result)
    return result.outcome
  },
  (effect, json: boolean, command: CommandOf<"send">) =>
    effect.pipe(
      Effect.catchTag("InvalidMessage", (invalid): Effect.Effect<InvalidMessage> => Effect.succeed(invalid)),
      reportFailures(json, noFileNote),
      Effect.flatMap((outcome) => {
        if (typeof outcome !== "string") return reportUsageError(outcome.message, json)
        if (outcome === "refused") return Effect.fail(new ExitCode({ code: exitCodes.inbound_refused }))
        if (outcome === "held" && !command.allowHold) return Effect.fail(new ExitCode({ code: exitCodes.would_be_held }))
        return Effect.void
      })
    )
)

/** Any invocation, over the services in context: what a mounted command runs on its host's. */
export const handle = (invocation: Invocation): Effect.Effect<void, ExitCode | OutputFailed, Services> => {
  const { command, json } = invocation
  switch (command._tag) {
    case "list":
      return list(json)
    case "inspect":
      return inspect(json)
    case "resolve":
      return resolve(json, command)
    case "settings get":
      return settingsGet(json)
    case "settings set":
      return settingsSet(json, command)
    case "settings reset":
      return settingsReset(json, command)
    case "watch":
      return watch(json, command)
    case "policy":
      return policy(json, command)
    case "wait":
      return wait(json, command)
    case "send":
      return send(json, command)
  }
}

export type { ExitCode }
export { OutputFailed }
