/**
 * What one engine step writes to the shared state: its claims when they changed, the cooldown records
 * it made or dropped, the quota record the response headers stated (throttled: core/state/quotaMemo.ts),
 * the fallback records of the switches it decided and of the episode that ended.
 */
import { effectsOf } from "../../core/engine/effects.js"
import type { Applied } from "../../core/engine/step.js"
import { quotaStep, type QuotaMemo } from "../../core/state/quotaMemo.js"
import type { Commit } from "../../services/state/SharedState.js"

export const commitOf = (out: Applied, now: number, quota: QuotaMemo): { readonly commit: Commit; readonly quotaWritten: QuotaMemo } => {
  const q = quotaStep(quota, out.observed, now)
  const switches = effectsOf(out, "Switch")
  return {
    commit: {
      claims: out.publish ? { claims: out.state.machine.claims, reaped: out.state.machine.reaped } : undefined,
      cool: out.cool,
      uncool: out.uncool,
      quota: q.write === undefined ? undefined : [q.write],
      fallbacks: switches.length === 0 ? undefined : switches.map(({ order: sw }) => ({ session: sw.session, original: sw.original, active: sw.to, until: sw.until, at: now })),
      endFallbacks: out.ended === undefined ? undefined : [out.ended]
    },
    quotaWritten: q.memo
  }
}
