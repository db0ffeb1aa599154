/** `watch`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runWatch } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"watch">): void => runDirect(invocation, runWatch(invocation, command))
