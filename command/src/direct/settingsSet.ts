/** `settings set`, recognized (see `../Direct.ts`). */
import type { CommandOf, Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runSettingsSet } from "../Run.js"

export const main = (invocation: Invocation, command: CommandOf<"settings set">): void => runDirect(invocation, runSettingsSet(invocation, command))
