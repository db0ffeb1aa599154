import * as Command from "@effect/cli/Command"
import { invoke } from "./Base.js"
import { json } from "./Options.js"

export const inspectCommand = Command.make("inspect", { json }, ({ json }) => invoke({ _tag: "inspect" }, json)).pipe(
  Command.withDescription("show every registry file with its verdict")
)
