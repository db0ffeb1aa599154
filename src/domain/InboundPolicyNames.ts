/**
 * The three values of `crossSessionInbound`, as plain data, for what must know them without a
 * schema (the command table's parser). `InboundPolicy` (`Settings.ts`) is the schema made from them.
 */
export const inboundPolicyNames = ["accept", "hold", "refuse"] as const
