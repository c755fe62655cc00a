/**
 * The claim table's representation (claimTable.ts), shared by its parts: every claim id's (version,
 * claim) history in one shared store, its place in the indexes, and a table as a version of the store.
 * Types only.
 */
import type { Claim } from "../pool/claims.js"
import type { ReaperTiming } from "../pool/reaper.js"

export interface Rev {
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
