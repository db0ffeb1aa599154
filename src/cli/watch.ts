/**
 * `claude-peers watch [--interval MS] [--json]`: one line per change in the live sessions, until
 * interrupted (SIGINT and SIGTERM end it with exit 0, see `bin.ts`) or until nobody reads its
 * output. With `--json` each line is the contract's event object; otherwise a line a person can
 * read, every record value terminal-safe.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema, Stream } from "effect"
import { SessionEvent } from "../domain/SessionEvent.js"
import type { Session } from "../domain/Session.js"
import { defaultIntervalMillis, watchSessions } from "../services/Watch.js"
import { json } from "./Options.js"
import { orDash, statusText } from "./Render.js"
import { reportFailures } from "./Report.js"
import { terminalSafe } from "./Text.js"

const interval = Options.integer("interval").pipe(
  // A zero or negative interval would re-read the registry in a busy loop.
  // Past 2^31 - 1 ms a timer fires at once or never, depending on the runtime: dead sessions would go unreported.
  Options.filterMap(
    (ms) => (ms > 0 && ms <= 2147483647 ? Option.some(ms) : Option.none()),
    "--interval must be a positive number of milliseconds, at most 2147483647"
  ),
  Options.withDefault(defaultIntervalMillis),
  Options.withDescription("how often, in ms, live sessions are re-checked for a process that died without touching its file")
)

const encodeEvent = Schema.encodeSync(SessionEvent)

/** The fields a person tells sessions apart by; the timestamps are only named when they change. */
const shownFields: ReadonlyArray<readonly [string, (s: Session) => string | number | null]> = [
  ["name", (s) => s.name],
  ["status", statusText],
  ["waitingFor", (s) => s.waitingFor],
  ["sessionId", (s) => s.sessionId],
  ["cwd", (s) => s.cwd],
  ["kind", (s) => s.kind],
  ["jobId", (s) => s.jobId],
  ["version", (s) => s.version],
  ["tmux", (s) => s.tmux],
  ["socketPath", (s) => s.socketPath]
]
const timeFields = ["statusUpdatedAtMs", "updatedAtMs", "startedAtMs"] as const

const differences = (session: Session, previous: Session): string => {
  const shown = shownFields.flatMap(([label, get]) =>
    get(session) === get(previous) ? [] : [`${label} ${orDash(get(previous))} -> ${orDash(get(session))}`]
  )
  const times = timeFields.filter((field) => session[field] !== previous[field])
  return [...shown, ...times].join(", ")
}

/** `+ appeared  PID  NAME  STATUS  CWD`, `~ changed …`, `- gone      PID  NAME  (VERDICT)`. */
export const eventLine = (event: SessionEvent): string => {
  const { name, pid } = event.session
  switch (event.type) {
    case "appeared":
      return terminalSafe(`+ appeared  ${pid}  ${name}  ${statusText(event.session)}  ${orDash(event.session.cwd)}`)
    case "changed":
      return terminalSafe(`~ changed   ${pid}  ${name}  ${statusText(event.session)}  (${differences(event.session, event.previous)})`)
    case "gone":
      return terminalSafe(`- gone      ${pid}  ${name}  (${event.verdict})`)
  }
}

/**
 * Completes when nobody reads stdout any more (`claude-peers watch --json | head -1`): every later
 * line would be lost (`console.log` swallows EPIPE), and a watch that outlived its reader would
 * hold the shell's pipeline open forever.
 */
const readerGone = Effect.async<void>((resume) => {
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") resume(Effect.void)
  }
  process.stdout.on("error", onError)
  return Effect.sync(() => void process.stdout.off("error", onError))
})

export const watchCommand = Command.make("watch", { interval, json }, Effect.fn("watch")(function*({ interval, json }) {
  yield* watchSessions({ intervalMillis: interval }).pipe(
    Stream.interruptWhen(readerGone),
    Stream.runForEach((event) => Console.log(json ? JSON.stringify(encodeEvent(event)) : eventLine(event))),
    reportFailures(json)
  )
})).pipe(Command.withDescription("print a line for every session that appears, changes or is gone, until interrupted"))
