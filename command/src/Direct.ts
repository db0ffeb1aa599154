/**
 * A recognized invocation, run without the command-line parser: the same handler over the same
 * layers (`Run.ts`). Each command's entry is a module of `direct/`, which the bundle keeps as a part
 * of its own, with its own code cache: a command loads only what it uses, and no command's cache is
 * written by another.
 */
import type * as Effect from "effect/Effect"
import type { Invocation } from "../../src/cli/Invocation.js"
import { runMain } from "./RunMain.js"

/** Runs a command's program to the process's exit code. */
export const runDirect = (invocation: Invocation, program: Effect.Effect<unknown, unknown>): void => runMain(program, { json: invocation.json })
