/**
 * The trace machine's claims: a persistent table keyed by claim id, in acquisition order, whose indexes
 * make a line's cost independent of the number of claims held (docs/PERFORMANCE.md):
 *
 * - live load per model, kept on every write; claims leave it when their heartbeat passes the TTL,
 *   found through a queue of heartbeats in time order (a heartbeat is always set to the line's time);
 * - a min-heap of reaper deadlines, so a sweep visits only claims that may be due (SPEC §8.2): the key
 *   of a claim is a lower bound of the first time it can be unbound or hung; a claim found healthy is
 *   put back with its deadline recomputed from the activity seen since;
 * - the claims whose abort is owed (retried by every sweep) and the claims by target session;
 * - for the plugin's engine only, built when it first asks: claims by owner session, each owner's
 *   unbound claims, and the unbound claims in acquisition order (oldest first).
 *
 * Persistent the way the activity table is (activity.ts): every claim id keeps its (version, claim)
 * history in one shared store, and a table is a version of it. Reading any version is cheap; writing
 * through the newest appends. The indexes describe the newest version only: a table that is not the
 * newest of its store (a branch), or used at an earlier time than its store has seen, is first moved
 * to a fresh store built from what it holds ("re-homed"), so no table a caller holds ever changes.
 *
 * This module is the table's one entry: its writes, and the store (claimStore.ts), indexes
 * (claimIndex.ts), rebuilding (claimRebuild.ts) and queries (claimQueries.ts) re-exported. The parts
 * share one mutable representation (`Entry`, `Store`) and keep each other's invariants (an entry's
 * heap position, heartbeat slot and index memberships move together): only they touch it.
 */
import type { Claim } from "../pool/claims.js"
import { getClaim, type ClaimTable } from "./claimStore.js"
import { reindex, newEntry } from "./claimIndex.js"
import { rehome } from "./claimRebuild.js"

export { type ClaimTable, emptyClaims, getClaim, claimList } from "./claimStore.js"
export { claimsAt } from "./claimRebuild.js"
export { tableLoads, claimsTargeting, isTargeted, isOwner, liveTarget, unboundOf, oldestUnbound, acquisitionOrder, oldestAcquired, sweepCandidates, keepDeadlines, indexView } from "./claimQueries.js"

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
