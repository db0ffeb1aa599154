/** `resolve`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runResolve } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"resolve">): void => runDirect(invocation, runResolve(invocation, command))
