/**
 * The `Announce` effect (US-50): what the engine did in a session, told to the user through the
 * notification machine (a `switched` input: the switch's line as a notification). Without a
 * notification machine in the context (a test's bare engine) there is no one to tell.
 */
import { Effect, Option } from "effect"
import { causeLine } from "../../core/causeLine.js"
import type { AnnounceEffect } from "../../core/engine/effects.js"
import { NotifyEngine } from "../../services/notify/NotifyEngine.js"

export const announceRunner = Effect.map(Effect.serviceOption(NotifyEngine), (notifications) =>
  Option.match(notifications, {
    onNone: () => (_e: AnnounceEffect): Effect.Effect<void> => Effect.void,
    onSome: (n) => (e: AnnounceEffect): Effect.Effect<void> =>
      n
        .apply({ type: "switched", session: e.session, text: e.text })
        .pipe(Effect.catchAllCause((cause) => Effect.logError(`notification failed: ${causeLine(cause)}`).pipe(Effect.annotateLogs("session", e.session))))
  })
)
