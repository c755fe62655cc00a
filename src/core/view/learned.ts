/**
 * Learned budgets as the views show them (issue 35): beside the quotas providers state, marked as
 * learned, with how sure they are (how many 429s agreed) and the counts of the current windows. Pure.
 */
import { budgetAt, learnedQuota, type BudgetWindow, type GroupBudget } from "../limits/learned.js"
import { printable } from "../printable.js"
import { clockSeconds as clock, remaining } from "../time.js"

export interface LearnedEntry {
  readonly group: string
  /** The tightest learned window, what is left of it and when it ends. */
  readonly window: BudgetWindow
  readonly limit: number
  readonly remaining: number
  readonly resetAt: number
  /** How many 429s agreed on the limit (1: seen once, or just raised). */
  readonly samples: number
  /** Requests that succeeded this minute and this UTC day, by every process. */
  readonly used: { readonly minute: number; readonly day: number }
  /** Every learned window: its limit and how sure it is. */
  readonly limits: ReadonlyArray<{ readonly window: BudgetWindow; readonly limit: number; readonly samples: number; readonly learnedAt: number }>
}

/** The groups that learned a budget, by group. */
export const learnedEntries = (records: ReadonlyArray<GroupBudget>, now: number): ReadonlyArray<LearnedEntry> =>
  records.flatMap((r) => {
    const q = learnedQuota(r, now)
    if (q === undefined) return []
    const at = budgetAt(r, r.group, now)
    return [
      {
        group: r.group,
        window: q.window,
        limit: q.limit,
        remaining: q.remaining,
        resetAt: q.resetAt,
        samples: q.samples,
        used: { minute: at.minute.used, day: at.day.used },
        limits: r.limits.map((l) => ({ window: l.window, limit: l.limit, samples: l.samples, learnedAt: l.learnedAt }))
      }
    ]
  })

const sure = (samples: number): string => (samples === 1 ? "seen once" : `seen ${samples} times`)

/** `openrouter/*:free  requests 0/20 a minute (learned, seen 3 times) reset 10:01:00Z (in 40s)  200 a day (learned, seen once)  used 20 this minute, 143 today`. */
export const learnedLine = (e: LearnedEntry, now: number): string => {
  const others = e.limits.filter((l) => l.window !== e.window).map((l) => `${l.limit} a ${l.window} (learned, ${sure(l.samples)})`)
  return [
    printable(e.group),
    `requests ${e.remaining}/${e.limit} a ${e.window} (learned, ${sure(e.samples)}) reset ${clock(e.resetAt)}Z (in ${remaining(e.resetAt - now)})`,
    ...others,
    `used ${e.used.minute} this minute, ${e.used.day} today`
  ].join("  ")
}
