import { Duration, Effect, Layer } from "effect"
import type { ChannelName } from "../../core/notify/channel.js"
import type { Notification } from "../../core/notify/content.js"
import { Notifier, type Delivery, type NotifierService } from "../../services/notify/Notifier.js"
import { spanned } from "../hotPath.js"

/** `ok`, `ok` with the popup id given, or a failure reason. */
export type MemoryOutcome = "ok" | { readonly id: number } | string

export interface MemorySend {
  readonly n: Notification
  readonly key: string
}

export interface MemoryClose {
  readonly key: string
  readonly ids: ReadonlyArray<number>
}

export interface MemoryNotifierOptions {
  /** Default `notify-send`: a plain `ok` then gets the next popup id (1, 2, …); other channels give none. */
  readonly channel?: ChannelName | undefined
  /** With channel `none`. */
  readonly reason?: string | undefined
  /** Outcomes of closes, taken like the sends' (default: every close is `ok`). */
  readonly closeOutcomes?: Array<"ok" | string> | undefined
  /** Each send and close takes this long (on the test's clock) before its outcome. */
  readonly latencyMs?: number | undefined
}

/** The next outcome: taken in order, then the last repeats. */
const next = <A>(outcomes: Array<A>, fallback: A): A => (outcomes.length > 1 ? outcomes.shift()! : (outcomes[0] ?? fallback))

/**
 * A scripted notifier for tests: sends and closes are recorded when they start, outcomes are taken in
 * order (then the last repeats).
 */
export const makeMemoryNotifier = (
  outcomes: Array<MemoryOutcome>,
  sends: Array<MemorySend>,
  closes: Array<MemoryClose>,
  options: MemoryNotifierOptions = {}
): NotifierService => {
  const channel = options.channel ?? "notify-send"
  const closeOutcomes = options.closeOutcomes ?? ["ok"]
  const latency = options.latencyMs ?? 0
  let nextId = 1
  const after = (d: Delivery): Effect.Effect<Delivery> => (latency > 0 ? Effect.as(Effect.sleep(Duration.millis(latency)), d) : Effect.succeed(d))
  return {
    channel,
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    send: (n, key) =>
      Effect.suspend(() => {
        sends.push({ n, key })
        const o = next(outcomes, "ok")
        if (typeof o === "object") return after({ ok: true, channel, id: o.id })
        if (o !== "ok") return after({ ok: false, channel, reason: o })
        return after(channel === "notify-send" ? { ok: true, channel, id: nextId++ } : { ok: true, channel })
      }).pipe(spanned("Notifier.send")),
    close: (key, ids) =>
      Effect.suspend(() => {
        closes.push({ key, ids: [...ids] })
        const o = next(closeOutcomes, "ok")
        return after(o === "ok" ? { ok: true, channel } : { ok: false, channel, reason: o })
      }).pipe(spanned("Notifier.close"))
  }
}

export const NotifierMemory = (outcomes: Array<MemoryOutcome>, sends: Array<MemorySend>, closes: Array<MemoryClose>, options: MemoryNotifierOptions = {}) =>
  Layer.sync(Notifier, () => makeMemoryNotifier(outcomes, sends, closes, options))
