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
 * This module is the table's one entry, re-exporting its parts: the representation (claimTypes.ts), the
 * store with its writes, rebuilding and indexes (claimStore.ts) and the queries (claimQueries.ts). The
 * parts share one mutable representation (`Entry`, `Store`); the store keeps its invariants (an
 * entry's heap position, heartbeat slot and index memberships move together), and only the parts touch it.
 */
export { type ClaimTable, emptyClaims, getClaim, claimList, claimsAt, addClaim, setClaim, removeClaim } from "./claimStore.js"
export { tableLoads, claimsTargeting, isTargeted, isOwner, liveTarget, unboundOf, oldestUnbound, acquisitionOrder, oldestAcquired, sweepCandidates, keepDeadlines, indexView } from "./claimQueries.js"
