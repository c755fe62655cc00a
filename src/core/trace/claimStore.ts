/**
 * The claim table's store, writes and indexes (claimTable.ts is its entry). The store: every claim id's
 * (version, claim) history, and a table as a version of it; reading any version is cheap. A table that
 * is not the newest of its store (a branch), or used at an earlier time than its store has seen, is
 * moved to a fresh store built from what it holds ("re-homed"), so no table a caller holds ever
 * changes; heartbeats past the TTL expire; the acquisition order is compacted. The indexes, kept on
 * every write through the newest version (and describing it only): live load per model, the queue of
 * heartbeats in time order, the min-heap of reaper deadlines (a claim's key is a lower bound of the
 * first time it can be unbound or hung), the owed aborts, the claims by target session, and (built
 * when the engine first asks) by owner session. They are one module because they keep one invariant
 * together: an entry's heap position, heartbeat slot and index memberships move with its writes.
 */
import type { Claim } from "../pool/claims.js"
import { CLAIM_TTL_MS } from "../constants.js"
import type { ReaperTiming } from "../pool/reaper.js"
import type { ClaimTable, Entry, Rev, Store } from "./claimTypes.js"

export type { ClaimTable } from "./claimTypes.js"

// The indexes

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

// The store and its writes

export const newStore = (): Store => ({
  entries: new Map(),
  latest: 0,
  held: 0,
  nextSeq: 0,
  order: [],
  orderSeq: [],
  owners: false,
  unbound: [],
  unboundSeq: [],
  unboundHead: 0,
  live: new Map(),
  hbAt: [],
  hbEntry: [],
  hbHead: 0,
  hbBase: 0,
  hbUnsorted: false,
  heap: [],
  owed: new Set(),
  byTarget: new Map(),
  byOwner: new Map(),
  unboundByOwner: new Map(),
  at: Number.NEGATIVE_INFINITY,
  timing: undefined,
  marks: 0
})

/** The empty table. Its store is sealed (latest ≠ its version), so the first use starts a new store. */
export const emptyClaims: ClaimTable = { store: { ...newStore(), latest: 1 }, version: 0, size: 0, list: [] }

/** The revision of `e` visible at `version`, if any. */
const revAt = (e: Entry, version: number): Rev | undefined => {
  const revs = e.revs
  if (revs !== undefined) for (let i = revs.length - 1; i >= 0; i--) if (revs[i]!.v <= version) return revs[i]
  return e.v0 <= version ? { v: e.v0, c: e.c0, q: e.q0 } : undefined
}

export const isNewest = (t: ClaimTable): boolean => t.version === t.store.latest

/** The claim with this id, at the table's version. */
export const getClaim = (t: ClaimTable, key: string): Claim | undefined => {
  const e = t.store.entries.get(key)
  if (e === undefined) return undefined
  return isNewest(t) ? e.cur : revAt(e, t.version)?.c
}

/** The claims in acquisition order. */
export const claimList = (t: ClaimTable): ReadonlyArray<Claim> => {
  if (t.list !== undefined) return t.list
  const out: Array<Claim> = []
  const s = t.store
  if (isNewest(t)) {
    for (let i = 0; i < s.order.length; i++) {
      const e = s.order[i]!
      if (e.cur !== undefined && e.seq === s.orderSeq[i]) out.push(e.cur)
    }
  } else {
    const found: Array<Rev> = []
    for (const e of s.entries.values()) {
      const r = revAt(e, t.version)
      if (r?.c !== undefined) found.push(r)
    }
    found.sort((a, b) => a.q - b.q)
    for (const r of found) out.push(r.c!)
  }
  t.list = out
  return out
}

const rebuildHeartbeats = (s: Store): void => {
  const live: Array<Entry> = []
  for (const e of s.entries.values()) if (e.live) live.push(e)
  live.sort((a, b) => a.cur!.heartbeatAt - b.cur!.heartbeatAt || a.seq - b.seq)
  s.hbAt = []
  s.hbEntry = []
  s.hbHead = 0
  s.hbBase = 0
  s.hbUnsorted = false
  for (const e of live) pushHeartbeat(s, e, e.cur!.heartbeatAt)
}

/** Keys every claim that needs one from its acquisition, or, with `keys`, keeps the key it had there. */
const rebuildHeap = (s: Store, keys?: Map<string, Entry>): void => {
  s.heap = []
  for (const e of s.entries.values()) {
    e.hpos = -1
    if (e.cur === undefined || !needsDeadline(e.cur) || s.timing === undefined) continue
    const had = keys?.get(e.key)
    if (had !== undefined && had.hpos >= 0) {
      e.dk = had.dk
      e.ds = had.ds
    } else setDue(e, e.cur, e.cur.acquiredAt, s.timing)
    e.hpos = s.heap.length
    s.heap.push(e)
  }
  for (let i = (s.heap.length >> 1) - 1; i >= 0; i--) siftDown(s.heap, i)
}

/** Moves `t` to a fresh store holding exactly its claims (same acquisition order). */
const rebuild = (t: ClaimTable, timing: ReaperTiming | undefined): void => {
  // the newest table's deadline keys were kept with its own activity: still lower bounds (a compaction)
  const keys = isNewest(t) && (timing === undefined || timing === t.store.timing) ? t.store.entries : undefined
  const claims = claimList(t)
  const s = newStore()
  s.timing = timing ?? t.store.timing
  for (const c of claims) {
    const e = newEntry(s, c.key, 0, c, s.nextSeq)
    s.order.push(e)
    s.orderSeq.push(s.nextSeq)
    reindexFresh(s, e, c, s.nextSeq++)
  }
  s.held = claims.length
  rebuildHeartbeats(s)
  rebuildHeap(s, keys)
  t.store = s
  t.version = 0
}

