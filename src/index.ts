/**
 * claude-peers: find the Claude Code sessions that are really running, resolve a session id to its
 * live process without ever pointing at the wrong one, and read and safely update Claude Code's
 * user-level policy for messages between sessions.
 *
 * The services are tags; provide them with `claude-peers/node` on the real machine, or with
 * `claude-peers/testing` in tests.
 */
export * as ClaudeHome from "./services/ClaudeHome.js"
export * as Files from "./services/Files.js"
export * as ProcessProbe from "./services/ProcessProbe.js"
export * as Registry from "./services/Registry.js"
export * as Settings from "./services/Settings.js"
export * as Watch from "./services/Watch.js"

export * from "./domain/Errors.js"
export * as Record from "./domain/Record.js"
export * from "./domain/Session.js"
export * from "./domain/SessionEvent.js"
export { InboundPolicy, PolicyChange, resetPolicy, setPolicy, SettingsView } from "./domain/Settings.js"
export * from "./domain/Status.js"
export * from "./domain/Verdict.js"
