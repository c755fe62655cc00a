/**
 * The heavy-work queue as every view shows it (issue 21; one home since issue 34): `ocpool status`,
 * `pool_status` and the live view (`budgetsJson`, `budgetLines`, `permitSection`), `ocpool permits`
 * (`budgetViews`, `budgetText`, `budgetsViewJson`) and `doctor` (`budgetSummary`) render through these.
 * Pure; the caller escapes what came from files unless a function says it does.
 */
import { formatDuration } from "../time.js"
import { printable, truncate } from "../printable.js"
import type { PermitView } from "./types.js"
import { elapsed } from "../time.js"

export interface PermitEntryJson {
  readonly id: string
  readonly pid: number
  readonly host: string
  readonly session: string | null
  readonly via: string
  readonly weight: number
  readonly reason: string
  readonly requestedAt: number
  readonly grantedAt: number | null
  /** The holder is gone (the next transaction releases it). */
  readonly gone: boolean
  readonly paused: boolean
}

export interface BudgetJson {
  readonly name: string
  /** Null where this process does not know the budget's capacity. */
  readonly capacity: number | null
  readonly source: string | null
  readonly used: number
  readonly holders: ReadonlyArray<PermitEntryJson>
  readonly queue: ReadonlyArray<PermitEntryJson>
}

/** A budget this process knows: its capacity in units and how it was found (core/permits/settings.ts `capacityOf`). */
export interface BudgetInfo {
  readonly name: string
  readonly capacity: number
  readonly source: string
}

/** A budget as the permits service shows it (`Permits.status`, `ocpool permits`). */
export interface BudgetView {
  readonly name: string
  readonly capacity: number
  /** How the capacity was found: `auto: 4 CPUs (cgroup v2 cpu.max 400000 100000) / 2`, `option`, `OCPOOL_PERMITS`. */
  readonly source: string
  readonly used: number
  /** Held entries, oldest grant first. */
  readonly holders: ReadonlyArray<PermitView>
  /** Queued entries in FIFO order. */
  readonly queue: ReadonlyArray<PermitView>
}

const entryJson = (e: PermitView): PermitEntryJson => ({
  id: e.id,
  pid: e.holder.pid,
  host: e.holder.host,
  session: e.holder.session ?? null,
  via: e.holder.via,
  weight: e.weight,
  reason: e.reason,
  requestedAt: e.requestedAt,
  grantedAt: e.grantedAt ?? null,
  gone: e.gone,
  paused: e.pausedAt !== undefined
})

/** One budget's entries: holders (oldest grant first) and the queue (FIFO), and the units held. */
export interface BudgetEntries<E extends PermitView = PermitView> {
  readonly name: string
  /** Undefined where this process does not know the budget. */
  readonly info: BudgetInfo | undefined
  readonly used: number
  readonly holders: ReadonlyArray<E>
  readonly queue: ReadonlyArray<E>
}

/** Every known budget (in order), then any other budget some entry names, each with its entries. */
export const byBudget = <E extends PermitView>(budgets: ReadonlyArray<BudgetInfo>, entries: ReadonlyArray<E>): ReadonlyArray<BudgetEntries<E>> => {
  const names = budgets.map((b) => b.name)
  for (const e of entries) if (!names.includes(e.budget)) names.push(e.budget)
  return names.map((name) => {
    const mine = entries.filter((e) => e.budget === name)
    const holders = mine.filter((e) => e.grantedAt !== undefined).sort((a, c) => (a.grantedAt ?? 0) - (c.grantedAt ?? 0) || a.seq - c.seq)
    const queue = mine.filter((e) => e.grantedAt === undefined).sort((a, c) => a.seq - c.seq)
    return { name, info: budgets.find((x) => x.name === name), used: holders.reduce((n, e) => n + e.weight, 0), holders, queue }
  })
}

/** Every known budget (in order), then any other budget some entry names, as the status JSON shows them. */
export const budgetsJson = (budgets: ReadonlyArray<BudgetInfo>, entries: ReadonlyArray<PermitView>): ReadonlyArray<BudgetJson> =>
  byBudget(budgets, entries).map((b) => ({
    name: b.name,
    capacity: b.info?.capacity ?? null,
    source: b.info?.source ?? null,
    used: b.used,
    holders: b.holders.map(entryJson),
    queue: b.queue.map(entryJson)
  }))

const who = (e: PermitEntryJson): string => `pid ${e.pid}${e.session === null ? "" : ` ${e.session}`} (${e.via})`

/**
 * The lines of one budget: `heavy: 2/2 units used, 1 waiting`, then each holder and each waiter in
 * order (`waiting 12s behind p-1a2b`); a gone holder is marked, a paused request says so.
 */
export const budgetLines = (b: BudgetJson, now: number): ReadonlyArray<string> => {
  const cap = b.capacity === null ? "" : `/${b.capacity}`
  const out = [`${b.name}: ${b.used}${cap} unit${b.used === 1 && cap === "" ? "" : "s"} used, ${b.queue.length} waiting${b.source === null ? "" : ` (capacity ${b.source})`}`]
  for (const h of b.holders) {
    out.push(`  holds  ${h.id}  w${h.weight}  ${who(h)}  ${elapsed(now - (h.grantedAt ?? now))}  ${h.reason}${h.gone ? "  [holder gone]" : ""}`)
  }
  b.queue.forEach((q, i) => {
    const behind = i === 0 ? b.holders.map((h) => h.id).join(", ") : b.queue[i - 1]!.id
    out.push(
      `  ${String(i + 1).padStart(2)}.    ${q.id}  w${q.weight}  ${who(q)}  waiting ${elapsed(now - q.requestedAt)}${behind === "" ? "" : ` behind ${behind}`}  ${q.reason}${q.paused ? "  [paused: client away]" : ""}${q.gone ? "  [requester gone]" : ""}`
    )
  })
  return out
}

