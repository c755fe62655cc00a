/**
 * One status (issue 20 item 3): the load of every slot, its cooling and the next pick, computed by one
 * function for the trace's `status` decision, the in-chat `pool_status` and `ocpool status`, so the
 * three always name the same loads and the same next slot. And the one load counter: live claims by
 * model (SPEC §6.1), whatever holds them. Pure.
 */
import { capOf, isLive, type Claim } from "./claims.js"
import { isCooling, type Cooldown, type CooldownTable } from "./cooldown.js"
import type { Slot } from "./pool.js"
import { pickSlot, type Pass } from "./routing.js"

/** Live claims by model: the one load counter over claim lists (a model in two slots counts in both). */
export const liveLoadByModel = (claims: Iterable<Pick<Claim, "model" | "heartbeatAt">>, now: number, into: Map<string, number> = new Map()): Map<string, number> => {
  for (const c of claims) if (isLive(c, now)) into.set(c.model, (into.get(c.model) ?? 0) + 1)
  return into
}

/** The live claims of a list, in its order (the one liveness test: a heartbeat within CLAIM_TTL_MS). */
export const liveClaims = <C extends Pick<Claim, "heartbeatAt">>(claims: ReadonlyArray<C>, now: number): ReadonlyArray<C> => claims.filter((c) => isLive(c, now))

/** Live claims by model over every process's list (the peers' load, a fleet's). */
export const liveLoadOf = (processes: Iterable<{ readonly claims: Iterable<Pick<Claim, "model" | "heartbeatAt">> }>, now: number): Map<string, number> => {
  const into = new Map<string, number>()
  for (const p of processes) liveLoadByModel(p.claims, now, into)
  return into
}

/** Per-slot loads from a count by model (own claims) plus the peers' count by model. */
export const slotLoadsOf = (slots: ReadonlyArray<Slot>, own: (model: string) => number, peers?: Readonly<Record<string, number>>): Array<number> =>
  slots.map((s) => (peers?.[s.model] ?? 0) + own(s.model))

export interface SlotState {
  readonly slot: number
  readonly model: string
  readonly weight: number
  readonly load: number
  readonly cap: number
  /** The live cooldown record of the slot's model, if any. */
  readonly cooling: Cooldown | null
}

export interface SlotStatusView {
  readonly slots: ReadonlyArray<SlotState>
  /** The slot the next spawn would take (SPEC §6.1), or null without slots. */
  readonly next: { readonly slot: number; readonly model: string; readonly pass: Pass } | null
}

/** Every slot's load, cap and cooling at `now`, and the next pick over them. */
export const slotStatus = (slots: ReadonlyArray<Slot>, loads: ReadonlyArray<number>, cooldowns: CooldownTable, now: number): SlotStatusView => {
  const states = slots.map((s, i): SlotState => {
    const rec = cooldowns.get(s.model)
    return { slot: s.index, model: s.model, weight: s.weight, load: loads[i] ?? 0, cap: capOf(s.weight), cooling: rec !== undefined && isCooling(rec, now) ? rec : null }
  })
  const pick = pickSlot({ weights: slots.map((s) => s.weight), loads: states.map((s) => s.load), cooling: states.map((s) => s.cooling !== null) })
  const at = pick === undefined ? undefined : slots[pick.position]
  return { slots: states, next: pick === undefined || at === undefined ? null : { slot: at.index, model: at.model, pass: pick.pass } }
}
