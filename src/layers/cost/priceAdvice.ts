/**
 * The price advisory (US-23): one warning per slot model the shipped price snapshot prices above zero,
 * once per process; silent without a snapshot. Forked off the boot path: reading the snapshot takes
 * tens of milliseconds.
 */
import { Effect, FiberSet, Option, Ref } from "effect"
import type { Slot } from "../../core/pool/pool.js"
import { pricedSlotWarnings } from "../../core/prices.js"
import { PriceSnapshot } from "../../services/cost/PriceSnapshot.js"

/** The advisory of a scope; `settle` waits until no reading is in flight (tests). */
export const makePriceAdvice = Effect.gen(function* () {
  const prices = yield* Effect.serviceOption(PriceSnapshot)
  const advice = yield* FiberSet.make<void, never>()
  const warned = yield* Ref.make<ReadonlySet<string>>(new Set())
  const adviseOnce = Effect.fnUntraced(function* (slots: ReadonlyArray<Slot>, table: Parameters<typeof pricedSlotWarnings>[1]) {
    const fresh = yield* Ref.modify(warned, (was) => {
      const lines = pricedSlotWarnings(slots, table, was)
      return [lines, lines.length === 0 ? was : new Set([...was, ...lines.map((l) => l.model)])] as const
    })
    for (const l of fresh) yield* Effect.logWarning(l.line).pipe(Effect.annotateLogs("model", l.model))
  })
  const advise = (slots: ReadonlyArray<Slot>): Effect.Effect<void> =>
    Option.match(prices, {
      onNone: () => Effect.void,
      onSome: (snapshot) =>
        FiberSet.run(
          advice,
          Effect.flatMap(snapshot.table, (table) => (table === undefined ? Effect.void : adviseOnce(slots, table)))
        ).pipe(Effect.asVoid)
    })
  return { advise, settle: FiberSet.awaitEmpty(advice) }
})
