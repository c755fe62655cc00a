/**
 * From a classified signal to a cooling decision: attribution and scope (SPEC §7.4), windows
 * (§7.5–7.6) and the retry-loop breaker (§7.7). Pure.
 */
import { BREAKER_NEXT_MS } from "./constants.js"
import { classificationText, classify, isProviderWideText, type LimitClass } from "./classify.js"
import { planCool, type CoolPlan, type CooldownTable } from "./cooldown.js"
import type { Slot } from "./pool.js"
import { statedReset, type Headers, type StatedReset } from "./reset.js"

export type SignalDecision =
  | { readonly _tag: "Ignore"; readonly reason: "context_limit" | "not_a_limit" }
  | { readonly _tag: "Cool"; readonly cls: Exclude<LimitClass, "context_limit">; readonly plan: CoolPlan }

const NOT_A_LIMIT: SignalDecision = { _tag: "Ignore", reason: "not_a_limit" }
const CONTEXT_LIMIT: SignalDecision = { _tag: "Ignore", reason: "context_limit" }

export const providerOf = (model: string): string => model.slice(0, model.indexOf("/"))

export interface LimitSignal {
  /** The recorded error text (an error's JSON, a JSON message, or plain text). */
  readonly text: string
  readonly status?: number | undefined
  readonly headers?: Headers | undefined
  /** The attributed model: the signal's own, else the model of the live claim targeting its session. */
  readonly model?: string | undefined
  /** A provider the error names. */
  readonly provider?: string | undefined
}

interface Scoped {
  readonly models: ReadonlyArray<string>
  readonly scope: "model" | "provider"
}

/** SPEC §7.4: which models a class cools, or `undefined` when nothing is attributable. */
export const scopeOf = (
  slots: ReadonlyArray<Slot>,
  cls: Exclude<LimitClass, "context_limit">,
  matchText: string,
  model: string | undefined,
  provider: string | undefined
): Scoped | undefined => {
  const providerWide = cls !== "unavailable" && (provider !== undefined || cls === "auth" || isProviderWideText(matchText))
  if (providerWide) {
    const p = provider ?? (model === undefined ? undefined : providerOf(model))
    if (p === undefined) return undefined
    const models = slots.filter((s) => s.provider === p).map((s) => s.model)
    return models.length === 0 ? undefined : { models, scope: "provider" }
  }
  return model === undefined ? undefined : { models: [model], scope: "model" }
}

const cool = (
  slots: ReadonlyArray<Slot>,
  table: CooldownTable,
  cls: Exclude<LimitClass, "context_limit">,
  matchText: string,
  model: string | undefined,
  provider: string | undefined,
  now: number,
  stated: StatedReset | undefined
): SignalDecision => {
  const scoped = scopeOf(slots, cls, matchText, model, provider)
  if (scoped === undefined) return NOT_A_LIMIT
  return { _tag: "Cool", cls, plan: planCool(table, scoped.models, scoped.scope, cls, now, stated) }
}

/** An error signal (`session.error`, an assistant error, a trace `limit` line). */
export const decideLimit = (slots: ReadonlyArray<Slot>, table: CooldownTable, signal: LimitSignal, now: number): SignalDecision => {
  const text = classificationText(signal.text)
  const cls = classify({ text, status: signal.status, model: signal.model })
  if (cls === undefined) return NOT_A_LIMIT
  if (cls === "context_limit") return CONTEXT_LIMIT
  const stated = cls === "rate_limit" || cls === "quota" ? statedReset({ text, headers: signal.headers, now }) : undefined
  return cool(slots, table, cls, text, signal.model, signal.provider, now, stated)
}

export interface RetrySignal {
  readonly message: string
  /** Epoch ms of opencode's next attempt. */
  readonly next: number
  readonly provider?: string | undefined
  /** The model of the live claim targeting the session, when there is one. */
  readonly model?: string | undefined
  /** Whether the session is the target of a live claim (§7.7 step 1). */
  readonly pooled: boolean
}

/** The retry-loop breaker (SPEC §7.7, TRACE.md §6). */
export const decideRetry = (slots: ReadonlyArray<Slot>, table: CooldownTable, signal: RetrySignal, now: number): SignalDecision => {
  const text = classificationText(signal.message)
  const cls = classify({ text, model: signal.model })
  const escalating = cls === "rate_limit" || cls === "quota"
  const stated = (): StatedReset | undefined => statedReset({ text, next: signal.next, now })
  if (!signal.pooled) {
    if (signal.provider !== undefined && escalating) return cool(slots, table, cls, text, undefined, signal.provider, now, stated())
    return NOT_A_LIMIT
  }
  if (cls === "context_limit") return CONTEXT_LIMIT
  if (cls === "rate_limit" || cls === "quota" || cls === "unavailable" || cls === "auth") {
    return cool(slots, table, cls, text, signal.model, signal.provider, now, escalating ? stated() : undefined)
  }
  if (signal.next - now >= BREAKER_NEXT_MS) {
    return cool(slots, table, "rate_limit", text, signal.model, signal.provider, now, { ms: signal.next - now, source: "retry" })
  }
  return NOT_A_LIMIT
}
