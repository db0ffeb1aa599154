/**
 * The exit code a host's runtime gives the mounted command's end: the `ExitCode` of a failure it
 * reported, 130 for an interruption (never 0, so that a script does not take a `settings` update or
 * a `send` cut short for done), 1 for any other failure, else 0. `NodeRuntime.runMain`'s default
 * teardown makes an interruption 0. An interruption does not say which signal caused it, so it is
 * 130 whatever it was (the standalone command gives SIGTERM 143 and SIGHUP 129), and so for `watch`
 * too, which the standalone command ends with 0 on a signal.
 */
import type { Teardown } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { ExitCode } from "./Report.js"

export const teardown: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(0)
  const failure: unknown = Option.getOrUndefined(Cause.failureOption(exit.cause))
  onExit(failure instanceof ExitCode ? failure.code : Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
}
