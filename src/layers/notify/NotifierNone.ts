/** The channel `none` (SPEC §10.5): every send and close reports the reason, nothing runs. */
import { Effect, Layer } from "effect"
import { Notifier, type Delivery, type NotifierService } from "../../services/notify/Notifier.js"
import { spanned } from "../hotPath.js"

export const makeNoneNotifier = (reason: string): NotifierService => {
  const refused: Delivery = { ok: false, channel: "none", reason }
  return { channel: "none", reason, send: () => spanned(Effect.succeed(refused), "Notifier.send"), close: () => spanned(Effect.succeed(refused), "Notifier.close") }
}

export const NotifierNone = (reason: string) => Layer.succeed(Notifier, makeNoneNotifier(reason))
