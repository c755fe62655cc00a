/**
 * The claim table's queries (claimTable.ts): loads, claims by target or owner, the unbound ones, the
 * sweep's candidates from the deadline heap. The table must have been readied with `claimsAt` for the
 * line's time.
 */
import { isLive, type Claim } from "../pool/claims.js"
import type { Slot } from "../pool/pool.js"
import type { ReaperTiming } from "../pool/reaper.js"
import { slotLoadsOf } from "../pool/slotStatus.js"
import type { ClaimTable, Entry } from "./claimTypes.js"
import { claimList, claimsAt, heapRemove, isNewest, less, needsDeadline, pushDue, ready, rehome, withOwners } from "./claimStore.js"

/** Load per slot: the live claims on each slot's model, plus the peer load given by model (SPEC §6.1). */
export const tableLoads = (t: ClaimTable, slots: ReadonlyArray<Slot>, peers?: Readonly<Record<string, number>>): Array<number> => {
  const live = t.store.live
  return slotLoadsOf(slots, (m) => live.get(m) ?? 0, peers)
}

const bySeq = (a: Entry, b: Entry): number => a.seq - b.seq
const NONE: ReadonlyArray<Claim> = []

/** The claims (newest version) whose target is `session`, in acquisition order. */
export const claimsTargeting = (t: ClaimTable, session: string): ReadonlyArray<Claim> => {
  rehome(t, undefined)
  const set = t.store.byTarget.get(session)
  if (set === undefined) return []
  const es = [...set]
  if (es.length > 1) es.sort(bySeq)
  return es.map((e) => e.cur!)
}

/** Whether some claim's target is `session`. */
export const isTargeted = (t: ClaimTable, session: string): boolean => {
  rehome(t, undefined)
  return t.store.byTarget.has(session)
}

/** Whether some claim is owned by `session`. */
export const isOwner = (t: ClaimTable, session: string): boolean => {
  return withOwners(t).byOwner.has(session)
}

/** The first live claim in acquisition order whose target is `session` (SPEC §7.4; TRACE.md §6). */
export const liveTarget = (t: ClaimTable, session: string | undefined, now: number): Claim | undefined => {
  if (session === undefined) return undefined
  rehome(t, undefined)
  const set = t.store.byTarget.get(session)
  if (set === undefined) return undefined
  let best: Entry | undefined
  for (const e of set) {
    if (isLive(e.cur!, now) && (best === undefined || e.seq < best.seq)) best = e
  }
  return best?.cur
}

/** The unbound claims of `owner`, in acquisition order. */
export const unboundOf = (t: ClaimTable, owner: string): ReadonlyArray<Claim> => {
  const set = withOwners(t).unboundByOwner.get(owner)
  if (set === undefined) return []
  const es = [...set]
  if (es.length > 1) es.sort(bySeq)
  return es.map((e) => e.cur!)
}

/**
 * The unbound claims, oldest first, up to the first that `accept` refuses: acquisition order is the
 * order of acquisition times, so a caller looking for old claims stops at the first young one.
 */
export const oldestUnbound = (t: ClaimTable, accept: (c: Claim) => boolean): ReadonlyArray<Claim> => {
  const s = withOwners(t)
  while (s.unboundHead < s.unbound.length) {
    const e = s.unbound[s.unboundHead]!
    if (e.cur !== undefined && e.cur.targetSession === null && e.seq === s.unboundSeq[s.unboundHead]) break
    s.unboundHead++
  }
  if (s.unboundHead > 1024 && s.unboundHead * 2 > s.unbound.length) {
    s.unbound = s.unbound.slice(s.unboundHead)
    s.unboundSeq = s.unboundSeq.slice(s.unboundHead)
    s.unboundHead = 0
  }
  const out: Array<Claim> = []
  for (let i = s.unboundHead; i < s.unbound.length; i++) {
    const e = s.unbound[i]!
    if (e.cur === undefined || e.cur.targetSession !== null || e.seq !== s.unboundSeq[i]) continue
    if (!accept(e.cur)) break
    out.push(e.cur)
  }
  return out
}

