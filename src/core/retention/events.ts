/** Which events `sweep events` prunes (SPEC §11.4), and the id guard of §11.2. */
import { ID_GUARD_SAMPLES, ID_GUARD_SLACK_MS } from "../constants.js"
import { decodeIdTime } from "./ids.js"

export interface AggregateSession {
  readonly workspaceId: string | null
  readonly timeCreated: number
  readonly timeUpdated: number
}

export interface AggregateFacts {
  /** Session rows by id (an event's `aggregate_id` is its session's id). */
  readonly sessions: ReadonlyMap<string, AggregateSession>
  /** Aggregates whose `event_sequence.owner_id` is set: in sync, kept even when the session row is gone. */
  readonly synced: ReadonlySet<string>
}

/** One scanned row: `[rowid, id, aggregate_id, octet_length(data)]`. */
export type EventRow = readonly [unknown, string, string, number]

/** Candidates as parallel arrays (a million objects would mostly feed the garbage collector). */
export interface Candidates {
  readonly ids: Array<string>
  readonly aggregates: Array<string>
  readonly times: Array<number>
  readonly bytes: Array<number>
}

export const noCandidates = (): Candidates => ({ ids: [], aggregates: [], times: [], bytes: [] })

/** Kept: in sync, in a workspace, or its session was updated inside the grace window. */
export const isProtectedAggregate = (aggregate: string, facts: AggregateFacts, graceCutoff: number): boolean => {
  if (facts.synced.has(aggregate)) return true
  const session = facts.sessions.get(aggregate)
  return session !== undefined && (session.workspaceId !== null || session.timeUpdated >= graceCutoff)
}

/** The newest candidate still held when only the oldest ones are kept in memory. */
export interface Ceiling {
  readonly time: number
  readonly id: string
}

export interface PageScan {
  /** Candidates of the page that are not newer than the ceiling. */
  readonly candidates: Candidates
  /** Every candidate of the page, ceiling or not, with their data bytes and sessions. */
  readonly qualified: number
  readonly qualifiedBytes: number
  readonly qualifiedAggregates: ReadonlyArray<string>
}

export type Verdicts = Map<string, { readonly kept: boolean; readonly aggregate: string }>

/**
 * The candidates in one page of scanned rows: a recognisable id decoded to before the cutoff, on an
 * aggregate that is not protected. Protection is decided once per aggregate (`verdicts` remembers it
 * across pages and rounds, with the aggregate's string). Rows newer than `ceiling` are counted but
 * not returned.
 */
export const pageCandidates = (
  rows: ReadonlyArray<EventRow>,
  facts: AggregateFacts,
  window: { readonly now: number; readonly cutoff: number; readonly graceCutoff: number },
  verdicts: Verdicts = new Map(),
  ceiling?: Ceiling
): PageScan => {
  const out = noCandidates()
  let qualified = 0
  let qualifiedBytes = 0
  const aggregates = new Set<string>()
  for (const [, id, aggregate, bytes] of rows) {
    const time = decodeIdTime(id, window.now)
    if (time === undefined || !(time < window.cutoff)) continue
    let verdict = verdicts.get(aggregate)
    if (verdict === undefined) {
      verdict = { kept: isProtectedAggregate(aggregate, facts, window.graceCutoff), aggregate }
      verdicts.set(aggregate, verdict)
    }
    if (verdict.kept) continue
    qualified++
    qualifiedBytes += bytes
    aggregates.add(verdict.aggregate)
    if (ceiling !== undefined && (time > ceiling.time || (time === ceiling.time && id > ceiling.id))) continue
    out.ids.push(id)
    // One string per session, not one per event: a million candidates share a few thousand.
    out.aggregates.push(verdict.aggregate)
    out.times.push(time)
    out.bytes.push(bytes)
  }
  return { candidates: out, qualified, qualifiedBytes, qualifiedAggregates: [...aggregates] }
}

/** The oldest `cap` candidates, in deletion order (time, then id). */
export const oldest = (c: Candidates, cap: number): Candidates => {
  const order = candidateOrder(c).slice(0, cap)
  return {
    ids: order.map((i) => c.ids[i]!),
    aggregates: order.map((i) => c.aggregates[i]!),
    times: order.map((i) => c.times[i]!),
    bytes: order.map((i) => c.bytes[i]!)
  }
}

/** The last of candidates already in deletion order: nothing newer needs to be held. */
export const ceilingOf = (ordered: Candidates): Ceiling | undefined => {
  const last = ordered.ids.length - 1
  return last < 0 ? undefined : { time: ordered.times[last]!, id: ordered.ids[last]! }
}

/** Appends `page` to `into` (the one mutating helper: the sweep grows its candidate list page by page). */
export const appendCandidates = (into: Candidates, page: Candidates): void => {
  for (let i = 0; i < page.ids.length; i++) {
    into.ids.push(page.ids[i]!)
    into.aggregates.push(page.aggregates[i]!)
    into.times.push(page.times[i]!)
    into.bytes.push(page.bytes[i]!)
  }
}

/**
 * The deletion order: indices into `c`, oldest first by decoded time, then id. opencode writes events
 * nearly in time order, so the scan order usually is the answer already and no sort runs.
 */
export const candidateOrder = (c: Candidates): Array<number> => {
  const order = Array.from({ length: c.ids.length }, (_, i) => i)
  const before = (a: number, b: number): number => c.times[a]! - c.times[b]! || (c.ids[a]! < c.ids[b]! ? -1 : c.ids[a]! > c.ids[b]! ? 1 : 0)
  for (let i = 1; i < order.length; i++) if (before(i - 1, i) > 0) return order.sort(before)
  return order
}

export interface GuardFailure {
  readonly id: string
  readonly decoded: number
  readonly sessionCreated: number
}

/**
 * The id guard: of the first ID_GUARD_SAMPLES candidates that have a session row, none may decode to
 * more than 24 h before its session was created. A failure means the id encoding is not the one this
 * tool understands, and nothing may be deleted.
 */
export const idGuard = (ordered: Candidates, sessions: ReadonlyMap<string, AggregateSession>): GuardFailure | undefined => {
  let checked = 0
  for (let i = 0; i < ordered.ids.length && checked < ID_GUARD_SAMPLES; i++) {
    const session = sessions.get(ordered.aggregates[i]!)
    if (session === undefined) continue
    checked++
    if (ordered.times[i]! < session.timeCreated - ID_GUARD_SLACK_MS) return { id: ordered.ids[i]!, decoded: ordered.times[i]!, sessionCreated: session.timeCreated }
  }
  return undefined
}
