/**
 * Cooldown windows, strikes, decay and merging (SPEC §7.5), and, at the end of this file, how a
 * classified signal becomes a cooling decision: attribution and scope (SPEC §7.4), windows (§7.5–7.6)
 * and the retry-loop breaker (§7.7). Pure over immutable records.
 */
import {
  AUTH_COOLDOWN_MS,
  BREAKER_NEXT_MS,
  COOL_WINDOW_MIN_MS,
  CREDIT_WINDOWS_MS,
  ENTITLEMENT_COOLDOWN_MS,
  HANG_COOLDOWN_MS,
  OUTAGE_COOLDOWN_MS,
  QUOTA_LOW_WINDOW_MS,
  STATED_RESET_MAX_MS,
  STRIKE_DECAY_MS,
  STRIKE_WINDOWS_MS,
  UNAVAILABLE_COOLDOWN_MS
} from "../constants.js"
import { classifyError, type LimitClass, type Verdict } from "../limits/classify.js"
import type { RuleScope } from "../limits/limitRules.js"
import { FAMILY_ZONES, vendorOfModel, vendorOfName } from "../limits/providerFamily.js"
import { statedReset, type Headers, type ResetSource, type StatedReset } from "../limits/reset.js"
import type { Slot } from "./pool.js"

/** `manual`: benched by hand (`ocpool cool set`, issue 32); `entitlement`: a tier refused to this client (issue 35). */
export type CoolReason = "rate_limit" | "quota" | "outage" | "unavailable" | "auth" | "entitlement" | "hang" | "quota_low" | "manual"
export type CoolScope = "model" | "provider"
/** `manual`: `ocpool cool set`; `cleared`: a cooldown ended by hand (`ocpool cool clear`), kept as a marker every process honours; `learned`: a learned budget spent (issue 35). */
export type CoolSource = ResetSource | "backoff" | "flat" | "peer" | "manual" | "cleared" | "learned"

export interface Cooldown {
  readonly model: string
  readonly reason: CoolReason
  readonly strikes: number
  readonly scope: CoolScope
  readonly since: number
  readonly until: number
  readonly source: CoolSource
  /** A person's words (`ocpool cool set --reason`), shown as they are (cleaned) by the views. */
  readonly note?: string | undefined
  /** A cleared marker (source `cleared`): the latest `until` it ended, so it is kept as long as what it ended would have been. */
  readonly ended?: number | undefined
}

export type CooldownTable = ReadonlyMap<string, Cooldown>

export const isCooling = (record: Cooldown | undefined, now: number): boolean => record !== undefined && now < record.until

/** A marker of a cooldown ended by hand (`ocpool cool clear`), which every process's own record of the model honours. */
export const isCleared = (record: Cooldown): boolean => record.source === "cleared"

/** Escalating reasons count strikes; the others are flat windows with strike 0. */
export const isEscalating = (reason: CoolReason): boolean => reason === "rate_limit" || reason === "quota"

export const strikeWindowMs = (strike: number, credit = false): number => {
  const windows: ReadonlyArray<number> = credit ? CREDIT_WINDOWS_MS : STRIKE_WINDOWS_MS
  return windows[Math.min(Math.max(strike, 1), windows.length) - 1]!
}

export const flatWindowMs = (reason: Exclude<CoolReason, "rate_limit" | "quota">): number => {
  switch (reason) {
    case "outage":
      return OUTAGE_COOLDOWN_MS
    case "unavailable":
      return UNAVAILABLE_COOLDOWN_MS
    case "auth":
      return AUTH_COOLDOWN_MS
    case "entitlement":
      return ENTITLEMENT_COOLDOWN_MS
    case "hang":
      return HANG_COOLDOWN_MS
    case "quota_low":
      return QUOTA_LOW_WINDOW_MS
    case "manual":
      // only ever set by hand, for the time given (core/cool/manual.ts)
      return HANG_COOLDOWN_MS
  }
}

/** k = r.strikes + 1 when the remembered record has strikes ≥ 1 and ended at most 30 min ago (live counts). */
export const nextStrike = (record: Cooldown | undefined, now: number): number =>
  record !== undefined && record.strikes >= 1 && now - record.until <= STRIKE_DECAY_MS ? record.strikes + 1 : 1

