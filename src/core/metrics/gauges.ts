/**
 * The gauges `ocpool metrics` reads at each scrape (issue 36), from the status view of one read of
 * the shared state: slots' load and cap, cooling models, quota (stated and learned), heavy-work
 * permits, processes and claims, fleet hosts. Pure: `now` is given. Labels are bounded (slots,
 * models, reasons, budgets, hosts): never a session id.
 */
import { isCleared, isCooling, type CooldownTable } from "../pool/cooldown.js"
import type { BudgetJson } from "../permits/view.js"
import type { StatusView } from "../status.js"
import { compareLabels, type Family, type Sample } from "./exposition.js"

export interface GaugeInput {
  readonly view: StatusView
  /** Every cooldown read (models outside the pool too). */
  readonly cooldowns: CooldownTable
  /** Every budget this process knows, with its entries (the view keeps them only while some is held). */
  readonly permits: ReadonlyArray<BudgetJson>
  readonly now: number
  /** The fleet's lease length, ms: a lease ends this long after its last renewal. */
  readonly leaseMs: number
}

type Labels = ReadonlyArray<readonly [string, string]>

/** A gauge family, its series sorted by label values (`inOrder`: as given, the slots in the pool's order). */
const gauge = (name: string, help: string, samples: ReadonlyArray<Sample>, inOrder = false): Family => ({
  name: `ocpool_${name}`,
  help,
  type: "gauge",
  samples: inOrder ? samples : [...samples].sort((a, b) => compareLabels(a.labels, b.labels))
})

const s = (labels: Labels, value: number): Sample => ({ labels, value })
const seconds = (ms: number): number => Math.max(0, Math.round(ms) / 1000)

/** Every gauge family, each present (with its HELP and TYPE) even when it has no series. */
export const gaugeFamilies = ({ cooldowns, leaseMs, now, permits, view }: GaugeInput): ReadonlyArray<Family> => {
  const slot = (x: StatusView["slots"][number]): Labels => [["slot", String(x.slot)], ["model", x.model]]
  const cooling = [...cooldowns.values()].filter((c) => isCooling(c, now) && !isCleared(c))
  const stated = (view.quota ?? []).flatMap((q) => (q.requests === null ? [] : [{ model: q.model, f: q.requests }]))
  const learned = view.learned ?? []
  const fleet = view.fleet
  const hosts = fleet !== undefined && fleet.reachable ? fleet.hosts : []
  return [
    gauge("slot_load", "Live claims on each slot of the pool.", view.slots.map((x) => s(slot(x), x.load)), true),
    gauge("slot_cap", "Each slot's cap: the claims it takes before routing passes it over.", view.slots.map((x) => s(slot(x), x.cap)), true),
    gauge("slot_weight", "Each slot's weight in the pool file.", view.slots.map((x) => s(slot(x), x.weight)), true),
    gauge("slots_cooling", "Slots of the pool whose model is cooling now.", [s([], view.slots.filter((x) => x.cooling !== null).length)]),
    gauge("slots", "Slots in the pool.", [s([], view.slots.length)]),
    gauge("cooling_seconds", "Seconds left of each cooling model's cooldown, by model and reason.", cooling.map((c) => s([["model", c.model], ["reason", c.reason]], seconds(c.until - now)))),
    gauge("quota_remaining", "Requests left of each model's quota: stated by the provider's headers (source stated) or learned from its 429s (source learned, model the group).", [
      ...stated.map((q) => s([["model", q.model], ["source", "stated"]], q.f.remaining)),
      ...learned.map((l) => s([["model", l.group], ["source", "learned"]], l.remaining))
    ]),
    gauge("quota_limit", "Each model's request limit in the quota's window, stated or learned (as ocpool_quota_remaining).", [
      ...stated.flatMap((q) => (q.f.limit === null ? [] : [s([["model", q.model], ["source", "stated"]], q.f.limit)])),
      ...learned.map((l) => s([["model", l.group], ["source", "learned"]], l.limit))
    ]),
    gauge("permits_used", "Heavy-work permit units held, by budget.", permits.map((b) => s([["budget", b.name]], b.used))),
    gauge("permits_capacity", "Heavy-work permit units a budget holds (as this host resolves it), by budget.", permits.flatMap((b) => (b.capacity === null ? [] : [s([["budget", b.name]], b.capacity)]))),
    gauge("permits_queued", "Heavy-work permit requests waiting, by budget.", permits.map((b) => s([["budget", b.name]], b.queue.length))),
    gauge("processes", "Processes with claims on record (live holders).", [s([], view.processes.length)]),
    gauge("claims", "Live claims of every process.", [s([], view.claims)]),
    gauge("fleet_reachable", "Fleet mode: 1 when PostgreSQL answered this scrape, 0 when it did not (the rest is then this host's state directory).", fleet === undefined ? [] : [s([], fleet.reachable ? 1 : 0)]),
    gauge("fleet_host_lease_age_seconds", "Fleet mode: seconds since each host last renewed its lease.", hosts.map((h) => s([["host", h.host]], seconds(now - (h.leaseUntil - leaseMs))))),
    gauge("fleet_host_live", "Fleet mode: 1 while some process of the host holds a lease.", hosts.map((h) => s([["host", h.host]], h.live ? 1 : 0)))
  ]
}
