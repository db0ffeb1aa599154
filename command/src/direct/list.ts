/** `list`, recognized (see `../Direct.ts`). */
import type { Invocation } from "../../../src/cli/Invocation.js"
import { runDirect } from "../Direct.js"
import { runList } from "../Run.js"

export const main = (invocation: Invocation): void => runDirect(invocation, runList(invocation))
