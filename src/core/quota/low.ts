/**
 * Quota sensing (issue 12, US-48): when a slot model's remaining requests or tokens, as its provider's
 * rate-limit headers state them, fall to the reserve, the model cools as `quota_low` until the stated
 * reset, before it answers 429. Pure.
 */
import { QUOTA_LOW_WINDOW_MS, STATED_RESET_MAX_MS } from "../constants.js"
import type { CoolPlan } from "../pool/cooldown.js"

/** One dimension of a quota line (requests or tokens). */
export interface QuotaLevel {
  readonly remaining: number
  readonly limit?: number | undefined
  readonly resetAt?: number | undefined
}

/**
 * At or below the reserve: `remaining ≤ ⌊limit × reserve⌋`; without a known limit only an empty
 * quota (`remaining` 0) counts.
 */
export const isLow = (level: QuotaLevel, reserve: number): boolean =>
  level.remaining <= (level.limit === undefined ? 0 : Math.floor(level.limit * reserve))

/**
 * The `quota_low` cooling for `model` at `now`, or undefined when no dimension is at its reserve.
 * It lasts until the latest stated reset of the low dimensions, else QUOTA_LOW_WINDOW_MS; a reset that is
 * not after `now`, or more than 7 days after it, is absent (issue 18: not capped). Strike 0: a quota
 * running out is not a failure.
 */
export const planQuotaLow = (
  model: string,
  levels: ReadonlyArray<QuotaLevel | undefined>,
  reserve: number,
  now: number
): CoolPlan | undefined => {
  const low = levels.filter((l): l is QuotaLevel => l !== undefined && isLow(l, reserve))
  if (low.length === 0) return undefined
  const resets = low.map((l) => l.resetAt).filter((r): r is number => r !== undefined && r > now && r - now <= STATED_RESET_MAX_MS)
  const stated = resets.length > 0
  const until = stated ? Math.max(...resets) : now + QUOTA_LOW_WINDOW_MS
  return { models: [model], scope: "model", reason: "quota_low", strike: 0, windowMs: until - now, source: stated ? "header" : "flat", until }
}
