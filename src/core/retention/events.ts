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

export interface Candidate {
  readonly id: string
  readonly aggregate: string
  readonly time: number
}

/** Kept: in sync, in a workspace, or its session was updated inside the grace window. */
export const isProtectedAggregate = (aggregate: string, facts: AggregateFacts, graceCutoff: number): boolean => {
  if (facts.synced.has(aggregate)) return true
  const session = facts.sessions.get(aggregate)
  return session !== undefined && (session.workspaceId !== null || session.timeUpdated >= graceCutoff)
}

/**
 * The candidates in one page of `[id, aggregate_id]` rows: a recognisable id decoded to before the
 * cutoff, on an aggregate that is not protected. Protection is decided once per aggregate.
 */
export const pageCandidates = (
  rows: ReadonlyArray<readonly [string, string]>,
  facts: AggregateFacts,
  window: { readonly now: number; readonly cutoff: number; readonly graceCutoff: number },
  verdicts: Map<string, boolean> = new Map()
): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const [id, aggregate] of rows) {
    const time = decodeIdTime(id, window.now)
    if (time === undefined || !(time < window.cutoff)) continue
    let kept = verdicts.get(aggregate)
    if (kept === undefined) {
      kept = isProtectedAggregate(aggregate, facts, window.graceCutoff)
      verdicts.set(aggregate, kept)
    }
    if (!kept) out.push({ id, aggregate, time })
  }
  return out
}

/** Oldest first by decoded time, then id. Rows arrive nearly in this order, which the sort exploits. */
export const byTimeThenId = (a: Candidate, b: Candidate): number => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

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
export const idGuard = (ordered: ReadonlyArray<Candidate>, sessions: ReadonlyMap<string, AggregateSession>): GuardFailure | undefined => {
  let checked = 0
  for (const c of ordered) {
    if (checked >= ID_GUARD_SAMPLES) break
    const session = sessions.get(c.aggregate)
    if (session === undefined) continue
    checked++
    if (c.time < session.timeCreated - ID_GUARD_SLACK_MS) return { id: c.id, decoded: c.time, sessionCreated: session.timeCreated }
  }
  return undefined
}
