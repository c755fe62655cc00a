/** Cooldown windows, strikes, decay and merging (SPEC §7.5). Pure over immutable records. */
import {
  AUTH_COOLDOWN_MS,
  COOL_WINDOW_MIN_MS,
  CREDIT_WINDOWS_MS,
  HANG_COOLDOWN_MS,
  OUTAGE_COOLDOWN_MS,
  QUOTA_LOW_WINDOW_MS,
  STATED_RESET_MAX_MS,
  STRIKE_DECAY_MS,
  STRIKE_WINDOWS_MS,
  UNAVAILABLE_COOLDOWN_MS
} from "../constants.js"
import type { ResetSource, StatedReset } from "../limits/reset.js"

/** `manual`: benched by hand (`ocpool cool set`, issue 32). */
export type CoolReason = "rate_limit" | "quota" | "outage" | "unavailable" | "auth" | "hang" | "quota_low" | "manual"
export type CoolScope = "model" | "provider"
/** `manual`: `ocpool cool set`; `cleared`: a cooldown ended by hand (`ocpool cool clear`), kept as a marker every process honours. */
export type CoolSource = ResetSource | "backoff" | "flat" | "peer" | "manual" | "cleared"

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
