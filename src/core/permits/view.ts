/**
 * The heavy-work queue as the status views show it (issue 21): `ocpool status`, `pool_status` and
 * `ocpool permits` share these lines and this JSON. Pure; the caller escapes what came from files.
 */
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

export interface BudgetInfo {
  readonly name: string
  readonly capacity: number
  readonly source: string
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
