/**
 * The claim table's indexes (claimTable.ts), kept on every write of the newest version: live load per
 * model, the queue of heartbeats in time order, the min-heap of reaper deadlines (a claim's key is a
 * lower bound of the first time it can be unbound or hung), the owed aborts, the claims by target
 * session, and (built when the engine first asks) by owner session.
 */
import type { Claim } from "../pool/claims.js"
import { CLAIM_TTL_MS } from "../constants.js"
import type { ReaperTiming } from "../pool/reaper.js"
import type { Entry, Store } from "./claimTypes.js"

export const addTo = (m: Map<string, Set<Entry>>, k: string, e: Entry): void => {
  const set = m.get(k)
  if (set === undefined) m.set(k, new Set([e]))
  else set.add(e)
}

const removeFrom = (m: Map<string, Set<Entry>>, k: string, e: Entry): void => {
  const set = m.get(k)
  if (set === undefined) return
  set.delete(e)
  if (set.size === 0) m.delete(k)
}

export const bump = (live: Map<string, number>, model: string, by: number): void => {
  const n = (live.get(model) ?? 0) + by
  if (n === 0) live.delete(model)
  else live.set(model, n)
}

export const owes = (c: Claim): boolean => c.abortPending && !c.abortInFlight
export const needsDeadline = (c: Claim): boolean => !c.abortInFlight && !c.abortPending

export const less = (a: Entry, b: Entry): boolean => a.dk < b.dk || (a.dk === b.dk && !a.ds && b.ds)
export const ready = (e: Pick<Entry, "dk" | "ds">, at: number): boolean => at > e.dk || (at === e.dk && !e.ds)

const siftUp = (heap: Array<Entry>, i: number): void => {
  const e = heap[i]!
  while (i > 0) {
    const p = (i - 1) >> 1
    const parent = heap[p]!
    if (!less(e, parent)) break
    heap[i] = parent
    parent.hpos = i
    i = p
  }
  heap[i] = e
  e.hpos = i
}

export const siftDown = (heap: Array<Entry>, i: number): void => {
  const n = heap.length
  const e = heap[i]!
  for (;;) {
    let child = 2 * i + 1
    if (child >= n) break
    if (child + 1 < n && less(heap[child + 1]!, heap[child]!)) child++
    const c = heap[child]!
    if (!less(c, e)) break
    heap[i] = c
    c.hpos = i
    i = child
  }
  heap[i] = e
  e.hpos = i
}

export const heapRemove = (heap: Array<Entry>, e: Entry): void => {
  const i = e.hpos
  if (i < 0) return
  e.hpos = -1
  const last = heap.pop()!
  if (last === e) return
  heap[i] = last
  last.hpos = i
  siftUp(heap, i)
  siftDown(heap, last.hpos)
}

/** Whether `a + b` is exact (both and the sum safe integers); otherwise `lowered` bounds it from below. */
const exactSum = (a: number, b: number, sum: number): boolean => Number.isSafeInteger(a) && Number.isSafeInteger(b) && Number.isSafeInteger(sum)
const lowered = (sum: number): number => (Number.isFinite(sum) ? sum - Math.abs(sum) * 1e-15 - 1 : sum)

/**
 * Sets `e`'s deadline key: a lower bound of the first time the reaper can act on `c` without a blocked
 * or owed abort (TRACE.md §6): unbound once `at − acquiredAt > hangMinAgeMs`; hung once also
 * `at − since ≥ hangSilenceMs`, where `since` (the later of the target's last activity and the
 * acquisition) is `sinceAt` or later.
 */
export const setDue = (e: Entry, c: Claim, sinceAt: number, timing: ReaperTiming): void => {
  const old = c.acquiredAt + timing.hangMinAgeMs
  const oldExact = exactSum(c.acquiredAt, timing.hangMinAgeMs, old)
  if (c.targetSession === null) {
    e.dk = oldExact ? old : lowered(old)
    e.ds = oldExact
    return
  }
  const silent = sinceAt + timing.hangSilenceMs
  if (!oldExact || !exactSum(sinceAt, timing.hangSilenceMs, silent)) {
    e.dk = Math.min(lowered(old), lowered(silent))
    e.ds = false
  } else if (old >= silent) {
    e.dk = old
    e.ds = true
  } else {
    e.dk = silent
    e.ds = false
  }
}

