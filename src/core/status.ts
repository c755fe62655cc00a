/**
 * The status view (SPEC §9): the `--json` object and the text view, built from one snapshot of
 * claims, cooldowns and the slot table. Pure and read-only: it never routes and never changes state.
 */
import type { Claim } from "./pool/claims.js"
import { POOLED_BASES, STATED_RESET_MAX_MS } from "./constants.js"
import type { CooldownTable, CoolReason } from "./pool/cooldown.js"
import type { Slot } from "./pool/pool.js"
import { printable } from "./printable.js"
import { isStale, type QuotaFigures, type QuotaRecord } from "./quota/record.js"
import type { GroupBudget } from "./limits/learned.js"
import { learnedEntries, learnedLine, type LearnedEntry } from "./view/learned.js"
import { isOver, type FallbackRecord } from "./quota/fallbackRecord.js"
import { permitSection, type BudgetJson } from "./permits/view.js"
import type { Pass } from "./pool/routing.js"
import type { Decision } from "./trace/decision.js"
import { liveClaims, liveLoadByModel, slotLoadsOf, slotStatus } from "./pool/slotStatus.js"
import { byStart, enginesLine, type EngineView } from "./state/engines.js"
import { clockSeconds as clock, remaining, wholeSeconds } from "./time.js"

export interface ProcessSnapshot {
  readonly pid: number
  readonly host: string
  readonly reaped: number
  readonly claims: ReadonlyArray<Claim>
  /** The process showing the view (plugin view only). */
  readonly self?: boolean
}

export interface StatusInput {
  readonly origin: string
  readonly slots: ReadonlyArray<Slot>
  readonly processes: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
  readonly now: number
  readonly warnings: ReadonlyArray<string>
  /** Per-model quota records (issue 12); the view shows the non-stale ones, and only when there are any. */
  readonly quota?: ReadonlyArray<QuotaRecord>
  /** The model groups' learned budgets (issue 35); the view shows those that learned something. */
  readonly learned?: ReadonlyArray<GroupBudget>
  /** Root sessions on a fallback model (issue 12, US-50); shown only when some is not over. */
  readonly fallbacks?: ReadonlyArray<FallbackRecord>
  /** Heavy-work budgets (issue 21); the view shows them only when some entry holds or waits. */
  readonly permits?: ReadonlyArray<BudgetJson>
  /**
   * The plugin's own `status` decision, when it made one for this view: its loads, cooling and next
   * slot are shown as decided (so `pool_status` names what the trace records; issue 20).
   */
  readonly decided?: Pick<Extract<Decision, { type: "status" }>, "slots" | "next">
  /** Fleet mode (issue 22): what the PostgreSQL backend says of the fleet; absent with the file backend. */
  readonly fleet?: FleetFacts
  /** The plugin engines on record (issue 33): `ocpool status` shows them, the plugin's own view does not. */
  readonly engines?: ReadonlyArray<EngineView>
}

/** One host of the fleet as the port reports it (services/state/SharedState.ts `FleetHost`). */
export interface FleetHostFacts {
  readonly host: string
  readonly processes: number
  readonly live: number
  readonly leaseUntil: number
  /** Decisions its processes made on their state directory while the server did not answer (as of their last heartbeat). */
  readonly fallbacks?: number
  readonly claims: number
  readonly permits: number
}

/**
 * The port's fleet answer (`Fleet` or `Unreachable`; `NotFleet` is no `fleet` at all) and the
 * decisions this process made on the state directory because PostgreSQL did not answer.
 */
export type FleetFacts = (
  | {
      readonly _tag: "Fleet"
      readonly view: {
        readonly url: string
        readonly schema: string
        readonly host: string
        readonly roundTripMs: number
        readonly schemaVersion: number
        readonly hosts: ReadonlyArray<FleetHostFacts>
      }
    }
  | { readonly _tag: "Unreachable"; readonly url: string; readonly schema: string; readonly host: string; readonly reason: string }
) & { readonly fallbacks: number }

