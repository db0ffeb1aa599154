/** `settings reset`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runSettingsReset } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"settings reset">): void => runDirect(invocation, runSettingsReset(invocation, command))
