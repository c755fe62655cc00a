/**
 * The claim steps several features share (SPEC §8.2): what a sweep needs first (back-fill binds for
 * old unbound claims, the claims held blocked by a pending question), a sweep line, and a task's end.
 * No handler owns them: the spawn, the sweep, the spin detector, signals, idles and the context map's
 * runs all take these steps.
 */
import type { Claim } from "../pool/claims.js"
import { judgeClaim, missedFirstToken } from "../pool/reaper.js"
import { wholeSeconds } from "../time.js"
import { logAbout } from "./events.js"
import { blockedSessions, withoutBusy } from "../session/tree.js"
import { acquisitionOrder, claimList, claimsTargeting, getClaim, isTargeted, oldestUnbound } from "../trace/claimTable.js"
import { isRefreshSession } from "./refreshSessions.js"
import { CHILD_MEMORY_MS, CHILD_SLACK_MS } from "./state.js"
import type { Turn } from "./turn.js"

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

/**
 * Issue 35: the bound claims whose child streamed no first token within `firstTokenMs` (core/pool/reaper.ts
 * `missedFirstToken`), in acquisition order, each logged once (the sweep's abort takes it out of the next
 * verdict). Claims held by a person wait.
 */
const stalledClaims = (turn: Turn, blocked: ReadonlyArray<string> | undefined): ReadonlyArray<string> | undefined => {
  const firstTokenMs = turn.state.timing.firstTokenMs
  if (firstTokenMs === undefined) return undefined
  const held = blocked === undefined ? undefined : new Set(blocked)
  let out: Array<string> | undefined
  for (const c of claimList(turn.machine.table)) {
    if (c.targetSession === null || !missedFirstToken(c, turn.state.firstTokens.get(c.targetSession) === true, held?.has(c.key) === true, turn.at, firstTokenMs)) continue
    turn.log("warn", `no first token session=${c.targetSession} model=${c.model} after=${wholeSeconds(turn.at - c.acquiredAt)} (firstTokenMs ${wholeSeconds(firstTokenMs)})`, logAbout(c.key, c.targetSession, c.model))
    ;(out ??= []).push(c.key)
  }
  return out
}

/** A sweep line (`spinning`: claims the spin detector hands it; a timer sweep adds the `stalled` ones, issue 35). */
export const sweepLine = (turn: Turn, spinning?: ReadonlyArray<string>, timer = false): void => {
  const prepared = prepareSweep(turn)
  const stalled = timer ? stalledClaims(turn, prepared.blocked) : undefined
  turn.apply({
    at: turn.at,
    type: "sweep",
    ...prepared,
    ...(spinning === undefined ? {} : { spinning }),
    ...(stalled === undefined ? {} : { stalled }),
    abort: "pending",
    ...turn.shared()
  })
  turn.set("lastSweepAt", turn.at)
}

/** A task's end: a signalled claim's end is not a success. */
export const endTask = (turn: Turn, key: string, ok: boolean): void => {
  const c = getClaim(turn.machine.table, key)
  if (c === undefined) return
  const success = ok && !turn.state.signalled.has(key)
  if (c.targetSession !== null) turn.state = withoutBusy(turn.state, c.targetSession)
  turn.apply(success ? { at: turn.at, type: "release", claim: key, ok: true, ...turn.shared() } : { at: turn.at, type: "release", claim: key, ok: false })
}
