/**
 * How Claude Code's settings spell the inbound policy, as plain data, for what must know it without
 * a schema or the settings document (the command table's parser, the policy's file readings): the
 * key, and its three values. `InboundPolicy` (`Settings.ts`) is the schema made from them.
 */
export const settingsKey = "crossSessionInbound"

export const inboundPolicyNames = ["accept", "hold", "refuse"] as const
