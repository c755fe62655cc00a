/** Every host's counters on SQL (issue 36), for SQLite and PostgreSQL alike (stateSql.ts: schema version 5). */
import { Effect } from "effect"
import { sumCounts } from "../../core/metrics/counters.js"
import type { CounterRecords } from "./sharedStateOver.js"
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
  const ALL: Query = { text: "SELECT host, name, labels, value FROM counters ORDER BY host, name, labels", params: [] }
  return {
    readAll: x.all<{ readonly host: string; readonly name: string; readonly labels: string; readonly value: number | string }>(ALL).pipe(
      Effect.map((rows) => rows.flatMap((r) => {
        const labels = decodeLabels(r.labels)
        const value = Number(r.value)
        return labels === undefined || !Number.isFinite(value) ? [] : [{ host: r.host, name: r.name, labels, value }]
      }))
    ),
    add: (counts) => Effect.forEach(sumCounts(counts), (c) => x.run({ text: ADD, params: [host, c.name, JSON.stringify(c.labels), c.by] }), { discard: true })
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
