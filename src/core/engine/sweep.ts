/**
 * The reaper's side of the engine (SPEC §8.2): a sweep line with what it needs first (back-fill binds
 * for old unbound claims, the claims held blocked by a pending question), and the outcome of an abort
 * the sweep (or a signal) requested. Both read shared state: a sweep releases and cools.
 */
import type { Claim } from "../claims.js"
import { judgeClaim } from "../reaper.js"
import { blockedSessions } from "../session/tree.js"
import { acquisitionOrder, claimsTargeting, getClaim, isTargeted, oldestUnbound } from "../trace/claimTable.js"
import type { TraceInput } from "../trace/input.js"
import { CHILD_MEMORY_MS, CHILD_SLACK_MS, forgetQuietSessions } from "./state.js"
import { NONE, TRANSACT, type Handlers, type Turn } from "./turn.js"
import { isRefreshSession } from "./context.js"

/** Back-fill (SPEC §8.2 step 4): the newest child of the owner not targeted yet, created around the claim. */
const backfill = (turn: Turn, c: Claim): string | undefined => {
  if (c.ownerSession === null) return undefined
  const ring = turn.state.children.get(c.ownerSession) ?? []
  for (let i = ring.length - 1; i >= 0; i--) {
    const child = ring[i]!
    if (turn.at - child.createdAt > CHILD_MEMORY_MS) break
    if (child.createdAt < c.acquiredAt - CHILD_SLACK_MS) continue
    if (isTargeted(turn.machine.table, child.id)) continue
    return child.id
  }
  return undefined
}

/** What a sweep needs first: back-fill binds for old unbound claims, then the claims found blocked. */
export const prepareSweep = (turn: Turn): { readonly blocked?: ReadonlyArray<string> } => {
  // the claims a sweep would release as unbound: unbound ones past the minimum age, oldest first
  const never = { now: turn.at, blocked: false, lastActivity: () => undefined }
  const timing = turn.machine.timing ?? turn.state.timing
  const unbound = oldestUnbound(turn.machine.table, (c) => judgeClaim(c, never, timing)._tag !== "Young")
  for (const c of unbound) {
    if (judgeClaim(c, never, timing)._tag !== "Unbound") continue
    const child = backfill(turn, c)
    if (child === undefined) continue
    turn.apply({ at: turn.at, type: "bind", claim: c.key, session: child, activity: false })
  }
  // the claims whose target has a question or permission pending in its tree, in acquisition order
  const held: Array<Claim> = []
  // a refresh run's ask is seen by nobody (it never notifies): it holds nothing, and silence reaps the run
  for (const s of blockedSessions(turn.state)) {
    if (isRefreshSession(turn.state, s)) continue
    for (const c of claimsTargeting(turn.machine.table, s)) held.push(c)
  }
  return held.length > 0 ? { blocked: acquisitionOrder(turn.machine.table, held) } : {}
}

/** A sweep line (`spinning`: claims the spin detector hands it). */
export const sweepLine = (turn: Turn, spinning?: ReadonlyArray<string>): void => {
  const prepared = prepareSweep(turn)
  turn.apply({ at: turn.at, type: "sweep", ...prepared, ...(spinning === undefined ? {} : { spinning }), abort: "pending", ...turn.shared() })
  turn.set("lastSweepAt", turn.at)
}

export const sweepHandlers: Handlers<"sweep" | "aborted"> = {
  sweep: {
    needs: () => TRANSACT,
    run: (turn) => {
      sweepLine(turn)
      turn.state = forgetQuietSessions(turn.state, turn.at)
    }
  },
  aborted: {
    // only an abort still in flight has an outcome to apply: the line releases or cools
    needs: (state, event) => (getClaim(state.machine.table, event.claim)?.abortInFlight === true ? TRANSACT : NONE),
    run: (turn, event) => {
      const c = getClaim(turn.machine.table, event.claim)
      if (c === undefined || !c.abortInFlight) return
      turn.log("debug", `abort of ${c.targetSession ?? "-"}: ${event.ok ? "confirmed" : event.reason}`)
      turn.abortReason = event.reason
      turn.apply({ at: turn.at, type: "aborted", claim: event.claim, ok: event.ok, ...turn.shared() } as TraceInput)
    }
  }
}
