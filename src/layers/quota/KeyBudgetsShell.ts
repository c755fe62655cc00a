/**
 * Budgets a provider will tell when asked (issue 35, US-48), in the engine's scope: every KEY_TICK_MS
 * the pool engine's state says which budget endpoints are due (core/quota/keySchedule.ts: a live claim
 * of this process on a covered slot model, at most one read a minute per provider, none for a provider
 * not in the pool); each due endpoint is read through `KeyEndpoint` with the key opencode's config or
 * environment gives, and a stated budget reaches the engine as quota sensing's `response` events
 * (core/quota/keyBudget.ts). A failure is logged once per kind and never leaves the loop.
 */
import { Clock, Duration, Effect, Either, Layer, Ref } from "effect"
import { causeLine } from "../../core/causeLine.js"
import { slotsOf } from "../../core/engine/state.js"
import type { JsonRecord } from "../../core/json.js"
import type { Slot } from "../../core/pool/pool.js"
import { budgetEvents, coveredModels } from "../../core/quota/keyBudget.js"
import { apiKeyOf, KEY_ENDPOINTS, type KeyEndpoint as Endpoint } from "../../core/quota/keyEndpoints.js"
import { dueReads, KEY_TICK_MS, NO_KEY, NO_KEY_MEMORY, readDone, readFailed, type KeyLogLine, type KeyMemory } from "../../core/quota/keySchedule.js"
import { PoolEngine } from "../../services/pool/PoolEngine.js"
import { KeyBudgets } from "../../services/quota/KeyBudgets.js"
import { failureOf, KeyEndpoint } from "../../services/quota/KeyEndpoint.js"
import { effectLevelOf } from "../opencode/LoggerAppLog.js"
import { spanned, traced } from "../hotPath.js"

export interface KeyBudgetsOptions {
  /** The option `quotaReserve`. */
  readonly reserve: number
  /** Where the keys' environment variables are read (process.env in opencode). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The endpoint table (KEY_ENDPOINTS unless a test gives its own). */
  readonly endpoints?: ReadonlyArray<Endpoint>
  readonly tickMs?: number
  /** The option `keyBudgets`: `false` reads nothing (no loop runs). */
  readonly enabled?: boolean
}

const logged = (line: KeyLogLine | undefined) => (line === undefined ? Effect.void : Effect.logWithLevel(effectLevelOf(line.level), line.message))

export const KeyBudgetsShell = (o: KeyBudgetsOptions): Layer.Layer<KeyBudgets, never, PoolEngine | KeyEndpoint> =>
  Layer.scoped(
    KeyBudgets,
    Effect.gen(function* () {
      const engine = yield* PoolEngine
      const reader = yield* KeyEndpoint
      const endpoints = o.endpoints ?? KEY_ENDPOINTS
      const config = yield* Ref.make<JsonRecord | undefined>(undefined)
      const memory = yield* Ref.make<KeyMemory>(NO_KEY_MEMORY)
      /** A log fold of keySchedule.ts applied to the memory: the line it gives. */
      const fold = <A>(f: (m: KeyMemory) => { readonly memory: KeyMemory; readonly line: A }) =>
        Ref.modify(memory, (m) => {
          const out = f(m)
          return [out.line, out.memory] as const
        })

      /** One due endpoint: its key, its read, the log line of the outcome, the budget to the engine. */
      const readOne = Effect.fnUntraced(function* (e: Endpoint, slots: ReadonlyArray<Slot>) {
        const key = apiKeyOf(e, yield* Ref.get(config), o.env)
        if (key === undefined) {
          const reason = `no API key: neither provider.${e.provider}.options.apiKey nor ${e.env.join(", ")} is set`
          return yield* logged(yield* fold((m) => readFailed(m, e, { kind: NO_KEY, reason })))
        }
        const got = yield* Effect.either(reader.read(e, key))
        if (Either.isLeft(got)) return yield* logged(yield* fold((m) => readFailed(m, e, failureOf(got.left))))
        const budget = got.right._tag === "Budget" ? got.right.budget : undefined
        yield* logged(yield* fold((m) => readDone(m, e, budget)))
        if (budget === undefined) return
        for (const event of budgetEvents(e, budget, slots, o.reserve)) yield* engine.apply(event)
      })

      const check = Effect.gen(function* () {
        const state = yield* engine.state
        const slots = slotsOf(state)
        // no covered slot in the pool: nothing to read (and the claims are not even looked at)
        if (!endpoints.some((e) => coveredModels(e, slots).length > 0)) return
        const now = yield* Clock.currentTimeMillis
        const due = yield* Ref.modify(memory, (m) => {
          const d = dueReads(m, endpoints, slots, state.machine.claims, now)
          return [d.due, d.memory] as const
        })
        for (const e of due) yield* readOne(e, slots)
      })
      const tick = spanned(Effect.catchAllCause(check, (c) => Effect.logError(`budget read failed: ${causeLine(c)}`)), "KeyBudgets.tick")

      const on = o.enabled !== false
      if (on) yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(o.tickMs ?? KEY_TICK_MS)), tick)))
      return {
        configure: traced("KeyBudgets.configure")((c: JsonRecord) => Ref.set(config, c)),
        tick: on ? tick : spanned(Effect.void, "KeyBudgets.tick")
      }
    })
  )