/** A host of the fleet as `--json` shows it: live while some process of it holds a lease. */
export interface FleetHostEntry {
  readonly host: string
  readonly live: boolean
  readonly self: boolean
  readonly processes: number
  readonly liveProcesses: number
  readonly leaseUntil: number
  readonly claims: number
  readonly permits: number
  /** Decisions its processes made on the state directory while PostgreSQL did not answer. */
  readonly fallbacks: number
}

/** The `fleet` object of `ocpool status --json` (the URL masked). */
export type FleetEntry =
  | {
      readonly backend: "postgres"
      readonly reachable: true
      readonly url: string
      readonly schema: string
      readonly host: string
      readonly roundTripMs: number
      readonly schemaVersion: number
      readonly hosts: ReadonlyArray<FleetHostEntry>
      readonly fallbacks: number
    }
  | { readonly backend: "postgres"; readonly reachable: false; readonly url: string; readonly schema: string; readonly host: string; readonly reason: string; readonly fallbacks: number }

/** The fleet facts as JSON: hosts sorted by id, round trip to 0.1 ms. */
export const fleetEntry = (f: FleetFacts): FleetEntry =>
  f._tag === "Unreachable"
    ? { backend: "postgres", reachable: false, url: f.url, schema: f.schema, host: f.host, reason: f.reason, fallbacks: f.fallbacks }
    : {
        backend: "postgres",
        reachable: true,
        url: f.view.url,
        schema: f.view.schema,
        host: f.view.host,
        roundTripMs: Math.round(f.view.roundTripMs * 10) / 10,
        schemaVersion: f.view.schemaVersion,
        hosts: [...f.view.hosts]
          .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0))
          .map((h) => ({
            host: h.host,
            live: h.live > 0,
            self: h.host === f.view.host,
            processes: h.processes,
            liveProcesses: h.live,
            leaseUntil: h.leaseUntil,
            claims: h.claims,
            permits: h.permits,
            fallbacks: h.fallbacks ?? 0
          })),
        fallbacks: f.fallbacks
      }

/** A root session on a fallback, as `ocpool status --json` shows it. */
export interface FallbackEntry {
  readonly session: string
  readonly original: string
  readonly active: string
  readonly until: number
}

/** One dimension of a quota record as JSON: absent figures are null. */
export interface QuotaFiguresJson {
  readonly remaining: number
  readonly limit: number | null
  readonly resetAt: number | null
}

/** A quota record as `ocpool quota --json` and `ocpool status --json` show it. */
export interface QuotaEntry {
  readonly model: string
  readonly requests: QuotaFiguresJson | null
  readonly tokens: QuotaFiguresJson | null
  readonly seenAt: number
}

export interface SlotStatus {
  readonly slot: number
  readonly model: string
  readonly weight: number
  readonly load: number
  readonly cap: number
  readonly byBase: Readonly<Record<string, number>>
  readonly cooling: { readonly until: number; readonly reason: CoolReason; readonly strikes: number } | null
}

export interface StatusView {
  readonly origin: string
  readonly bases: ReadonlyArray<string>
  readonly next: { readonly slot: number; readonly model: string; readonly pass: Pass } | null
  readonly slots: ReadonlyArray<SlotStatus>
  readonly processes: ReadonlyArray<{ readonly pid: number; readonly host: string; readonly claims: number; readonly reaped: number }>
  readonly claims: number
  readonly reaped: number
  readonly warnings: ReadonlyArray<string>
  /** Present only when some quota record is not stale. */
  readonly quota?: ReadonlyArray<QuotaEntry>
  /** Present only when some model group learned a budget from its 429s (issue 35). */
  readonly learned?: ReadonlyArray<LearnedEntry>
  /** Present only when some root session runs on a fallback while its original cools. */
  readonly fallbacks?: ReadonlyArray<FallbackEntry>
  /** Present only when some permit is held or waited for (issue 21): every budget, with its holders and queue. */
  readonly permits?: ReadonlyArray<BudgetJson>
  /** Present only with the PostgreSQL backend (fleet mode, issue 22). */
  readonly fleet?: FleetEntry
  /** `ocpool status` only (issue 33): every plugin engine on record, oldest first, each live or gone. */
  readonly engines?: ReadonlyArray<EngineView>
}

