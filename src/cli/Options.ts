import * as Options from "@effect/cli/Options"

/** Every command takes `--json`: machine output on stdout, never mixed with prose. */
export const json = Options.boolean("json").pipe(Options.withDescription("print JSON on stdout instead of a table"))