/** The ids of `claims` (held in `t`), each once, in acquisition order. */
export const acquisitionOrder = (t: ClaimTable, claims: ReadonlyArray<Claim>): Array<string> => {
  rehome(t, undefined)
  const es = new Set<Entry>()
  for (const c of claims) {
    const e = t.store.entries.get(c.key)
    if (e?.cur !== undefined) es.add(e)
  }
  return [...es].sort(bySeq).map((e) => e.key)
}

/** The earliest acquisition time held, or +∞ for an empty table. */
export const oldestAcquired = (t: ClaimTable): number => {
  if (!isNewest(t)) return claimList(t)[0]?.acquiredAt ?? Number.POSITIVE_INFINITY
  const s = t.store
  for (let i = 0; i < s.order.length; i++) {
    const e = s.order[i]!
    if (e.cur !== undefined && e.seq === s.orderSeq[i]) return e.cur.acquiredAt
  }
  return Number.POSITIVE_INFINITY
}

/**
 * A sweep's candidates at `at`, in acquisition order: every claim whose deadline may have come, whose
 * abort is owed, or whose id is in `blocked`. No other claim can be unbound, hung, blocked or owed an
 * abort at `at` (TRACE.md §6), so a sweep that judges only these decides what judging all would.
 * The deadline entries taken out are put back by `keepDeadlines` once the sweep has judged them.
 */
export const sweepCandidates = (t: ClaimTable, at: number, blocked: ReadonlySet<string> | undefined): ReadonlyArray<Claim> => {
  const s = t.store
  if (blocked === undefined && s.owed.size === 0 && (s.heap.length === 0 || !ready(s.heap[0]!, at))) return NONE
  const mark = ++s.marks
  const found: Array<Entry> = []
  const take = (e: Entry): void => {
    if (e.cur === undefined || e.mark === mark) return
    e.mark = mark
    found.push(e)
  }
  while (s.heap.length > 0 && ready(s.heap[0]!, at)) {
    const e = s.heap[0]!
    heapRemove(s.heap, e)
    take(e)
  }
  for (const e of s.owed) {
    take(e)
  }
  if (blocked !== undefined) {
    for (const key of blocked) {
      const e = s.entries.get(key)
      if (e !== undefined) take(e)
    }
  }
  if (found.length > 1) found.sort(bySeq)
  return found.map((e) => e.cur!)
}

/**
 * After a sweep: the candidates still held that have no deadline entry (judged young or healthy, or
 * skipped) get one again, from `sinceOf` (the later of the target's last activity and the acquisition).
 */
export const keepDeadlines = (t: ClaimTable, candidates: ReadonlyArray<Claim>, sinceOf: (c: Claim) => number): void => {
  const s = t.store
  for (const old of candidates) {
    const e = s.entries.get(old.key)
    const c = e?.cur
    if (e === undefined || c === undefined || e.hpos >= 0 || !needsDeadline(c)) continue
    pushDue(s, e, c, sinceOf(c))
  }
}

const expect = (ok: boolean, what: string): void => {
  if (!ok) throw new Error(`claim table: ${what} broken`)
}

/** What the indexes hold at `at` (readied as for a line), for tests that compare them with a recount from the claims. */
export const indexView = (t: ClaimTable, at: number, timing: ReaperTiming) => {
  claimsAt(t, at, timing)
  const s = withOwners(t)
  const keys = (set: ReadonlySet<Entry>) => [...set].sort(bySeq).map((e) => e.key)
  const due = new Map<string, { readonly k: number; readonly strict: boolean }>()
  for (let i = 0; i < s.heap.length; i++) {
    const e = s.heap[i]!
    expect(e.hpos === i && e.cur !== undefined, "heap positions")
    if (i > 0) expect(!less(e, s.heap[(i - 1) >> 1]!), "heap order")
    due.set(e.key, { k: e.dk, strict: e.ds })
  }
  return {
    at: s.at,
    live: new Map(s.live),
    byTarget: new Map([...s.byTarget].map(([k, set]) => [k, keys(set)] as const)),
    byOwner: new Map([...s.byOwner].map(([k, set]) => [k, keys(set)] as const)),
    unboundByOwner: new Map([...s.unboundByOwner].map(([k, set]) => [k, keys(set)] as const)),
    owed: keys(s.owed),
    due,
    ready: (key: { readonly k: number; readonly strict: boolean }, at: number) => ready({ dk: key.k, ds: key.strict }, at)
  }
}
