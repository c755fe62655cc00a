/** Types of `hiddenBudgets.mjs` (issue 35, item 6): a provider's hidden per-minute and per-day budgets. */

/** How a 429 states its reset: the `retry-after` header, OpenRouter's body-carried reset, or nothing. */
export type Stated = "retry-after" | "body" | "none"

export interface BudgetGroup {
  readonly name: string
  /** Model ids as the provider sees them (`pool-a`, not `fakeA/pool-a`); a model is in one group at most. */
  readonly models: ReadonlyArray<string>
  /** Requests per fixed calendar minute per key; absent = unlimited. */
  readonly perMinute?: number
  /** Requests per UTC day (ends 00:00 UTC) per key; absent = unlimited. */
  readonly perDay?: number
  /** Default `retry-after`. */
  readonly stated?: Stated
}

export type BudgetWindow = "minute" | "day"

export interface Granted {
  readonly ok: true
  /** The group that counted it; absent for a model in no group. */
  readonly group?: string
}

export interface Refusal {
  readonly ok: false
  readonly status: 429
  /** `content-type`, and `retry-after` (whole seconds, rounded up) when the group states it so. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: {
    readonly error: {
      readonly message: string
      readonly code: 429
      readonly metadata?: { readonly headers: { readonly "X-RateLimit-Reset": string } }
    }
  }
  readonly group: string
  /** The window that is spent (the day when both are). */
  readonly window: BudgetWindow
  /** When that window ends, epoch ms. */
  readonly resetAt: number
}

export type Answer = Granted | Refusal

export interface BudgetCount {
  readonly key: string
  readonly group: string
  /** The current windows: their start (epoch ms) and the requests granted in them. */
  readonly minute: { readonly start: number; readonly used: number }
  readonly day: { readonly start: number; readonly used: number }
  /** Totals since the budgets were made. */
  readonly granted: number
  readonly refused: number
  readonly refusedMinute: number
  readonly refusedDay: number
}

export interface HiddenBudgets {
  readonly groups: ReadonlyArray<BudgetGroup>
  /** One request of `key` for `model` at `now` (epoch ms): granted (and counted) or refused with a 429. */
  readonly answer: (request: { readonly key: string; readonly model: string; readonly now: number }) => Answer
  /** One row per (key, group) seen. */
  readonly counts: () => ReadonlyArray<BudgetCount>
}

export declare const MINUTE_MS: 60_000
export declare const DAY_MS: 86_400_000

/** Throws a TypeError naming the first problem of `groups`. */
export declare function checkGroups(groups: ReadonlyArray<BudgetGroup>): void

export declare function makeHiddenBudgets(config: { readonly groups: ReadonlyArray<BudgetGroup> }): HiddenBudgets