export interface CoolPlan {
  readonly models: ReadonlyArray<string>
  readonly scope: CoolScope
  readonly reason: CoolReason
  readonly strike: number
  readonly windowMs: number
  readonly source: CoolSource
  readonly until: number
}

/**
 * What cooling `models` for `reason` means at `now`: the strike (largest over the models for an
 * escalating reason, 0 otherwise) and the window (a stated reset, else the strike backoff, else flat).
 * `stated` may be the breaker's `next − now` (SPEC §7.7 step 4); one beyond 7 days counts as none.
 */
export const planCool = (
  table: CooldownTable,
  models: ReadonlyArray<string>,
  scope: CoolScope,
  reason: CoolReason,
  now: number,
  stated: StatedReset | undefined,
  credit = false
): CoolPlan => {
  if (!isEscalating(reason)) {
    const windowMs = flatWindowMs(reason as Exclude<CoolReason, "rate_limit" | "quota">)
    return { models, scope, reason, strike: 0, windowMs, source: "flat", until: now + windowMs }
  }
  let strike = 1
  for (const m of models) strike = Math.max(strike, nextStrike(table.get(m), now))
  // a stated window beyond 7 days (the breaker's `next` − now) is absent, not capped (issue 18)
  const usable = stated !== undefined && stated.ms > 0 && stated.ms <= STATED_RESET_MAX_MS ? stated : undefined
  // a stated reset under a second still cools for one (issue 19): [1 s, 7 days] whatever was stated
  const windowMs = usable !== undefined ? Math.max(usable.ms, COOL_WINDOW_MIN_MS) : strikeWindowMs(strike, credit)
  return { models, scope, reason, strike, windowMs, source: usable?.source ?? "backoff", until: now + windowMs }
}

/**
 * A cooldown ended by hand at `clearedAt` (`ocpool cool clear`, issue 32): this process's record of
 * `model`, if it still cools and began before the clear, ends then, its strikes those the clear left.
 * A cooldown that began after the clear stands.
 */
export const mergeCleared = (table: CooldownTable, model: string, clearedAt: number, strikes: number, now: number): CooldownTable => {
  const old = table.get(model)
  if (old === undefined || !isCooling(old, now) || old.since >= clearedAt) return table
  const next = new Map(table)
  next.set(model, { ...old, until: clearedAt, strikes: Math.min(old.strikes, strikes) })
  return next
}

/** The record a model gets when `plan` is merged over `old` (SPEC §7.5 merge rules); `old` if unchanged. */
export const mergeOne = (old: Cooldown | undefined, model: string, plan: CoolPlan, now: number): Cooldown | undefined => {
  const live = isCooling(old, now) ? old : undefined
  const fresh = (until: number): Cooldown => ({
    model,
    reason: plan.reason,
    strikes: plan.strike,
    scope: plan.scope,
    since: now,
    until,
    source: plan.source
  })
  if (isEscalating(plan.reason)) return fresh(live === undefined ? plan.until : Math.max(plan.until, live.until))
  if (plan.reason === "hang") return live === undefined ? fresh(plan.until) : old
  return live !== undefined && live.until >= plan.until ? old : fresh(plan.until)
}

/** Applies a plan to every model in it. Returns the same table when nothing changed. */
export const applyCool = (table: CooldownTable, plan: CoolPlan, now: number): CooldownTable => {
  let next: Map<string, Cooldown> | undefined
  for (const model of plan.models) {
    const old = table.get(model)
    const merged = mergeOne(old, model, plan, now)
    if (merged !== old && merged !== undefined) {
      next ??= new Map(table)
      next.set(model, merged)
    }
  }
  return next ?? table
}

/**
 * A peer's cooldown (read from another process): it replaces a live local record that ends
 * earlier, carrying the peer's strikes (0 when not given); a peer record that already ended is
 * ignored (TRACE.md §6).
 */
export const mergePeer = (
  table: CooldownTable,
  peer: { readonly model: string; readonly until: number; readonly reason: CoolReason; readonly strikes?: number | undefined; readonly cleared?: boolean | undefined },
  now: number
): CooldownTable => {
  if (peer.cleared === true) return mergeCleared(table, peer.model, peer.until, peer.strikes ?? 0, now)
  if (peer.until <= now) return table
  const old = table.get(peer.model)
  if (isCooling(old, now) && old!.until >= peer.until) return table
  const next = new Map(table)
  next.set(peer.model, {
    model: peer.model,
    reason: peer.reason,
    strikes: peer.strikes ?? 0,
    scope: "model",
    since: now,
    until: peer.until,
    source: "peer"
  })
  return next
}