const figuresJson = (f: QuotaFigures | undefined): QuotaFiguresJson | null =>
  f === undefined ? null : { remaining: f.remaining, limit: f.limit ?? null, resetAt: f.resetAt ?? null }

/** A record's JSON form (every key present, absent figures null). */
export const quotaEntry = (r: QuotaRecord): QuotaEntry => ({ model: r.model, requests: figuresJson(r.requests), tokens: figuresJson(r.tokens), seenAt: r.seenAt })

/** The records not stale at `now`, as JSON entries, in the order given. */
export const quotaEntries = (records: ReadonlyArray<QuotaRecord>, now: number): ReadonlyArray<QuotaEntry> =>
  records.filter((r) => !isStale(r, now)).map(quotaEntry)

/**
 * The §9 JSON object. Loads, cooling and the next pick come from `slotStatus`, the function the trace's
 * `status` decision uses, over live claims by model of every process (issue 20: one status).
 */
export const statusView = ({ cooldowns, decided, engines, fallbacks, fleet, learned, now, origin, permits, processes, quota, slots, warnings }: StatusInput): StatusView => {
  const live = processes.map((p) => ({ p, claims: liveClaims(p.claims, now) }))
  const status = decided ?? computed(slots, processes, cooldowns, now)
  const slotViews = status.slots.map((s): SlotStatus => {
    const byBase: Record<string, number> = {}
    for (const { claims } of live) for (const c of claims) if (c.model === s.model) byBase[c.base] = (byBase[c.base] ?? 0) + 1
    // the strike is shown from the record (a decision's cooling names its end and reason only)
    const cooling = s.cooling === null ? null : { until: s.cooling.until, reason: s.cooling.reason, strikes: cooldowns.get(s.model)?.strikes ?? 0 }
    return { slot: s.slot, model: s.model, weight: s.weight, load: s.load, cap: s.cap, byBase, cooling }
  })
  const next = status.next
  const entries = quotaEntries(quota ?? [], now)
  const lessons = learnedEntries(learned ?? [], now)
  const switched = (fallbacks ?? []).filter((f) => !isOver(f, now)).map((f) => ({ session: f.session, original: f.original, active: f.active, until: f.until }))
  return {
    origin,
    bases: [...POOLED_BASES],
    next,
    slots: slotViews,
    processes: live.map(({ claims, p }) => ({ pid: p.pid, host: p.host, claims: claims.length, reaped: p.reaped })),
    claims: live.reduce((n, { claims }) => n + claims.length, 0),
    reaped: processes.reduce((n, p) => n + p.reaped, 0),
    warnings,
    ...(entries.length > 0 ? { quota: entries } : {}),
    ...(lessons.length > 0 ? { learned: lessons } : {}),
    ...(switched.length > 0 ? { fallbacks: switched } : {}),
    ...(permits !== undefined && permits.some((b) => b.holders.length > 0 || b.queue.length > 0) ? { permits } : {}),
    ...(fleet !== undefined ? { fleet: fleetEntry(fleet) } : {}),
    ...(engines !== undefined ? { engines: byStart(engines) } : {})
  }
}

/** `slotStatus` over live claims by model of every process: what the trace's `status` decision computes. */
const computed = (slots: ReadonlyArray<Slot>, processes: ReadonlyArray<ProcessSnapshot>, cooldowns: CooldownTable, now: number) => {
  const byModel = new Map<string, number>()
  for (const p of processes) liveLoadByModel(p.claims, now, byModel)
  return slotStatus(slots, slotLoadsOf(slots, (m) => byModel.get(m) ?? 0), cooldowns, now)
}


