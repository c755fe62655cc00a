/**
 * The counters every engine keeps in the shared state (issue 36): their names, their labels, and the
 * increments a commit carries. Pure. A counter is stored per host (the backend adds its host), per
 * name and per label values, and only ever grows: `ocpool metrics` serves it as
 * `ocpool_<name>{host,<labels>}`. Label values are bounded: a pool's bases and providers, the limit
 * classes, the cooldown reasons, the budgets; never a session id.
 */

/** Each counter's label names, in the order its increments give their values. */
export const COUNTER_LABELS = {
  /** Spawns routed to a slot, by the base asked for and the pass that found the slot. */
  routes_total: ["base", "pass"],
  /** Limit errors classified (a 429, a quota, an outage…), by the provider they cooled (`unknown` when none is known) and their class (`context_limit`: an overflow, which cools nothing). */
  limits_total: ["provider", "class"],
  /** Cooldowns started, by reason. */
  cooldowns_total: ["reason"],
  /** Aborts of pooled children, by outcome: `ok`, `failed`, or `gave_up` (the claim released unverified). */
  aborts_total: ["outcome"],
  /** Claims the reaper took back, by kind: `hung`, `spinning`, `no_first_token`, or `unbound` (no child ever bound it; DECISIONS 299). */
  reaps_total: ["kind"],
  /** Root sessions switched to a fallback model. */
  fallback_switches_total: [],
  /** Transactions that went ahead without the lock (SPEC §5.3). */
  fail_opens_total: [],
  /** Decisions made on the state directory because PostgreSQL did not answer (fleet mode). */
  fleet_fallbacks_total: [],
  /** Heavy-work permit requests, grants and cancels, by budget (`other`: a budget this process has no capacity for). */
  permit_requests_total: ["budget"],
  permit_grants_total: ["budget"],
  permit_cancels_total: ["budget"],
  /** The permit wait histogram's parts, by budget (`le`: the bucket's upper bound, as Prometheus writes it). */
  permit_wait_seconds_bucket: ["budget", "le"],
  permit_wait_seconds_sum: ["budget"],
  permit_wait_seconds_count: ["budget"]
} as const satisfies Record<string, ReadonlyArray<string>>

export type CounterName = keyof typeof COUNTER_LABELS

/** One increment a commit carries: `labels` are the values of the counter's label names, in order. */
export interface Count {
  readonly name: CounterName
  readonly labels: ReadonlyArray<string>
  readonly by: number
}

/** One stored counter as a read returns it: its host, name, label values and total so far. */
export interface CounterRow {
  readonly host: string
  readonly name: string
  readonly labels: ReadonlyArray<string>
  readonly value: number
}

/**
 * The permit wait histogram's upper bounds, seconds. A wait is stored once, in the first bucket it
 * fits (`+Inf` past the last); the exporter adds the buckets up into Prometheus's cumulative ones.
 */
export const PERMIT_WAIT_BUCKETS: ReadonlyArray<number> = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600]

/** The `le` label of a bound, as Prometheus writes it (`+Inf` for the last). */
export const leLabel = (bound: number): string => (bound === Number.POSITIVE_INFINITY ? "+Inf" : String(bound))

/** One increment of `name` by `by` (default 1). */
export const count = (name: CounterName, labels: ReadonlyArray<string> = [], by = 1): Count => ({ name, labels, by })

/** A permit's wait of `seconds` on `budget`: its bucket, the sum and the count. */
export const observeWait = (budget: string, seconds: number): ReadonlyArray<Count> => {
  const s = Number.isFinite(seconds) && seconds > 0 ? seconds : 0
  const bound = PERMIT_WAIT_BUCKETS.find((b) => s <= b) ?? Number.POSITIVE_INFINITY
  return [count("permit_wait_seconds_bucket", [budget, leLabel(bound)]), count("permit_wait_seconds_sum", [budget], s), count("permit_wait_seconds_count", [budget])]
}

/** The key a counter is stored under, host aside: its name and its label values. */
export const counterKey = (c: { readonly name: string; readonly labels: ReadonlyArray<string> }): string => `${c.name}\u0000${JSON.stringify(c.labels)}`

/** Increments summed by counter (a commit writes each counter once). */
export const sumCounts = (counts: ReadonlyArray<Count>): ReadonlyArray<Count> => {
  if (counts.length < 2) return counts
  const by = new Map<string, Count>()
  for (const c of counts) {
    const k = counterKey(c)
    const had = by.get(k)
    by.set(k, had === undefined ? c : { ...had, by: had.by + c.by })
  }
  return [...by.values()]
}
