/**
 * Budgets a provider will tell when asked (issue 35, US-48): while this process holds a live claim on a
 * slot model whose provider has a budget endpoint (core/quota/keyEndpoints.ts), the endpoint is read at
 * most once a minute and what it states reaches the pool engine as quota sensing's `response` events.
 * Every method is the span `KeyBudgets.<method>`.
 */
import { Context, type Effect } from "effect"
import type { JsonRecord } from "../../core/json.js"

export interface KeyBudgetsService {
  /** The config hook: keeps opencode's config, where each provider's API key is found (never logged). */
  readonly configure: (config: JsonRecord) => Effect.Effect<void>
  /** One check: reads each endpoint that is due and hands its budget to the engine (the layer runs it every KEY_TICK_MS). Never fails. */
  readonly tick: Effect.Effect<void>
}

export class KeyBudgets extends Context.Tag("opencode-pool/KeyBudgets")<KeyBudgets, KeyBudgetsService>() {}
