/**
 * The shared pool state one decision reads (SPEC §5): the other processes' claims and the cooldown
 * table every process writes, read under the pool lock by the shell. Turned here into what a trace
 * line carries: `peers` (live load by model) and `peerCooling` (records this process does not hold yet,
 * and cooldowns ended by hand that it still holds).
 */
import { isCleared, isCooling, type CooldownTable } from "../pool/cooldown.js"
import { liveLoadByModel } from "../pool/slotStatus.js"
import type { ProcessSnapshot } from "../status.js"
import type { PeerCooling } from "../trace/input.js"

export interface PoolSnapshot {
  /** Empty when the decision does not route (see `needsOf`). */
  readonly peers: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
}

/** Live load by model over the other processes' claims; `undefined` when there is none. */
export const peerLoad = (peers: ReadonlyArray<ProcessSnapshot>, now: number): Record<string, number> | undefined => {
  const byModel = new Map<string, number>()
  for (const p of peers) liveLoadByModel(p.claims, now, byModel)
  return byModel.size === 0 ? undefined : Object.fromEntries(byModel)
}

/**
 * The shared records that would change this process's table (TRACE.md §6 peer merge): live, and ending
 * later than what it holds for that model. Records it wrote itself read back equal and are left out.
 */
export const peerCooling = (own: CooldownTable, shared: CooldownTable, now: number): ReadonlyArray<PeerCooling> | undefined => {
  let out: Array<PeerCooling> | undefined
  for (const r of shared.values()) {
    if (isCleared(r)) {
      // a cooldown ended by hand: carried while this process's own record of it, begun before, still cools
      const mine = own.get(r.model)
      if (!isCooling(mine, now) || mine!.since >= r.until) continue
      out ??= []
      out.push(r.strikes > 0 ? { model: r.model, until: r.until, reason: r.reason, strikes: r.strikes, cleared: true } : { model: r.model, until: r.until, reason: r.reason, cleared: true })
      continue
    }
    if (!isCooling(r, now)) continue
    const mine = own.get(r.model)
    if (isCooling(mine, now) && mine!.until >= r.until) continue
    out ??= []
    out.push(r.strikes > 0 ? { model: r.model, until: r.until, reason: r.reason, strikes: r.strikes } : { model: r.model, until: r.until, reason: r.reason })
  }
  return out
}
