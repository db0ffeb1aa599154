import * as Schema from "effect/Schema"

/**
 * Claude Code's two permission-mode classes for messages between sessions: `bypass`
 * (`bypassPermissions`, `--dangerously-skip-permissions`) and `prompting` (every other mode: default,
 * acceptEdits, plan, auto). With `crossSessionInbound` set nowhere, a message is delivered when the
 * sender's class is the receiver's, and held otherwise.
 */
export const PermissionModeClass = Schema.Literal("bypass", "prompting")
export type PermissionModeClass = typeof PermissionModeClass.Type