/** Indexes a claim of a store being built (heartbeats and deadlines are rebuilt afterwards). */
const reindexFresh = (s: Store, e: Entry, c: Claim, seq: number): void => {
  e.cur = c
  e.seq = seq
  e.live = true
  bump(s.live, c.model, 1)
  if (c.targetSession !== null) addTo(s.byTarget, c.targetSession, e)
  if (owes(c)) s.owed.add(e)
}

/** Re-homes `t` when its store's indexes do not describe it at `at`, or the store has grown too big. */
export const rehome = (t: ClaimTable, at: number | undefined): void => {
  const s = t.store
  const newest = isNewest(t)
  if (newest && (at === undefined || at >= s.at) && s.held <= 2 * t.size + 64) return
  rebuild(t, undefined)
  // the indexes' time carries over when the table was the newest of its store (a compaction)
  const time = at ?? (newest ? s.at : Number.NEGATIVE_INFINITY)
  if (time !== Number.NEGATIVE_INFINITY) expire(t.store, time)
}

/** Drops heartbeats that passed the TTL by `at` from the live loads. */
const expire = (s: Store, at: number): void => {
  if (s.hbUnsorted) rebuildHeartbeats(s)
  s.at = at
  while (s.hbHead < s.hbAt.length) {
    const e = s.hbEntry[s.hbHead]!
    if (e.live && e.hb === s.hbBase + s.hbHead) {
      // the queue is in heartbeat order: the first live heartbeat within the TTL ends the walk
      if (at - e.cur!.heartbeatAt <= CLAIM_TTL_MS) break
      e.live = false
      bump(s.live, e.cur!.model, -1)
    }
    s.hbHead++
  }
  // keep the queue's dead prefix small
  if (s.hbHead > 1024 && s.hbHead * 2 > s.hbAt.length) {
    s.hbAt = s.hbAt.slice(s.hbHead)
    s.hbEntry = s.hbEntry.slice(s.hbHead)
    s.hbBase += s.hbHead
    s.hbHead = 0
  }
}

/**
 * Readies `t` for a line at `at` with `timing`: re-homed if needed, expired heartbeats dropped, the
 * deadline heap keyed for `timing`. Changes no claim. Every line that reads or writes claims calls it first.
 */
export const claimsAt = (t: ClaimTable, at: number, timing: ReaperTiming): ClaimTable => {
  rehome(t, at)
  const s = t.store
  if (s.timing === undefined || s.timing.hangMinAgeMs !== timing.hangMinAgeMs || s.timing.hangSilenceMs !== timing.hangSilenceMs) {
    s.timing = timing
    rebuildHeap(s)
  }
  if (at !== s.at) expire(s, at)
  if (s.order.length > 2 * t.size + 1024) compactOrder(s)
  return t
}

const compactOrder = (s: Store): void => {
  const order: Array<Entry> = []
  const orderSeq: Array<number> = []
  for (let i = 0; i < s.order.length; i++) {
    const e = s.order[i]!
    if (e.cur === undefined || e.seq !== s.orderSeq[i]) continue
    order.push(e)
    orderSeq.push(e.seq)
  }
  s.order = order
  s.orderSeq = orderSeq
}

/** Builds the owner indexes from the claims held, once; writes keep them from then on. */
export const withOwners = (t: ClaimTable): Store => {
  rehome(t, undefined)
  const s = t.store
  if (s.owners) return s
  for (let i = 0; i < s.order.length; i++) {
    const e = s.order[i]!
    const c = e.cur
    if (c === undefined || e.seq !== s.orderSeq[i]) continue
    if (c.ownerSession !== null) addTo(s.byOwner, c.ownerSession, e)
    if (c.targetSession !== null) continue
    s.unbound.push(e)
    s.unboundSeq.push(e.seq)
    if (c.ownerSession !== null) addTo(s.unboundByOwner, c.ownerSession, e)
  }
  s.owners = true
  return s
}

const write = (t: ClaimTable, key: string, c: Claim | undefined, fresh: boolean): ClaimTable => {
  rehome(t, undefined)
  const s = t.store
  let e = s.entries.get(key)
  if (e === undefined && !(fresh && c !== undefined)) return t
  const version = ++s.latest
  const old = e?.cur
  let seq = e === undefined ? -1 : e.seq
  if (fresh && c !== undefined) {
    seq = s.nextSeq++
    e ??= newEntry(s, key, version, c, seq)
    s.order.push(e)
    s.orderSeq.push(seq)
  }
  const entry = e!
  if (entry.v0 !== version) {
    const rev = { v: version, c, q: seq }
    if (entry.revs === undefined) entry.revs = [rev]
    else entry.revs.push(rev)
  }
  s.held++
  reindex(s, entry, old, c, seq)
  const size = t.size + (old === undefined ? 1 : 0) - (c === undefined ? 1 : 0)
  return { store: s, version, size, list: undefined }
}

/** A table with `c` added last in acquisition order (its id must not be held). */
export const addClaim = (t: ClaimTable, c: Claim): ClaimTable => write(t, c.key, c, true)

/** A table with the claim of the same id replaced by `c`, in place in acquisition order. */
export const setClaim = (t: ClaimTable, c: Claim): ClaimTable => (getClaim(t, c.key) === undefined ? t : write(t, c.key, c, false))

/** A table without the claim `key`. */
export const removeClaim = (t: ClaimTable, key: string): ClaimTable => (getClaim(t, key) === undefined ? t : write(t, key, undefined, false))
