/**
 * The claim table's store and writes (claimTable.ts is its entry): every claim id's (version, claim)
 * history in one shared store, and a table as a version of it. Reading any version is cheap; the
 * indexes (claimIndex.ts) describe the newest version only. A table that is not the newest of its store
 * (a branch), or used at an earlier time than its store has seen, is moved to a fresh store built from
 * what it holds ("re-homed"), so no table a caller holds ever changes; heartbeats past the TTL expire;
 * the acquisition order is compacted. Writes go through the newest version, keeping the indexes.
 */
import type { Claim } from "../pool/claims.js"
import { CLAIM_TTL_MS } from "../constants.js"
import type { ReaperTiming } from "../pool/reaper.js"
import { addTo, bump, owes, needsDeadline, siftDown, setDue, pushHeartbeat, newEntry, reindex } from "./claimIndex.js"
import type { ClaimTable, Entry, Rev, Store } from "./claimTypes.js"

export type { ClaimTable } from "./claimTypes.js"

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
