/**
 * From a classified signal to a cooling decision: attribution and scope (SPEC §7.4), windows
 * (§7.5–7.6) and the retry-loop breaker (§7.7). Pure.
 */
import { BREAKER_NEXT_MS } from "./constants.js"
import { classifyError, type LimitClass, type Verdict } from "./limits/classify.js"
import { planCool, type CoolPlan, type CooldownTable } from "./pool/cooldown.js"
import type { RuleScope } from "./limits/limitRules.js"
import type { Slot } from "./pool/pool.js"
import { FAMILY_ZONES } from "./limits/providerFamily.js"
import { statedReset, type Headers, type StatedReset } from "./limits/reset.js"

export type SignalDecision =
  | { readonly _tag: "Ignore"; readonly reason: "context_limit" | "not_a_limit" }
  | {
      readonly _tag: "Cool"
      readonly cls: Exclude<LimitClass, "context_limit">
      readonly plan: CoolPlan
      /** The account is out of credit (issue 19): the one-time top-up warning. */
      readonly credit: boolean
      /** The rule row that matched (docs/CLASSIFICATION.md). */
      readonly rule: string
    }

const NOT_A_LIMIT: SignalDecision = { _tag: "Ignore", reason: "not_a_limit" }
const CONTEXT_LIMIT: SignalDecision = { _tag: "Ignore", reason: "context_limit" }

export const providerOf = (model: string): string => model.slice(0, model.indexOf("/"))

export interface LimitSignal {
  /** The recorded error text (an error's JSON, a JSON message, or plain text). */
  readonly text: string
  readonly status?: number | undefined
  readonly headers?: Headers | undefined
  /** The provider's raw response body, when known apart from `text`. */
  readonly body?: string | undefined
  /** The attributed model: the signal's own, else the model of the live claim targeting its session. */
  readonly model?: string | undefined
  /** A provider the error names. */
  readonly provider?: string | undefined
}

interface Scoped {
  readonly models: ReadonlyArray<string>
  readonly scope: "model" | "provider"
}

/**
 * SPEC §7.4 with the rule's own scope (issue 19): which models a class cools, or `undefined` when
 * nothing is attributable. `free` cools the provider's `:free` slots and the attributed model.
 */
export const scopeOf = (
  slots: ReadonlyArray<Slot>,
  cls: Exclude<LimitClass, "context_limit">,
  ruleScope: RuleScope | undefined,
  model: string | undefined,
  provider: string | undefined
): Scoped | undefined => {
  if (cls === "unavailable" || ruleScope === "model") return model === undefined ? undefined : { models: [model], scope: "model" }
  const wide = ruleScope !== undefined || provider !== undefined || cls === "auth"
  if (!wide) return model === undefined ? undefined : { models: [model], scope: "model" }
  const p = provider ?? (model === undefined ? undefined : providerOf(model))
  if (p === undefined) return undefined
  const onProvider = slots.filter((s) => s.provider === p).map((s) => s.model)
  const models = ruleScope === "free" ? onProvider.filter((m) => m.endsWith(":free") || m === model) : onProvider
  if (ruleScope === "free" && model !== undefined && !models.includes(model)) models.push(model)
  return models.length === 0 ? undefined : { models, scope: "provider" }
}

const cool = (
  slots: ReadonlyArray<Slot>,
  table: CooldownTable,
  cls: Exclude<LimitClass, "context_limit">,
  verdict: Pick<Verdict, "scope" | "credit" | "rule"> | undefined,
  model: string | undefined,
  provider: string | undefined,
  now: number,
  stated: StatedReset | undefined
): SignalDecision => {
  const credit = verdict?.credit === true
  const scoped = scopeOf(slots, cls, verdict?.scope ?? (credit ? "provider" : undefined), model, provider)
  if (scoped === undefined) return NOT_A_LIMIT
  return { _tag: "Cool", cls, plan: planCool(table, scoped.models, scoped.scope, cls, now, stated, credit), credit, rule: verdict?.rule ?? "breaker" }
}

/** The stated reset of a verdict (issue 19 precedence), with a retry status's `next` when given. */
const resetOf = (v: Verdict, now: number, next?: number): StatedReset | undefined =>
  statedReset({
    text: v.view.text,
    headers: v.view.headers,
    next,
    now,
    retryDelayMs: v.view.retryDelayMs,
    resetsInMs: v.view.resetsInMs,
    resetsAt: v.view.resetsAt,
    zone: v.family === undefined ? undefined : FAMILY_ZONES[v.family],
    dayEnd: v.dayEnd
  })

/** An error signal (`session.error`, an assistant error, a trace `limit` line). */
export const decideLimit = (slots: ReadonlyArray<Slot>, table: CooldownTable, signal: LimitSignal, now: number): SignalDecision => {
  const v = classifyError(signal)
  if (v === undefined) return NOT_A_LIMIT
  const cls = v.cls
  if (cls === "context_limit") return CONTEXT_LIMIT
  const stated = cls === "rate_limit" || cls === "quota" ? resetOf(v, now) : undefined
  return cool(slots, table, cls, v, signal.model, signal.provider, now, stated)
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
  /** What the failed response itself said, when the plugin saw it (issue 19): status, headers, body. */
  readonly status?: number | undefined
  readonly headers?: Headers | undefined
  readonly body?: string | undefined
}

/** The retry-loop breaker (SPEC §7.7, TRACE.md §6), reading the failed response too when it is known. */
export const decideRetry = (slots: ReadonlyArray<Slot>, table: CooldownTable, signal: RetrySignal, now: number): SignalDecision => {
  const v = classifyError({ text: signal.message, status: signal.status, headers: signal.headers, body: signal.body, model: signal.model, provider: signal.provider })
  const cls = v?.cls
  const escalating = cls === "rate_limit" || cls === "quota"
  if (!signal.pooled) {
    if (signal.provider !== undefined && escalating) return cool(slots, table, cls, v, undefined, signal.provider, now, resetOf(v!, now, signal.next))
    return NOT_A_LIMIT
  }
  if (cls === "context_limit") return CONTEXT_LIMIT
  if (cls === "rate_limit" || cls === "quota" || cls === "unavailable" || cls === "auth") {
    return cool(slots, table, cls, v, signal.model, signal.provider, now, escalating ? resetOf(v!, now, signal.next) : undefined)
  }
  if (signal.next - now >= BREAKER_NEXT_MS) {
    return cool(slots, table, "rate_limit", undefined, signal.model, signal.provider, now, { ms: signal.next - now, source: "retry" })
  }
  return NOT_A_LIMIT
}
