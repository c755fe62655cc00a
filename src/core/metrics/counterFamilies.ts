/**
 * The stored counters (core/metrics/counters.ts) as metric families (issue 36): `ocpool_<name>` with
 * the label `host` first, then the counter's own labels; the permit wait histogram's non-cumulative
 * buckets added up into Prometheus's cumulative ones. Pure.
 */
import { COUNTER_LABELS, PERMIT_WAIT_BUCKETS, leLabel, type CounterName, type CounterRow } from "./counters.js"
import { compareLabels, type Family, type Sample } from "./exposition.js"

/** Every counter family's help line. */
export const COUNTER_HELP: Readonly<Record<Exclude<CounterName, `permit_wait_seconds_${string}`>, string>> = {
  routes_total: "Spawns routed to a slot, by the base asked for and the routing pass that found the slot.",
  limits_total: "Limit errors classified (a 429, a quota, an outage...), by the provider they cooled and their class.",
  cooldowns_total: "Cooldowns started, by reason.",
  aborts_total: "Aborts of pooled children, by outcome (ok, failed, gave_up).",
  reaps_total: "Claims the reaper took back, by kind (hung, spinning, no_first_token).",
  fallback_switches_total: "Root sessions switched to a fallback model.",
  fail_opens_total: "Transactions that went ahead without the state lock.",
  fleet_fallbacks_total: "Decisions made on the state directory because PostgreSQL did not answer (fleet mode).",
  permit_requests_total: "Heavy-work permit requests, by budget.",
  permit_grants_total: "Heavy-work permits granted, by budget.",
  permit_cancels_total: "Heavy-work permit requests cancelled, by budget."
}

export const PERMIT_WAIT_HELP = "How long heavy-work permits waited before they were granted, seconds, by budget."

const HISTOGRAM_PARTS = new Set(["permit_wait_seconds_bucket", "permit_wait_seconds_sum", "permit_wait_seconds_count"])

const known = (name: string): name is CounterName => Object.hasOwn(COUNTER_LABELS, name)

/** The bucket a stored `le` belongs to (its index in PERMIT_WAIT_BUCKETS, or the last index + 1 for `+Inf` and what is not a bound). */
const bucketOf = (le: string): number => {
  const v = Number(le)
  if (le === "+Inf" || le.trim() === "" || !Number.isFinite(v)) return PERMIT_WAIT_BUCKETS.length
  const i = PERMIT_WAIT_BUCKETS.findIndex((b) => v <= b)
  return i < 0 ? PERMIT_WAIT_BUCKETS.length : i
}

const counterFamily = (name: keyof typeof COUNTER_HELP, rows: ReadonlyArray<CounterRow>, hosts: ReadonlyArray<string>): Family => {
  const labelNames = COUNTER_LABELS[name] as ReadonlyArray<string>
  const samples: Array<Sample> = rows
    .filter((r) => r.name === name && r.labels.length === labelNames.length)
    .map((r) => ({ labels: [["host", r.host] as const, ...labelNames.map((l, i) => [l, r.labels[i]!] as const)], value: r.value }))
  // a label-less counter a host has not counted yet is 0 for it: its series exists from the host's first scrape, and rate() sees the first increment
  if (labelNames.length === 0) for (const h of hosts) if (!samples.some((s) => s.labels[0]![1] === h)) samples.push({ labels: [["host", h]], value: 0 })
  return { name: `ocpool_${name}`, help: COUNTER_HELP[name], type: "counter", samples: samples.sort((a, b) => compareLabels(a.labels, b.labels)) }
}

/** The permit wait histogram: per host and budget, cumulative buckets at every bound and `+Inf`, then `_sum` and `_count`. */
const waitHistogram = (rows: ReadonlyArray<CounterRow>): Family => {
  const series = new Map<string, { host: string; budget: string; buckets: Array<number>; sum: number }>()
  const at = (host: string, budget: string) => {
    const k = JSON.stringify([host, budget])
    let s = series.get(k)
    if (s === undefined) series.set(k, (s = { host, budget, buckets: new Array<number>(PERMIT_WAIT_BUCKETS.length + 1).fill(0), sum: 0 }))
    return s
  }
  for (const r of rows) {
    if (r.name === "permit_wait_seconds_bucket" && r.labels.length === 2) at(r.host, r.labels[0]!).buckets[bucketOf(r.labels[1]!)]! += r.value
    else if (r.name === "permit_wait_seconds_sum" && r.labels.length === 1) at(r.host, r.labels[0]!).sum += r.value
    else if (r.name === "permit_wait_seconds_count" && r.labels.length === 1) at(r.host, r.labels[0]!)
  }
  const samples: Array<Sample> = []
  const sorted = [...series.values()].sort((a, b) => compareLabels([["h", a.host], ["b", a.budget]], [["h", b.host], ["b", b.budget]]))
  for (const s of sorted) {
    const base = [["host", s.host], ["budget", s.budget]] as const
    let total = 0
    for (const [i, bound] of [...PERMIT_WAIT_BUCKETS, Number.POSITIVE_INFINITY].entries()) {
      total += s.buckets[i]!
      samples.push({ suffix: "_bucket", labels: [...base, ["le", leLabel(bound)]], value: total })
    }
    // the count is the +Inf bucket's: both come from the same commits, and Prometheus needs them equal
    samples.push({ suffix: "_sum", labels: base, value: s.sum }, { suffix: "_count", labels: base, value: total })
  }
  return { name: "ocpool_permit_wait_seconds", help: PERMIT_WAIT_HELP, type: "histogram", samples }
}

/**
 * Every counter of the catalogue as a family, rows or not (a counter without rows has its HELP and
 * TYPE only; a label-less one is 0 for every host that counted anything). Rows of a counter this
 * version does not know, or with another number of labels, are left out.
 */
export const counterFamilies = (rows: ReadonlyArray<CounterRow>): ReadonlyArray<Family> => {
  const hosts = [...new Set(rows.filter((r) => known(r.name)).map((r) => r.host))].sort()
  const plain = (Object.keys(COUNTER_HELP) as Array<keyof typeof COUNTER_HELP>).map((name) => counterFamily(name, rows, hosts))
  return [...plain, waitHistogram(rows.filter((r) => HISTOGRAM_PARTS.has(r.name)))]
}