const coolingText = (c: NonNullable<SlotStatus["cooling"]>, now: number): string => {
  const when = `until ${clock(c.until)}Z (${remaining(c.until - now)})`
  if (c.reason === "unavailable") return `UNAVAILABLE ${when}`
  if (c.reason === "auth") return `AUTH FAILED ${when}`
  if (c.reason === "entitlement") return `REFUSED (free tier) ${when}`
  return `COOLING ${c.reason} strike ${c.strikes} ${when}`
}

/** ` (3%)`: the share of the limit left, only when it is a number from 0 to 100 (never `Infinity%` from a limit of 0 or huge figures). */
const percent = (left: number, limit: number): string => {
  const p = Math.floor((left * 100) / limit)
  return limit > 0 && left >= 0 && left <= limit && Number.isFinite(p) ? ` (${p}%)` : ""
}

const figuresText = (name: string, f: QuotaFiguresJson, now: number): string => {
  const amount = f.limit === null ? `${f.remaining}` : `${f.remaining}/${f.limit}${percent(f.remaining, f.limit)}`
  // a reset more than 7 days away is garbage (issue 18) and is not shown; quotaEntries leaves such records out
  const shown = f.resetAt !== null && Math.abs(f.resetAt - now) <= STATED_RESET_MAX_MS ? f.resetAt : null
  const reset = shown === null ? "" : ` reset ${clock(shown)}Z (${shown > now ? `in ${remaining(shown - now)}` : "passed"})`
  return `${name} ${amount}${reset}`
}

/**
 * One quota record on one line, as `ocpool quota` and the `quota:` section of `ocpool status` show it:
 * `fakeB/pool-b  requests 3/100 (3%) reset 15:30:00Z (in 4m10s)  tokens 9000/10000 (90%)  seen 12s ago`.
 * Not yet made printable (the model comes from a file): callers escape the line.
 */
export const quotaLine = (q: QuotaEntry, now: number): string =>
  [
    q.model,
    ...(q.requests === null ? [] : [figuresText("requests", q.requests, now)]),
    ...(q.tokens === null ? [] : [figuresText("tokens", q.tokens, now)]),
    `seen ${remaining(now - q.seenAt)} ago`
  ].join("  ")

/** `1 claim`, `3 claims`. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** A host's line: `host-a (this host)  live, lease until 12:00:30Z  2 processes  3 claims  1 permit`. */
export const fleetHostLine = (h: FleetHostEntry, now: number): string => {
  const lease = h.live ? `live (${h.liveProcesses}/${plural(h.processes, "process", "processes")}), lease until ${clock(h.leaseUntil)}Z` : `lease expired ${clock(h.leaseUntil)}Z (${remaining(now - h.leaseUntil)} ago)`
  const fallbacks = h.fallbacks > 0 ? `  ${plural(h.fallbacks, "decision")} made on files (server away)` : ""
  return `${h.host}${h.self ? " (this host)" : ""}  ${lease}  ${plural(h.claims, "claim")}  ${plural(h.permits, "permit")}${fallbacks}`
}

/** The backend's line: `postgres postgres://u:***@db:5432/ocpool schema ocpool`. */
export const fleetBackendText = (f: FleetEntry): string => `postgres ${f.url} schema ${f.schema}`

/**
 * The `fleet:` section of the status view: the backend (URL masked), then each host, or the one line
 * saying the server did not answer (the rest of the view is then this host's, from its state database).
 */