/** Gives `e` its deadline entry (or moves it), keyed from `sinceAt`. */
export const pushDue = (s: Store, e: Entry, c: Claim, sinceAt: number): void => {
  if (s.timing === undefined) return
  setDue(e, c, sinceAt, s.timing)
  if (e.hpos < 0) {
    e.hpos = s.heap.length
    s.heap.push(e)
    siftUp(s.heap, e.hpos)
  } else {
    siftUp(s.heap, e.hpos)
    siftDown(s.heap, e.hpos)
  }
}

export const pushHeartbeat = (s: Store, e: Entry, at: number): void => {
  const n = s.hbAt.length
  if (n > s.hbHead && s.hbAt[n - 1]! > at) s.hbUnsorted = true
  e.hb = s.hbBase + n
  s.hbAt.push(at)
  s.hbEntry.push(e)
}

/** The owner indexes' part of `reindex` (called before `e` takes `c`). */
const reindexOwner = (s: Store, e: Entry, old: Claim | undefined, c: Claim | undefined, seq: number): void => {
  if (c !== undefined && c.targetSession === null && (old === undefined || old.targetSession !== null || e.seq !== seq)) {
    s.unbound.push(e)
    s.unboundSeq.push(seq)
  }
  if (old?.ownerSession !== c?.ownerSession || e.seq !== seq) {
    if (old?.ownerSession != null) removeFrom(s.byOwner, old.ownerSession, e)
    if (c?.ownerSession != null) addTo(s.byOwner, c.ownerSession, e)
  }
  const wasUnbound = old !== undefined && old.targetSession === null && old.ownerSession !== null
  const isUnbound = c !== undefined && c.targetSession === null && c.ownerSession !== null
  if (wasUnbound && (!isUnbound || old.ownerSession !== c.ownerSession)) removeFrom(s.unboundByOwner, old.ownerSession!, e)
  if (isUnbound) addTo(s.unboundByOwner, c.ownerSession!, e)
}

/** Moves `e` from claim `old` to claim `c` (either may be absent) in every index. */
export const reindex = (s: Store, e: Entry, old: Claim | undefined, c: Claim | undefined, seq: number): void => {
  const sameHeartbeat = old !== undefined && c !== undefined && old.heartbeatAt === c.heartbeatAt && old.model === c.model && e.seq === seq
  if (!sameHeartbeat && e.live) {
    bump(s.live, old!.model, -1)
    e.live = false
  }
  if (old?.targetSession !== c?.targetSession || e.seq !== seq) {
    if (old?.targetSession != null) removeFrom(s.byTarget, old.targetSession, e)
    if (c?.targetSession != null) addTo(s.byTarget, c.targetSession, e)
  }
  if (s.owners) reindexOwner(s, e, old, c, seq)
  if (c !== undefined && owes(c)) s.owed.add(e)
  else s.owed.delete(e)
  const deadlineMoved =
    old === undefined || c === undefined || e.hpos < 0 || e.seq !== seq || old.acquiredAt !== c.acquiredAt || old.targetSession !== c.targetSession || !needsDeadline(old)
  e.cur = c
  e.seq = c === undefined ? -1 : seq
  if (c === undefined) {
    heapRemove(s.heap, e)
    return
  }
  if (!sameHeartbeat && s.at - c.heartbeatAt <= CLAIM_TTL_MS) {
    e.live = true
    bump(s.live, c.model, 1)
    pushHeartbeat(s, e, c.heartbeatAt)
  }
  if (!needsDeadline(c)) heapRemove(s.heap, e)
  else if (deadlineMoved) pushDue(s, e, c, c.acquiredAt)
}

export const newEntry = (s: Store, key: string, v0: number, c0: Claim, q0: number): Entry => {
  const e: Entry = { key, v0, c0, q0, revs: undefined, cur: undefined, seq: -1, hb: -1, live: false, hpos: -1, dk: 0, ds: false, mark: 0 }
  s.entries.set(key, e)
  return e
}