/** The `permits:` section of `ocpool status` and `pool_status`: only budgets with entries; empty when none. */
export const permitSection = (budgets: ReadonlyArray<BudgetJson>, now: number): ReadonlyArray<string> => {
  const busy = budgets.filter((b) => b.holders.length > 0 || b.queue.length > 0)
  return busy.length === 0 ? [] : ["permits:", ...busy.flatMap((b) => budgetLines(b, now).map((l) => `  ${l}`))]
}

/** The source of a budget some entry names but this process does not know (capacity 0). */
export const UNKNOWN_SOURCE = "unknown: not configured in this process"

/** Budgets with their entries: known ones in configuration order, then any other budget seen in the entries. */
export const budgetViews = (budgets: ReadonlyArray<BudgetInfo>, entries: ReadonlyArray<PermitView>): ReadonlyArray<BudgetView> =>
  byBudget(budgets, entries).map((b) => ({
    name: b.name,
    capacity: b.info?.capacity ?? 0,
    source: b.info?.source ?? UNKNOWN_SOURCE,
    used: b.used,
    holders: b.holders,
    queue: b.queue
  }))

/** The views as the status JSON shows them. */
export const budgetsJsonOf = (views: ReadonlyArray<BudgetView>): ReadonlyArray<BudgetJson> =>
  budgetsJson(
    views.filter((v) => v.source !== UNKNOWN_SOURCE).map((v) => ({ name: v.name, capacity: v.capacity, source: v.source })),
    views.flatMap((v) => [...v.holders, ...v.queue])
  )

/** `doctor`'s summary of one budget: `heavy 1/2 used, 0 waiting (capacity option)`. */
export const budgetSummary = (b: BudgetJson): string =>
  `${b.name} ${b.used}/${b.capacity ?? "?"} used, ${b.queue.length} waiting${b.source === null ? "" : ` (capacity ${b.source})`}`

/** `pid 123 on host h`, and the process group an `ocpool run` holder follows. */
const holderText = (e: PermitView, host: string): string =>
  `pid ${e.holder.pid}${e.holder.host === host ? "" : ` on ${printable(e.holder.host)}`}${e.holder.group === undefined ? "" : ` group ${e.holder.group.pgid}`}`

const entryLine = (e: PermitView, now: number, host: string, position?: number): string => {
  const session = e.holder.session === undefined ? "" : `  session ${printable(e.holder.session)}`
  const time = position === undefined ? `since ${formatDuration(now - (e.grantedAt ?? now))}` : `waiting ${formatDuration(now - e.requestedAt)}`
  const marks = [e.pausedAt !== undefined ? "[paused: client away]" : "", e.gone ? (position === undefined ? "[holder gone]" : "[requester gone]") : ""].filter((m) => m !== "").join(" ")
  return `    ${position === undefined ? "" : `${position}. `}${e.id}  ${holderText(e, host)}${session}  via ${e.holder.via}  weight ${e.weight}  ${time}  ${truncate(printable(e.reason), 120)}${marks === "" ? "" : `  ${marks}`}`
}

/** `ocpool permits`: the lines of one budget, its header, its holders, its queue (texts from peers escaped); `host`: this host (others' entries are marked `on HOST`). */
export const budgetText = (b: BudgetView, now: number, host: string): ReadonlyArray<string> => [
  `${printable(b.name)}: ${b.used}/${b.capacity} used, ${b.holders.length} holder${b.holders.length === 1 ? "" : "s"}, ${b.queue.length} waiting  (capacity ${printable(b.source)})`,
  ...(b.holders.length === 0 ? [] : ["  holders:", ...b.holders.map((e) => entryLine(e, now, host))]),
  ...(b.queue.length === 0 ? [] : ["  queue:", ...b.queue.map((e, i) => entryLine(e, now, host, i + 1))])
]

const viewEntryJson = (e: PermitView, now: number, position?: number) => ({
  id: e.id,
  ...(position === undefined ? {} : { position }),
  pid: e.holder.pid,
  host: e.holder.host,
  session: e.holder.session ?? null,
  via: e.holder.via,
  group: e.holder.group?.pgid ?? null,
  weight: e.weight,
  reason: e.reason,
  requestedAt: e.requestedAt,
  grantedAt: e.grantedAt ?? null,
  ...(position === undefined ? { heldMs: now - (e.grantedAt ?? now) } : { waitingMs: now - e.requestedAt }),
  gone: e.gone,
  paused: e.pausedAt !== undefined
})

/** `ocpool permits --json`'s budgets: each with its holders (time held) and its queue (position, time waiting). */
export const budgetsViewJson = (budgets: ReadonlyArray<BudgetView>, now: number) =>
  budgets.map((b) => ({
    name: b.name,
    capacity: b.capacity,
    source: b.source,
    used: b.used,
    holders: b.holders.map((e) => viewEntryJson(e, now)),
    queue: b.queue.map((e, i) => viewEntryJson(e, now, i + 1))
  }))