/** A success (SPEC §6.3) deletes the model's record when it is no longer live, resetting strikes. */
export const clearOnSuccess = (table: CooldownTable, model: string, now: number): CooldownTable => {
  const old = table.get(model)
  if (old === undefined || isCooling(old, now)) return table
  const next = new Map(table)
  next.delete(model)
  return next
}

// From a classified signal to a cooling decision (SPEC §7.4–7.7)

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
 * Issue 35: the slots of the gateway `provider` that route to the upstream `upstream` names, and the
 * attributed model; recorded as `model` scope when that is one model, else `provider` (as `free`).
 */
const upstreamScope = (slots: ReadonlyArray<Slot>, upstream: string | undefined, model: string | undefined, provider: string | undefined): Scoped | undefined => {
  const p = provider ?? (model === undefined ? undefined : providerOf(model))
  const vendor = upstream === undefined ? undefined : vendorOfName(upstream)
  const models = p === undefined || vendor === undefined ? [] : slots.filter((s) => s.provider === p && vendorOfModel(s.model) === vendor).map((s) => s.model)
  if (model !== undefined && !models.includes(model)) models.push(model)
  return models.length === 0 ? undefined : { models, scope: models.length === 1 ? "model" : "provider" }
}

/**
 * SPEC §7.4 with the rule's own scope (issue 19): which models a class cools, or `undefined` when
 * nothing is attributable. `free` cools the provider's `:free` slots and the attributed model;
 * `upstream` the gateway's slots routed to the upstream the error names (issue 35).
 */
export const scopeOf = (
  slots: ReadonlyArray<Slot>,
  cls: Exclude<LimitClass, "context_limit">,
  ruleScope: RuleScope | undefined,
  model: string | undefined,
  provider: string | undefined,
  upstream?: string | undefined
): Scoped | undefined => {
  if (cls === "unavailable" || ruleScope === "model") return model === undefined ? undefined : { models: [model], scope: "model" }
  if (ruleScope === "upstream") return upstreamScope(slots, upstream, model, provider)
  const wide = ruleScope !== undefined || provider !== undefined || cls === "auth" || cls === "entitlement"
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
  verdict: Pick<Verdict, "scope" | "credit" | "rule" | "view"> | undefined,
  model: string | undefined,
  provider: string | undefined,
  now: number,
  stated: StatedReset | undefined
): SignalDecision => {
  const credit = verdict?.credit === true
  const scoped = scopeOf(slots, cls, verdict?.scope ?? (credit ? "provider" : undefined), model, provider, verdict?.view.upstream)
  if (scoped === undefined) return NOT_A_LIMIT
  return { _tag: "Cool", cls, plan: planCool(table, scoped.models, scoped.scope, cls, now, stated, credit), credit, rule: verdict?.rule ?? "breaker" }
}

/**
 * The stated reset of a verdict (issue 19 precedence), with a retry status's `next` when given. A quota's
 * reset stated beyond 7 days (up to 31) is the 7-day cap, with what was stated in `statedMs` (issue 35).
 */
export const resetOf = (v: Verdict, now: number, next?: number): StatedReset | undefined =>
  statedReset({
    text: v.view.text,
    headers: v.view.headers,
    next,
    now,
    retryDelayMs: v.view.retryDelayMs,
    resetsInMs: v.view.resetsInMs,
    resetsAt: v.view.resetsAt,
    zone: v.family === undefined ? undefined : FAMILY_ZONES[v.family],
    dayEnd: v.dayEnd,
    long: v.cls === "quota"
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
  if (cls === "rate_limit" || cls === "quota" || cls === "unavailable" || cls === "auth" || cls === "entitlement") {
    return cool(slots, table, cls, v, signal.model, signal.provider, now, escalating ? resetOf(v!, now, signal.next) : undefined)
  }
  if (signal.next - now >= BREAKER_NEXT_MS) {
    return cool(slots, table, "rate_limit", undefined, signal.model, signal.provider, now, { ms: signal.next - now, source: "retry" })
  }
  return NOT_A_LIMIT
}
