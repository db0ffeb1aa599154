/**
 * The three values of `crossSessionInbound`, as plain data: the command's fast path recognizes them
 * without loading the schema library. `InboundPolicy` (`Settings.ts`) is the schema made from them.
 */
export const inboundPolicyNames = ["accept", "hold", "refuse"] as const
