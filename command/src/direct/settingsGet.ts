/** `settings get`, recognized (see `../Direct.ts`). */
import type { Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runSettingsGet } from "../Run.js"

export const main = (invocation: Invocation): void => runDirect(invocation, runSettingsGet(invocation))
