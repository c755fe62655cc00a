/**
 * The log line of each delivery (SPEC §10.5): a success is `info`; a failure is a warning the first
 * time and `debug` when it only repeats. On `ssh` and `none` failures repeat on every notification (no
 * desktop, hop down), so only the first failure in the process warns; on a desktop channel a failure
 * warns unless it repeats the previous failure's reason (a notify-send without a desktop session fails
 * the same way every time; a success in between forgets the reason). Pure: the shell keeps the memory.
 */
import type { ChannelName } from "./channel.js"

/** Channels whose failures repeat on every notification: the first is a warning, later ones debug. */
const QUIET_AFTER_FIRST: ReadonlySet<ChannelName> = new Set(["ssh", "none"])

/** What the process remembers of its deliveries. */
export interface DeliveryMemory {
  /** Failures so far, on any channel. */
  readonly failures: number
  /** The reason of the last failure, forgotten at a success. */
  readonly lastReason: string | undefined
}

export const NO_DELIVERIES: DeliveryMemory = { failures: 0, lastReason: undefined }

/** A delivery as the log reads it (`Delivery` of the Notifier service). */
export interface DeliveryOutcome {
  readonly ok: boolean
  readonly channel: ChannelName
  readonly reason?: string | undefined
}

/** The level of a failed delivery, given the failures before it and the previous failure's reason. */
export const failureLevel = (channel: ChannelName, failuresBefore: number, reason: string, previousReason: string | undefined): "warn" | "debug" =>
  QUIET_AFTER_FIRST.has(channel) ? (failuresBefore === 0 ? "warn" : "debug") : reason === previousReason ? "debug" : "warn"

/** The line one delivery of a `kind` notification logs, and the memory after it. */
export const deliveryLog = (
  memory: DeliveryMemory,
  kind: string,
  d: DeliveryOutcome
): { readonly memory: DeliveryMemory; readonly level: "info" | "warn" | "debug"; readonly message: string } => {
  if (d.ok) return { memory: { failures: memory.failures, lastReason: undefined }, level: "info", message: `notified ${kind} via ${d.channel}` }
  const reason = d.reason ?? "unknown reason"
  return {
    memory: { failures: memory.failures + 1, lastReason: reason },
    level: failureLevel(d.channel, memory.failures, reason, memory.lastReason),
    message: `notification failed via ${d.channel}: ${reason}`
  }
}
