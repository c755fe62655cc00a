/**
 * A budget a provider stated when asked (keyEndpoints.ts) as what quota sensing already reads (issue 35,
 * US-48): for each slot model that draws on it, a `response` event whose rate-limit headers state
 * requests remaining, the limit and the reset. The engine turns it into the model's quota record and
 * `quota` line, and cools the model as `quota_low` at the reserve, exactly as a response's own headers
 * (engine/quota.ts). Pure.
 */
import type { EngineEvent } from "../engine/events.js"
import type { Slot } from "../pool/pool.js"
import type { KeyEndpoint, StatedBudget } from "./keyEndpoints.js"

export type ResponseEvent = Extract<EngineEvent, { readonly type: "response" }>

/**
 * The budget in the OpenAI header family headers.ts reads: `x-ratelimit-{remaining,limit,reset}-requests`,
 * the reset as epoch milliseconds.
 */
export const budgetHeaders = (budget: StatedBudget): Readonly<Record<string, string>> => ({
  "x-ratelimit-remaining-requests": String(budget.remaining),
  "x-ratelimit-limit-requests": String(budget.limit),
  "x-ratelimit-reset-requests": String(budget.resetAt)
})

/** The slot models `endpoint`'s budget covers, in declaration order, each once. */
export const coveredModels = (endpoint: KeyEndpoint, slots: ReadonlyArray<Slot>): ReadonlyArray<string> => [
  ...new Set(slots.filter((s) => s.provider === endpoint.provider && endpoint.covers(s.model)).map((s) => s.model))
]

/** One `response` event per covered slot model, with the option `quotaReserve`. */
export const budgetEvents = (endpoint: KeyEndpoint, budget: StatedBudget, slots: ReadonlyArray<Slot>, reserve: number): ReadonlyArray<ResponseEvent> => {
  const headers = budgetHeaders(budget)
  return coveredModels(endpoint, slots).map((model) => ({ type: "response", headers, model, reserve }))
}
