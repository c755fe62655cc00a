/**
 * The notification engine of one opencode instance: the pure machine of `core/notify/machine.ts` in a
 * synchronous cell, and its effects carried out in the layer's scope. A send, a lookup or a delayed
 * close runs in the background (opencode does not wait for event hooks; a hop can take 7 s), and
 * closing the scope (opencode disposing the plugin) interrupts what is still running.
 */
import { Clock, Duration, Effect, Fiber, FiberSet, Layer } from "effect"
import { initialNotifyState, notifyStep, type NotifyConfig, type NotifyEffect, type NotifyState } from "../../core/notify/machine.js"
import type { NotifyKind } from "../../core/notify/content.js"
import { deliveryLog, NO_DELIVERIES } from "../../core/notify/deliveryLog.js"
import { fadeCloseAt, popupsShown, sendWaitsForClose, type SentPopup } from "../../core/notify/fade.js"
import { Notifier, type Delivery, type NotifierService } from "../../services/notify/Notifier.js"
import { NotifyEngine, type NotifyEngineService } from "../../services/notify/NotifyEngine.js"
import { SessionLookup, type SessionLookupService } from "../../services/opencode/SessionLookup.js"
import { effectLevelOf } from "../opencode/LoggerAppLog.js"
import { spanned, traced } from "../hotPath.js"

/** Popups raised but not yet closed, per root: the sends that raised them. */
type Raised = Map<string, Array<Fiber.Fiber<SentPopup>>>

export const makeNotifyEngine = (config: NotifyConfig, notifier: NotifierService, lookup: SessionLookupService) =>
  Effect.gen(function* () {
    const fibers = yield* FiberSet.make<unknown, never>()
    let state: NotifyState = initialNotifyState
    const raised: Raised = new Map()
    /**
     * Over the ssh hop a close names only the key (`<host>:<root>`), and the desktop closes every popup
     * remembered under it when the close arrives: a popup raised for the root while its close waits out
     * FADE_MIN_MS (the done after an answer, the next question) would be closed with the old ones. So,
     * on that channel, a send for a root waits behind the root's pending close (at most FADE_MIN_MS;
     * core/notify/fade.ts). The channel is read at the first send or close, not when the engine is
     * built: selecting it searches PATH, which opencode's start should not wait for.
     */
    const closing = new Map<string, Fiber.RuntimeFiber<unknown, never>>()
    let keyed: boolean | undefined
    const closesByKey = () => (keyed ??= sendWaitsForClose(notifier.channel))
    let deliveries = NO_DELIVERIES

    const reportDelivery = (kind: NotifyKind | string, d: Delivery): Effect.Effect<void> => {
      const line = deliveryLog(deliveries, kind, d)
      deliveries = line.memory
      return Effect.logWithLevel(effectLevelOf(line.level), line.message)
    }

    // generators defined once, not one made per effect (docs/PERFORMANCE.md, "Generators")
    const sendPopup = Effect.fnUntraced(function* (e: Extract<NotifyEffect, { readonly type: "send" }>) {
      const send = notifier.send(e.notification, e.root).pipe(
        Effect.tap((d) => reportDelivery(e.notification.kind, d)),
        // when the send returned (the popup was up by then)
        Effect.flatMap((d) => Effect.map(Clock.currentTimeMillis, (doneAt): SentPopup => ({ ok: d.ok, id: d.id, doneAt })))
      )
      const pending = closesByKey() ? closing.get(e.root) : undefined
      const fiber = yield* FiberSet.run(fibers, pending === undefined ? send : Effect.zipRight(Fiber.await(pending), send))
      if (config.fade) {
        const list = raised.get(e.root) ?? []
        list.push(fiber)
        raised.set(e.root, list)
      }
    })

    /** The popups `sends` raised for a root closed at `at` at the earliest, each shown at least FADE_MIN_MS. */
    const closeLater = Effect.fnUntraced(function* (e: Extract<NotifyEffect, { readonly type: "close" }>, sends: ReadonlyArray<Fiber.Fiber<SentPopup>>) {
      const now = yield* Clock.currentTimeMillis
      if (e.at > now) yield* Effect.sleep(Duration.millis(e.at - now))
      const shown = popupsShown(yield* Effect.forEach(sends, Fiber.join))
      if (shown === undefined) return
      // the machine counts FADE_MIN_MS from its decision; a popup a slow hop showed later stays that long too
      const after = yield* Clock.currentTimeMillis
      const closeAt = fadeCloseAt(shown.shownAt, after)
      if (closeAt > after) yield* Effect.sleep(Duration.millis(closeAt - after))
      const d = yield* notifier.close(e.root, shown.ids)
      yield* Effect.logDebug(d.ok ? `closed the popup of ${e.root} via ${d.channel}` : `closing the popup of ${e.root} failed via ${d.channel}: ${d.reason ?? "unknown reason"}`)
    })

    const carryOut = (e: NotifyEffect): Effect.Effect<void> => {
      switch (e.type) {
        case "log":
          return Effect.logWithLevel(effectLevelOf(e.level), e.message)
        case "send":
          return sendPopup(e)
        case "close": {
          const sends = raised.get(e.root) ?? []
          raised.delete(e.root)
          if (sends.length === 0) return Effect.void
          let self: Fiber.RuntimeFiber<unknown, never> | undefined
          const forget = Effect.sync(() => {
            if (self !== undefined && closing.get(e.root) === self) closing.delete(e.root)
          })
          return FiberSet.run(fibers, closeLater(e, sends).pipe(Effect.ensuring(forget))).pipe(
            Effect.map((f) => {
              if (closesByKey() && f.unsafePoll() === null) closing.set(e.root, (self = f))
            })
          )
        }
        case "lookup":
          return FiberSet.run(
            fibers,
            lookup.lookup(e.session).pipe(
              Effect.matchEffect({
                onFailure: (f) => apply({ type: "lookupFailed", id: e.session, reason: f.reason }),
                onSuccess: (facts) => apply({ type: "session", ...facts, id: e.session })
              })
            )
          ).pipe(Effect.asVoid)
      }
    }

    const apply: NotifyEngineService["apply"] = traced("NotifyEngine.apply")(function* (input) {
      // the decision and the state change happen here, synchronously, in arrival order
      const step = notifyStep(state, input, yield* Clock.currentTimeMillis, config)
      state = step.state
      if (step.effects.length > 0) yield* Effect.forEach(step.effects, carryOut, { discard: true })
    })

    return { apply, settle: spanned(FiberSet.awaitEmpty(fibers), "NotifyEngine.settle") } satisfies NotifyEngineService
  })

/** The engine, or one that does nothing when notifications are off (`notify:false`). */
export const NotifyEngineShell = (enabled: boolean, config: NotifyConfig) =>
  enabled
    ? Layer.scoped(
        NotifyEngine,
        Effect.gen(function* () {
          return yield* makeNotifyEngine(config, yield* Notifier, yield* SessionLookup)
        })
      )
    : Layer.succeed(NotifyEngine, { apply: () => spanned(Effect.void, "NotifyEngine.apply"), settle: spanned(Effect.void, "NotifyEngine.settle") })