export const fleetSection = (f: FleetEntry, now: number): ReadonlyArray<string> => {
  const fallbacks = f.fallbacks > 0 ? [`  ${plural(f.fallbacks, "decision")} of this process made on the state directory (PostgreSQL did not answer)`] : []
  if (!f.reachable) return [`fleet: server unreachable, showing this host (${fleetBackendText(f)} did not answer: ${f.reason})`, ...fallbacks]
  return [
    `fleet: ${fleetBackendText(f)}, this host ${f.host}, round trip ${f.roundTripMs} ms, schema version ${f.schemaVersion}, ${plural(f.hosts.length, "host")}`,
    ...f.hosts.map((h) => `  ${fleetHostLine(h, now)}`),
    ...fallbacks
  ]
}

export interface RenderOptions {
  readonly now: number
  readonly processes: ReadonlyArray<ProcessSnapshot>
  /** Plugin view only: the reaper line. */
  readonly reaper?: { readonly intervalMs: number; readonly lastSweepAt: number | undefined }
}

/** The text view of SPEC §9, every line printable (control characters from files escaped). */
export const renderStatus = (view: StatusView, { now, processes, reaper }: RenderOptions): string => {
  const cooling = view.slots.filter((s) => s.cooling !== null).length
  const out: Array<string> = []
  out.push(`opencode-pool: ${view.claims} claim${view.claims === 1 ? "" : "s"} in flight, ${view.processes.length} process${view.processes.length === 1 ? "" : "es"}, ${cooling} model${cooling === 1 ? "" : "s"} cooling`)
  // which running opencode has the plugin loaded, claims or not (issue 33: "0 processes" counts claims tables)
  if (view.engines !== undefined) out.push(enginesLine(view.engines, now))
  out.push(`pool from ${view.origin}; bases ${view.bases.join(", ")}`)
  for (const s of view.slots) {
    const bases = Object.entries(s.byBase).map(([b, n]) => `${b} ${n}`).join(", ")
    const marker = view.next?.slot === s.slot ? `  <- next (${view.next.pass === "overflow" ? "overflow" : `${view.next.pass} pass`})` : ""
    out.push(
      `  ${s.slot}. ${s.model}  w${s.weight}  load ${s.load}/${s.cap}${bases === "" ? "" : ` (${bases})`}${s.cooling === null ? "" : `  ${coolingText(s.cooling, now)}`}${marker}`
    )
  }
  if ((view.quota ?? []).length > 0 || (view.learned ?? []).length > 0) {
    out.push("quota:")
    for (const q of view.quota ?? []) out.push(`  ${quotaLine(q, now)}`)
    for (const l of view.learned ?? []) out.push(`  ${learnedLine(l, now)}`)
  }
  if (view.fallbacks !== undefined && view.fallbacks.length > 0) {
    out.push("fallbacks:")
    for (const f of view.fallbacks) out.push(`  ${f.session}  ${f.original} → ${f.active}  until ${clock(f.until)}Z (${remaining(f.until - now)})`)
  }
  if (view.permits !== undefined) out.push(...permitSection(view.permits, now))
  if (view.fleet !== undefined) out.push(...fleetSection(view.fleet, now))
  for (const p of processes) {
    const live = liveClaims(p.claims, now)
    out.push(`process ${p.pid}@${p.host}${p.self === true ? " (this process)" : ""}: ${live.length} claim${live.length === 1 ? "" : "s"}, reaped ${p.reaped}`)
    for (const c of live) {
      out.push(`    ${c.key}  ${c.base}-${c.slot} ${c.model}  ${c.targetSession ?? "unbound"}  age ${remaining(now - c.acquiredAt)}`)
    }
  }
  if (reaper !== undefined) {
    const last = reaper.lastSweepAt === undefined ? "never" : `${wholeSeconds(now - reaper.lastSweepAt)} ago`
    out.push(`reaper: every ${wholeSeconds(reaper.intervalMs)}, last sweep ${last}, reaped ${view.reaped}`)
  }
  for (const w of view.warnings) out.push(`warning: ${w}`)
  // claim keys, sessions, hosts and models come from files other processes wrote: no escape sequence reaches the terminal
  return out.map(printable).join("\n")
}
