/** `policy`, recognized (see `../Direct.ts`). */
import { runDirect } from "../Direct.js"
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runPolicy } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"policy">): void => runDirect(invocation, runPolicy(invocation, command))
