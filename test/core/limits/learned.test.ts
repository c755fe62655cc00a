/** Learned budgets (issue 35): the pure machine of core/limits/learned.ts. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { budgetAt, countSuccess, decodeBudget, encodeBudget, groupOf, inGroup, isBudgetStale, learnedQuota, learnLimit, windowOf429, type GroupBudget } from "../../../src/core/limits/learned.js"
import { decodeLine } from "../../../src/core/trace/input.js"

const DAY0 = Date.UTC(2026, 11, 5)
const MIN = 60_000
const G = "orf/*:free"

/** `n` successes of the group, one a second from `from`. */
const succeed = (b: GroupBudget | undefined, n: number, from: number): GroupBudget => {
  let r = b
  for (let i = 0; i < n; i++) r = countSuccess(r, G, from + i * 1_000)
  return r!
}

describe("learned budgets (issue 35)", () => {
  it("US-48 a provider's :free models are one group, any other model its own", () => {
    expect(groupOf("openrouter/qwen/qwen3-coder:free")).toBe("openrouter/*:free")
    expect(groupOf("openrouter/qwen/qwen3-coder")).toBe("openrouter/qwen/qwen3-coder")
    expect(inGroup("openrouter/*:free", "openrouter/meta/llama:free")).toBe(true)
    expect(inGroup("openrouter/*:free", "zen/a:free")).toBe(false)
  })

  it("US-48 successes count in the calendar minute and the UTC day; a new window starts from 0", () => {
    const b = succeed(undefined, 3, DAY0 + 10 * MIN + 50_000)
    expect(b.minute).toEqual({ start: DAY0 + 10 * MIN, used: 3 })
    expect(b.day).toEqual({ start: DAY0, used: 3 })
    const later = budgetAt(b, G, DAY0 + 11 * MIN)
    expect(later.minute).toEqual({ start: DAY0 + 11 * MIN, used: 0 })
    expect(later.day.used).toBe(3)
    expect(budgetAt(b, G, DAY0 + 24 * 60 * MIN).day).toEqual({ start: DAY0 + 24 * 60 * MIN, used: 0 })
  })

  it("US-48 a 429 learns the window it stated (within 2 minutes: the minute, later: the day) with that window's count as its limit", () => {
    const b = succeed(undefined, 20, DAY0 + 5 * MIN)
    const minute = learnLimit(b, G, DAY0 + 5 * MIN + 25_000, DAY0 + 6 * MIN)
    expect(minute.limits).toEqual([{ window: "minute", limit: 20, samples: 1, learnedAt: DAY0 + 5 * MIN + 25_000 }])
    expect(learnedQuota(minute, DAY0 + 5 * MIN + 25_000)).toEqual({ group: G, window: "minute", remaining: 0, limit: 20, resetAt: DAY0 + 6 * MIN, samples: 1 })
    const daily = learnLimit(b, G, DAY0 + 5 * MIN + 25_000, DAY0 + 24 * 60 * MIN)
    expect(daily.limits.map((l) => [l.window, l.limit])).toEqual([["day", 20]])
  })

  it("US-48 with nothing stated, a 429 in a minute that had successes is the minute's; in a minute without any, or with room left of a learned minute, the day's", () => {
    const b = succeed(undefined, 20, DAY0)
    expect(windowOf429(budgetAt(b, G, DAY0 + 30_000), DAY0 + 30_000, undefined)).toBe("minute")
    const fresh = budgetAt(b, G, DAY0 + 2 * MIN)
    expect(windowOf429(fresh, DAY0 + 2 * MIN, undefined)).toBe("day")
    const learned = learnLimit(b, G, DAY0 + 30_000, undefined)
    const some = succeed(learned, 5, DAY0 + 3 * MIN)
    expect(windowOf429(budgetAt(some, G, DAY0 + 3 * MIN + 10_000), DAY0 + 3 * MIN + 10_000, undefined)).toBe("day")
    // a window without a success teaches nothing (no budget is 0)
    expect(learnLimit(undefined, G, DAY0, DAY0 + 30_000).limits).toEqual([])
  })

  it("US-48 the same count again makes a budget surer; another count replaces it; traffic above it raises it, less sure", () => {
    let b = learnLimit(succeed(undefined, 20, DAY0), G, DAY0 + 30_000, DAY0 + MIN)
    b = learnLimit(succeed(b, 20, DAY0 + MIN), G, DAY0 + MIN + 30_000, DAY0 + 2 * MIN)
    expect(b.limits[0]).toMatchObject({ window: "minute", limit: 20, samples: 2 })
    b = learnLimit(succeed(b, 15, DAY0 + 2 * MIN), G, DAY0 + 2 * MIN + 30_000, DAY0 + 3 * MIN)
    expect(b.limits[0]).toMatchObject({ limit: 15, samples: 1 })
    b = succeed(b, 16, DAY0 + 3 * MIN)
    expect(b.limits[0]).toMatchObject({ limit: 16, samples: 1 })
    expect(learnedQuota(b, DAY0 + 3 * MIN + 20_000)!.remaining).toBe(0)
  })

  it("US-48 the tightest learned window is the group's quota; a record that learned nothing is stale once its day is over", () => {
    const b: GroupBudget = {
      group: G,
      minute: { start: DAY0 + 2 * MIN, used: 3 },
      day: { start: DAY0, used: 95 },
      limits: [
        { window: "minute", limit: 20, samples: 2, learnedAt: DAY0 },
        { window: "day", limit: 100, samples: 1, learnedAt: DAY0 }
      ],
      seenAt: DAY0 + 2 * MIN
    }
    expect(learnedQuota(b, DAY0 + 2 * MIN + 5_000)).toEqual({ group: G, window: "day", remaining: 5, limit: 100, resetAt: DAY0 + 24 * 60 * MIN, samples: 1 })
    expect(learnedQuota({ ...b, day: { start: DAY0, used: 10 } }, DAY0 + 2 * MIN + 5_000)).toMatchObject({ window: "minute", remaining: 17, limit: 20, samples: 2 })
    expect(isBudgetStale(succeed(undefined, 1, DAY0), DAY0 + 24 * 60 * MIN)).toBe(true)
    expect(isBudgetStale(b, DAY0 + 48 * 60 * MIN)).toBe(false)
  })

  it.prop("US-48 a record's body reads back as the record; anything else reads as none", [fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 3 * 24 * 60 })], ([n, minute]) => {
    const b = learnLimit(succeed(undefined, n, DAY0 + minute * MIN), G, DAY0 + minute * MIN + n * 1_000, DAY0 + (minute + 1) * MIN + n * 1_000)
    expect(decodeBudget(encodeBudget(b))).toEqual(b)
  })

  it("US-48 a stored body that is not a record reads as none", () => {
    for (const bad of ["", "{", "null", "[]", '{"group":"g"}', JSON.stringify({ group: "", minute: { start: 0, used: 0 }, day: { start: 0, used: 0 }, limits: [], seenAt: 0 })]) expect(decodeBudget(bad)).toBeUndefined()
    expect(decodeBudget(JSON.stringify({ group: "g", minute: { start: 0, used: 1 }, day: { start: 0, used: 1 }, limits: "x", seenAt: 0 }))?.limits).toEqual([])
  })

  it("US-45 a `budget` trace line is read with its record; a bad outcome or record is refused with its field", () => {
    const b = succeed(undefined, 2, DAY0)
    const line = decodeLine(JSON.stringify({ at: DAY0 + 5_000, type: "budget", model: "orf/a:free", outcome: "ok", learned: b }))
    expect(line).toMatchObject({ type: "budget", model: "orf/a:free", outcome: "ok", learned: b })
    expect(decodeLine(JSON.stringify({ at: DAY0, type: "budget", model: "m", outcome: "maybe" }))).toMatchObject({ field: "outcome" })
    expect(decodeLine(JSON.stringify({ at: DAY0, type: "budget", model: "m", outcome: "ok", learned: { group: 1 } }))).toMatchObject({ field: "learned" })
  })
})
