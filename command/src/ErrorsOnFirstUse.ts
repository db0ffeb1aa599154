/**
 * `src/domain/Errors.ts` for the command's build: the same exports, each a stand-in that builds the
 * error classes (and with them `effect/Schema`) on first use, so that a run that succeeds builds none.
 */
import type * as Errors from "../../src/domain/Errors.js"
import { loadOnFirstUse, onFirstUse } from "./OnFirstUse.js"

const real = loadOnFirstUse(() => require("../../src/domain/Errors.js") as typeof Errors)

export type SessionQuery = Errors.SessionQuery
export type NotLiveReason = Errors.NotLiveReason
export type NotLive = Errors.NotLive
export type Candidate = Errors.Candidate
export type IdentityMismatch = Errors.IdentityMismatch
export type ChangedDuringWrite = Errors.ChangedDuringWrite
export type SettingsProblem = Errors.SettingsProblem
export type InvalidSettings = Errors.InvalidSettings
export type InvalidJson = Errors.InvalidJson
export type NotAddressable = Errors.NotAddressable
export type InboundRefused = Errors.InboundRefused
export type WouldBeHeld = Errors.WouldBeHeld
export type DeliveryFailed = Errors.DeliveryFailed
export type InvalidMessage = Errors.InvalidMessage
export type DeliveryCause = Errors.DeliveryCause
export type RelayRun = Errors.RelayRun

export const SessionQuery = onFirstUse(() => real().SessionQuery)
export const quote = onFirstUse(() => real().quote)
export const NotLiveReason = onFirstUse(() => real().NotLiveReason)
export const NotLive = onFirstUse(() => real().NotLive)
export const Candidate = onFirstUse(() => real().Candidate)
export const IdentityMismatch = onFirstUse(() => real().IdentityMismatch)
export const ChangedDuringWrite = onFirstUse(() => real().ChangedDuringWrite)
export const SettingsProblem = onFirstUse(() => real().SettingsProblem)
export const InvalidSettings = onFirstUse(() => real().InvalidSettings)
export const InvalidJson = onFirstUse(() => real().InvalidJson)
export const NotAddressable = onFirstUse(() => real().NotAddressable)
export const InboundRefused = onFirstUse(() => real().InboundRefused)
export const WouldBeHeld = onFirstUse(() => real().WouldBeHeld)
export const DeliveryFailed = onFirstUse(() => real().DeliveryFailed)
export const InvalidMessage = onFirstUse(() => real().InvalidMessage)
export const encodeError = onFirstUse(() => real().encodeError)
export type WaitState = Errors.WaitState
export type TimedOut = Errors.TimedOut
export type Ended = Errors.Ended
export const WaitState = onFirstUse(() => real().WaitState)
export const TimedOut = onFirstUse(() => real().TimedOut)
export const Ended = onFirstUse(() => real().Ended)
