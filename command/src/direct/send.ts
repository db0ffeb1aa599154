/** `send`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runSend } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"send">): void => runDirect(invocation, runSend(invocation, command))
