/** Every host's counters on SQL (issue 36), for SQLite and PostgreSQL alike (stateSql.ts: schema version 5). */
import { Effect } from "effect"
import { count, counterKey, sumCounts, type Count } from "../../core/metrics/counters.js"
import type { Commit, SharedStateStats } from "../../services/state/SharedState.js"
import type { CounterRecords, RecordsError } from "./sharedStateOver.js"
import type { SqlExec } from "./sqlRecords.js"
import { textOf, type Query } from "./stateSql.js"

/**
 * Every host's counters (issue 36): a commit's increments added to `host`'s rows (one statement per
 * counter, in the commit's transaction); a read returns every host's, sorted by host, name and labels.
 */
export const sqlCounters = (x: SqlExec, host: string): CounterRecords => {
  const t = textOf(x.dialect)
  // run by every spawn: made once
  const ADD = t`INSERT INTO counters (host, name, labels, value) VALUES (${"host"}, ${"name"}, ${"labels"}, ${"by"}) ON CONFLICT (host, name, labels) DO UPDATE SET value = counters.value + excluded.value`
  const addOne = (c: Count) => x.run({ text: ADD, params: [host, c.name, JSON.stringify(c.labels), c.by] })
  const ALL: Query = { text: "SELECT host, name, labels, value FROM counters ORDER BY host, name, labels", params: [] }
  return {
    readAll: x.all<{ readonly host: string; readonly name: string; readonly labels: string; readonly value: number | string }>(ALL).pipe(
      Effect.map((rows) => rows.flatMap((r) => {
        const labels = decodeLabels(r.labels)
        const value = Number(r.value)
        return labels === undefined || !Number.isFinite(value) ? [] : [{ host: r.host, name: r.name, labels, value }]
      }))
    ),
    // a spawn adds one counter: one statement, no loop
    add: (counts) => (counts.length === 1 ? Effect.asVoid(addOne(counts[0]!)) : Effect.forEach(sumCounts(counts), addOne, { discard: true }))
  }
}

/** A stored counter's label values, or undefined when they are not a JSON array of strings. */
const decodeLabels = (text: string): ReadonlyArray<string> | undefined => {
  try {
    const v: unknown = JSON.parse(text)
    return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as ReadonlyArray<string>) : undefined
  } catch {
    return undefined
  }
}

/** A commit without its counts (fleet mode: a decision made on the state directory; its counts wait for the server). */
export const withoutCounts = (c: Commit): Commit => (c.counts === undefined ? c : { ...c, counts: undefined })

/**
 * What fleet mode counted while PostgreSQL did not answer (issue 36), in memory: the counts of the
 * decisions made on the state directory (summed per counter, so bounded by the label values), the
 * decisions that fell back (`fleet_fallbacks_total`) and the fail-opens of the state directory's
 * database since the last publish. `publish` adds them to the server's counters and forgets them; a
 * publish that fails keeps them for the next. With `metrics` off it keeps nothing. Lost if the process
 * ends before the server answers again.
 */
export const pendingCounts = (metrics: boolean, stats: Effect.Effect<SharedStateStats>) => {
  const byKey = new Map<string, Count>()
  let fallbacks = 0
  let failOpensPublished = 0
  const add = (counts: ReadonlyArray<Count>): void => {
    if (!metrics) return
    for (const c of counts) {
      const k = counterKey(c)
      const had = byKey.get(k)
      byKey.set(k, had === undefined ? c : { ...had, by: had.by + c.by })
    }
  }
  return {
    add,
    /** One decision made on the state directory. */
    fellBack: (): void => {
      if (metrics) fallbacks++
    },
    publish: (part: CounterRecords): Effect.Effect<void, RecordsError> =>
      !metrics
        ? Effect.void
        : Effect.flatMap(stats, (s) => {
            const failOpens = Math.max(0, s.failOpens - failOpensPublished)
            const fb = fallbacks
            if (byKey.size === 0 && fb === 0 && failOpens === 0) return Effect.void
            const counts = [...byKey.values()]
            if (fb > 0) counts.push(count("fleet_fallbacks_total", [], fb))
            if (failOpens > 0) counts.push(count("fail_opens_total", [], failOpens))
            byKey.clear()
            fallbacks -= fb
            failOpensPublished += failOpens
            return part.add(counts).pipe(
              // not written: kept for the next publish
              Effect.onError(() =>
                Effect.sync(() => {
                  add(counts.filter((c) => c.name !== "fleet_fallbacks_total" && c.name !== "fail_opens_total"))
                  fallbacks += fb
                  failOpensPublished -= failOpens
                })
              )
            )
          })
  }
}
