/**
 * Learned budgets (issue 35): many free tiers state no budget (no `x-ratelimit-remaining` on success,
 * only a 429 once it is spent), so the budget is learned from the requests that succeeded before a 429.
 * Per model group (a provider's `:free` models share one account-wide budget; any other model is a
 * group of its own), the requests that succeeded are counted in the current calendar minute and the
 * current UTC day, by every process (the counts are a shared record, `GroupBudget`); a 429 learns the
 * window it stated (a reset within two minutes: the minute; a later one: the day; none stated: the
 * minute, unless the minute had no success yet, then the day) with the count of that window as its
 * limit. A learned limit that traffic above it passes (the provider raised it) rises to what passed,
 * less sure. What a group has left (`learnedQuota`) is a stated quota's figures, marked as learned: a
 * group at its reserve cools before the request that would exceed it, as quota sensing does from
 * headers. Pure; `now` is passed in.
 */
import { Option, Schema } from "effect"
import { DAY_MS } from "../constants.js"
import { providerOf } from "../pool/cooldown.js"
import { Count, EpochMs, orElse } from "../tolerant.js"

export type BudgetWindow = "minute" | "day"

export const WINDOW_MS: Readonly<Record<BudgetWindow, number>> = { minute: 60_000, day: DAY_MS }

/** A stated reset further than this from the 429 is a daily (or longer) budget; within it, a per-minute one. */
export const MINUTE_RESET_MAX_MS = 2 * 60_000

/** What one group learned of one window. */
export interface LearnedLimit {
  readonly window: BudgetWindow
  /** Requests per window. */
  readonly limit: number
  /** How many 429s agreed on it (1: seen once, or just raised): how sure it is. */
  readonly samples: number
  readonly learnedAt: number
}

/** Requests that succeeded in the window that began at `start`. */
export interface WindowCount {
  readonly start: number
  readonly used: number
}

/** One group's shared record: its counts and what it learned. */
export interface GroupBudget {
  readonly group: string
  readonly minute: WindowCount
  readonly day: WindowCount
  readonly limits: ReadonlyArray<LearnedLimit>
  /** The last request counted or 429 learned from. */
  readonly seenAt: number
}

/** A group's figures as a quota: what is left of its tightest learned window. */
export interface LearnedQuota {
  readonly group: string
  readonly window: BudgetWindow
  readonly remaining: number
  readonly limit: number
  readonly resetAt: number
  readonly samples: number
}

/** `openrouter/qwen/qwen3:free` → `openrouter/*:free` (the account's `:free` budget); any other model is its own group. */
export const groupOf = (model: string): string => (model.endsWith(":free") ? `${providerOf(model)}/*:free` : model)

/** Whether `model` spends `group`'s budget. */
export const inGroup = (group: string, model: string): boolean => groupOf(model) === group

export const windowStart = (window: BudgetWindow, now: number): number => Math.floor(now / WINDOW_MS[window]) * WINDOW_MS[window]

/** The count of the window `now` is in: the record's, or a fresh one when that window is over. */
const countAt = (c: WindowCount, window: BudgetWindow, now: number): WindowCount => {
  const start = windowStart(window, now)
  return c.start === start ? c : { start, used: 0 }
}

const fresh = (group: string, now: number): GroupBudget => ({
  group,
  minute: { start: windowStart("minute", now), used: 0 },
  day: { start: windowStart("day", now), used: 0 },
  limits: [],
  seenAt: now
})

/** The record as it stands at `now`: its counts moved to the current windows. */
export const budgetAt = (b: GroupBudget | undefined, group: string, now: number): GroupBudget =>
  b === undefined ? fresh(group, now) : { ...b, minute: countAt(b.minute, "minute", now), day: countAt(b.day, "day", now) }

const countOf = (b: GroupBudget, window: BudgetWindow): WindowCount => (window === "minute" ? b.minute : b.day)

/**
 * One request of the group succeeded at `now`: both counts go up; a learned limit the count passed
 * rises to it, less sure (the provider raised the budget, or counted differently).
 */
