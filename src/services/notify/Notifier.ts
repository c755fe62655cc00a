/**
 * Raising and closing desktop notifications (SPEC §10.4, §10.5, §10.8). Every call returns the
 * delivery result and never fails: a notification can never break an opencode hook.
 */
import { Context, type Effect } from "effect"
import type { ChannelName } from "../../core/notify/channel.js"
import type { Notification } from "../../core/notify/content.js"

/** SPEC §10.4: `{ok, channel, reason?, id?}`; `id` is the popup id `notify-send --print-id` gave. */
export interface Delivery {
  readonly ok: boolean
  readonly channel: ChannelName
  readonly reason?: string | undefined
  readonly id?: number | undefined
}

export interface NotifierService {
  /** The channel sends go through (decided once, SPEC §10.5), with the reason when it is `none`. */
  readonly channel: ChannelName
  readonly reason?: string | undefined
  /**
   * Raises `n`. `key` names the popup for fade (the root session id; the ssh hop sends
   * `<short host>:<key>`); locally the id comes back in the result.
   */
  readonly send: (n: Notification, key: string) => Effect.Effect<Delivery>
  /** Closes the popups raised under `key` (locally the ids given, over the hop a `close` payload for the key). */
  readonly close: (key: string, ids: ReadonlyArray<number>) => Effect.Effect<Delivery>
}

export class Notifier extends Context.Tag("opencode-pool/Notifier")<Notifier, NotifierService>() {}
