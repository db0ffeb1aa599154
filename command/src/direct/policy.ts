/** `policy`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runPolicy } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"policy">): void => runDirect(invocation, runPolicy(invocation, command))
