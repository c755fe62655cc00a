/**
 * The claim table's store (claimTable.ts): every claim id's (version, claim) history in one shared
 * store, and a table as a version of it. Reading any version is cheap; the indexes (claimIndex.ts)
 * describe the newest version only.
 */
import type { Claim } from "../pool/claims.js"
import type { ReaperTiming } from "../pool/reaper.js"

interface Rev {
  readonly v: number
  /** `undefined`: absent at this version. */
  readonly c: Claim | undefined
  /** Acquisition sequence number of `c`. */
  readonly q: number
}

/** One claim id in a store: its history, and its place in the indexes (newest version only). */
export interface Entry {
  readonly key: string
  /** The first revision, inline (most claim ids are written once or twice): version, claim, seq. */
  readonly v0: number
  readonly c0: Claim | undefined
  readonly q0: number
  /** The later revisions, versions ascending. */
  revs: Array<Rev> | undefined
  cur: Claim | undefined
  seq: number
  /** Position of its heartbeat in the queue (absolute), when counted as live. */
  hb: number
  live: boolean
  /** Its position in the deadline heap, −1 when it has none; its deadline key there: due when
   * `at > dk` (`ds`, strict) or `at >= dk`. */
  hpos: number
  dk: number
  ds: boolean
  /** Last candidate list it was put on (dedupe). */
  mark: number
}

export interface Store {
  readonly entries: Map<string, Entry>
  latest: number
  /** Revisions held, all entries together. */
  held: number
  nextSeq: number
  /** Entries in acquisition order with the seq they were added at (a position is dead once its entry moved on). */
  order: Array<Entry>
  orderSeq: Array<number>
  /** Unbound entries in acquisition order, with the seq they were queued at. */
  /** Whether the owner indexes below (`unbound…`, `byOwner`, `unboundByOwner`) are kept: once asked for. */
  owners: boolean
  unbound: Array<Entry>
  unboundSeq: Array<number>
  unboundHead: number
  /** Live claims per model. */
  readonly live: Map<string, number>
  /** Heartbeats in time order: times and entries, `hbBase` the absolute position of index 0. */
  hbAt: Array<number>
  hbEntry: Array<Entry>
  hbHead: number
  hbBase: number
  /** A heartbeat earlier than the queue's last was written: the queue is rebuilt before its next use. */
  hbUnsorted: boolean
  /** Entries by deadline key (a binary min-heap, each entry at most once, at `hpos`). */
  heap: Array<Entry>
  readonly owed: Set<Entry>
  readonly byTarget: Map<string, Set<Entry>>
  readonly byOwner: Map<string, Set<Entry>>
  /** The unbound claims of each owner session. */
  readonly unboundByOwner: Map<string, Set<Entry>>
  /** The latest time the heartbeat queue was advanced to. */
  at: number
  /** The timing the heap's keys were computed with. */
  timing: ReaperTiming | undefined
  marks: number
}

export interface ClaimTable {
  /** Replaced only by a store holding the same claims at this table's version (re-homing). */
  store: Store
  version: number
  readonly size: number
  /** The claims in acquisition order, built when first asked for. */
  list: ReadonlyArray<Claim> | undefined
}

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
