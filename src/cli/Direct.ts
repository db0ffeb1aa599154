/** A recognized invocation, run without the command-line parser: the same handler over the same layers. */
import type { Invocation } from "./Invocation.js"
import { runInvocation } from "./Run.js"
import { runMain } from "./RunMain.js"

export const main = (invocation: Invocation): void => runMain(runInvocation(invocation), { json: invocation.json })
