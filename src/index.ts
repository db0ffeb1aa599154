/**
 * claude-peers: find the Claude Code sessions that are really running, resolve a session id to its
 * live process without ever pointing at the wrong one, read and safely update Claude Code's
 * user-level policy for messages between sessions, and tell the policy in effect for each session.
 *
 * The services are tags with their `layer`; `layerNode` (`claude-peers/node`) provides all of them
 * on the real machine, `layerMemory` (`claude-peers/testing`) in memory.
 */
export * as Delivery from "./services/Delivery.js"
export * as Policy from "./services/Policy.js"
export * as Registry from "./services/Registry.js"
export * as Relay from "./services/Relay.js"
export * as Settings from "./services/Settings.js"
export * as Timing from "./services/Timing.js"
export * as Wait from "./services/Wait.js"
export * as Watch from "./services/Watch.js"

export * as ClaudeHome from "./services/ClaudeHome.js"
export * as ClaudeHomes from "./services/ClaudeHomes.js"
export * as Files from "./services/Files.js"
export * as ProcessProbe from "./services/ProcessProbe.js"
export * as WatchHomes from "./services/WatchHomes.js"

export { DeliveryResult, Mismatch } from "./domain/Delivery.js"
export {
  Candidate,
  ChangedDuringWrite,
  DeliveryCause,
  DeliveryFailed,
  Ended,
  IdentityMismatch,
  InboundRefused,
  InvalidJson,
  InvalidMessage,
  InvalidSettings,
  NotAddressable,
  NotLive,
  NotLiveReason,
  Prediction,
  Receipt,
  SessionQuery,
  SettingsProblem,
  TimedOut,
  WaitState,
  WouldBeHeld
} from "./domain/Errors.js"
export { maxMessageLength, type MessageProblem } from "./domain/Message.js"
export { normalizeName } from "./domain/Names.js"
export { effectiveFor, ReceiverMode, SenderOutcome, SessionPolicy } from "./domain/Policy.js"
export { RecordDescription } from "./domain/Record.js"
export { Session } from "./domain/Session.js"
export { Appeared, Changed, Gone, GoneVerdict, SessionEvent } from "./domain/SessionEvent.js"
export { InboundPolicy, PolicyChange, resetPolicy, setPolicy, SettingsView } from "./domain/Settings.js"
export { Status } from "./domain/Status.js"
export * as Verdict from "./domain/Verdict.js"
export type { CommonOptions, Ports, Services } from "./layers/Services.js"