export const countSuccess = (b: GroupBudget | undefined, group: string, now: number): GroupBudget => {
  const at = budgetAt(b, group, now)
  const next: GroupBudget = { ...at, minute: { ...at.minute, used: at.minute.used + 1 }, day: { ...at.day, used: at.day.used + 1 }, seenAt: now }
  const limits = next.limits.map((l) => {
    const used = countOf(next, l.window).used
    return used > l.limit ? { window: l.window, limit: used, samples: 1, learnedAt: now } : l
  })
  return { ...next, limits }
}

/** The window a 429 at `now` spent: from its stated reset, else from the counts (DECISIONS 289). */
export const windowOf429 = (b: GroupBudget, now: number, resetAt: number | undefined): BudgetWindow => {
  if (resetAt !== undefined && resetAt > now) return resetAt - now <= MINUTE_RESET_MAX_MS ? "minute" : "day"
  const minute = b.limits.find((l) => l.window === "minute")
  // nothing stated: the minute, unless it had no success yet or is known to have room left
  return b.minute.used === 0 || (minute !== undefined && b.minute.used < minute.limit) ? "day" : "minute"
}

/**
 * A 429 of the group at `now` (its stated reset, when known): the window it spent is learned with the
 * count of that window as its limit. The same count again makes it surer; another count replaces it.
 * A window without a success yet learns nothing (no budget is 0).
 */
export const learnLimit = (b: GroupBudget | undefined, group: string, now: number, resetAt: number | undefined): GroupBudget => {
  const at = { ...budgetAt(b, group, now), seenAt: now }
  const window = windowOf429(at, now, resetAt)
  const used = countOf(at, window).used
  if (used === 0) return at
  const old = at.limits.find((l) => l.window === window)
  const learned: LearnedLimit =
    old !== undefined && old.limit === used ? { ...old, samples: old.samples + 1, learnedAt: now } : { window, limit: used, samples: 1, learnedAt: now }
  return { ...at, limits: [...at.limits.filter((l) => l.window !== window), learned].sort((x, y) => (x.window < y.window ? 1 : -1)) }
}

/** What the group has left at `now` of its tightest learned window; `undefined` when nothing is learned. */
export const learnedQuota = (b: GroupBudget, now: number): LearnedQuota | undefined => {
  const at = budgetAt(b, b.group, now)
  let best: LearnedQuota | undefined
  for (const l of at.limits) {
    const c = countOf(at, l.window)
    const q: LearnedQuota = { group: b.group, window: l.window, remaining: Math.max(0, l.limit - c.used), limit: l.limit, resetAt: c.start + WINDOW_MS[l.window], samples: l.samples }
    if (best === undefined || q.remaining < best.remaining || (q.remaining === best.remaining && q.resetAt > best.resetAt)) best = q
  }
  return best
}

/** A record nothing was learned into stops mattering once its day is over. */
export const isBudgetStale = (b: GroupBudget, now: number): boolean => b.limits.length === 0 && windowStart("day", now) !== b.day.start

// The record's body, as the shared state stores it (tolerant: a bad field takes its default)

export const encodeBudget = (b: GroupBudget): string => JSON.stringify({ version: 1, ...b })

const Counted = Schema.Struct({ start: EpochMs, used: Count })
const Limit = Schema.Struct({
  window: Schema.Literal("minute", "day"),
  limit: Count.pipe(Schema.greaterThan(0)),
  samples: Count,
  learnedAt: EpochMs
})
const Body = Schema.Struct({
  group: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1_024)),
  minute: Counted,
  day: Counted,
  limits: orElse(Schema.Array(Limit), []),
  seenAt: EpochMs
})
const decodeBody = Schema.decodeUnknownOption(Body)

/** A stored body, or `undefined` when it is not one. */
export const decodeBudget = (text: string): GroupBudget | undefined => {
  try {
    return Option.getOrUndefined(decodeBody(JSON.parse(text)))
  } catch {
    return undefined
  }
}
