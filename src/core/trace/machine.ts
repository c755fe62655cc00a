/**
 * The spawn-trace state machine (TRACE.md): one input line applied to an immutable pool state gives
 * the next state and the decisions, in order. `ocpool replay` and the property tests drive it; it
 * shares every rule with the plugin through the core modules it calls.
 *
 * `step` is pure: it never mutates the state it is given. Inside one step a local draft collects the
 * changes, and the new state is built from it at the end.
 */
import { HashMap } from "effect"
import { type Claim, isLive, capOf, updateClaim } from "../claims.js"
import { VARIANT_PATTERN, isPooledBase } from "../constants.js"
import {
  applyCool,
  clearOnSuccess,
  isCooling,
  mergePeer,
  planCool,
  type CoolPlan,
  type CoolReason,
  type CooldownTable
} from "../cooldown.js"
import { entriesFromJson, resolveMaxSlots, validateEntries, type Slot } from "../pool.js"
import { afterAbort, judgeClaim, type ReaperTiming, DEFAULT_TIMING } from "../reaper.js"
import { pickSlot, type Pass } from "../routing.js"
import { decideLimit, decideRetry, type SignalDecision } from "../signals.js"
import type { AbortOutcome, PeerCooling, TraceInput } from "./input.js"

export interface TraceState {
  /** `undefined` until the first `pool` line. */
  readonly slots: ReadonlyArray<Slot> | undefined
  /** In acquisition order. */
  readonly claims: ReadonlyArray<Claim>
  readonly cooldowns: CooldownTable
  /** Last recorded activity per session. */
  readonly activity: HashMap.HashMap<string, number>
  readonly reaped: number
  readonly lastAt: number | undefined
  /** The activity table is pruned when it grows past this size (see `pruneActivity`). */
  readonly activityPruneAt: number
}

const ACTIVITY_PRUNE_MIN = 1024

export const initialState: TraceState = {
  slots: undefined,
  claims: [],
  cooldowns: new Map(),
  activity: HashMap.empty(),
  reaped: 0,
  lastAt: undefined,
  activityPruneAt: ACTIVITY_PRUNE_MIN
}

/**
 * Silence runs from the later of a target's last activity and its claim's acquisition, and any
 * claim, present or future, was acquired no earlier than the oldest claim in the table. So an
 * activity time at or before that acquisition can never decide anything and is dropped; without this
 * a long trace would keep every session it ever saw. Amortised: it runs when the table doubles.
 */
const pruneActivity = (
  activity: HashMap.HashMap<string, number>,
  claims: ReadonlyArray<Claim>,
  pruneAt: number,
  pruneMin: number
): { readonly activity: HashMap.HashMap<string, number>; readonly pruneAt: number } => {
  if (HashMap.size(activity) <= (pruneMin === 0 ? 0 : pruneAt)) return { activity, pruneAt }
  let oldest = Number.POSITIVE_INFINITY
  for (const c of claims) if (c.acquiredAt < oldest) oldest = c.acquiredAt
  const kept = HashMap.filter(activity, (t) => t > oldest)
  return { activity: kept, pruneAt: Math.max(pruneMin, 2 * HashMap.size(kept)) }
}

export type ReleaseReason = "done" | "failed" | "signal" | "hung" | "unbound" | "gave_up"

export interface SlotView {
  readonly slot: number
  readonly model: string
  readonly weight: number
  readonly load: number
  readonly cap: number
  readonly cooling: { readonly until: number; readonly reason: CoolReason } | null
}

/** One output line. `route` also carries what it compared, for `--explain`; it is not printed. */
export type Decision =
  | {
      readonly type: "route"
      readonly at: number
      readonly claim: string
      readonly base: string
      readonly slot: number
      readonly model: string
      readonly agent: string
      readonly pass: Pass
      readonly loads: ReadonlyArray<number>
      readonly weights: ReadonlyArray<number>
      readonly cooling: ReadonlyArray<boolean>
    }
  | { readonly type: "refuse"; readonly at: number; readonly claim: string; readonly requested: string; readonly base: string }
  | {
      readonly type: "cool"
      readonly at: number
      readonly models: ReadonlyArray<string>
      readonly scope: "model" | "provider"
      readonly reason: CoolReason
      readonly until: number
      readonly strike: number
    }
  | { readonly type: "ignore"; readonly at: number; readonly reason: "context_limit" | "not_a_limit" }
  | { readonly type: "abort"; readonly at: number; readonly claim: string; readonly session: string; readonly ok: boolean }
  | { readonly type: "release"; readonly at: number; readonly claim: string; readonly cooled: boolean; readonly reason: ReleaseReason }
  | {
      readonly type: "status"
      readonly at: number
      readonly next: { readonly slot: number; readonly model: string; readonly pass: Pass }
      readonly slots: ReadonlyArray<SlotView>
      readonly reaped: number
    }

export type StepResult =
  | {
      readonly _tag: "Ok"
      readonly state: TraceState
      readonly decisions: ReadonlyArray<Decision>
      /** Pool validation warnings (stderr in replay). */
      readonly warnings: ReadonlyArray<string>
    }
  | { readonly _tag: "Invalid"; readonly message: string }

export interface MachineOptions {
  readonly timing?: ReaperTiming
  /** Smallest activity-table size that triggers a prune (default 1024); tests set it to 0 to prune every line. */
  readonly activityPruneMin?: number
}

/** Mutable only inside one `step` call. */
interface Draft {
  readonly at: number
  readonly slots: ReadonlyArray<Slot>
  readonly timing: ReaperTiming
  claims: ReadonlyArray<Claim>
  cooldowns: CooldownTable
  activity: HashMap.HashMap<string, number>
  reaped: number
  readonly out: Array<Decision>
}

const NO_WARNINGS: ReadonlyArray<string> = []

const invalid = (message: string): StepResult => ({ _tag: "Invalid", message })

const findClaim = (claims: ReadonlyArray<Claim>, key: string): Claim | undefined => {
  for (const c of claims) if (c.key === key) return c
  return undefined
}

const withoutClaim = (claims: ReadonlyArray<Claim>, key: string): ReadonlyArray<Claim> => claims.filter((c) => c.key !== key)

const withClaim = (claims: ReadonlyArray<Claim>, claim: Claim): ReadonlyArray<Claim> =>
  claims.map((c) => (c.key === claim.key ? claim : c))

const outcomeFor = (input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined }, key: string): boolean =>
  (input.aborts?.[key] ?? input.abort ?? "ok") === "ok"

const cooling = (d: Draft, model: string): boolean => isCooling(d.cooldowns.get(model), d.at)

const emitCool = (d: Draft, plan: CoolPlan): void => {
  d.out.push({ type: "cool", at: d.at, models: plan.models, scope: plan.scope, reason: plan.reason, until: plan.until, strike: plan.strike })
  d.cooldowns = applyCool(d.cooldowns, plan, d.at)
}

const release = (d: Draft, claim: Claim, reason: ReleaseReason): void => {
  d.claims = withoutClaim(d.claims, claim.key)
  if (reason === "hung" || reason === "unbound" || reason === "gave_up") d.reaped++
  d.out.push({ type: "release", at: d.at, claim: claim.key, cooled: cooling(d, claim.model), reason })
}

/** One abort attempt and what follows it (SPEC §7.8, §8.2). */
const attemptAbort = (d: Draft, claim: Claim, ok: boolean, origin: "signal" | "hang"): void => {
  d.out.push({ type: "abort", at: d.at, claim: claim.key, session: claim.targetSession ?? "", ok })
  const next = afterAbort(claim, ok, origin)
  switch (next._tag) {
    case "ReleaseSignal":
      return release(d, claim, "signal")
    case "ReleaseHung":
      if (!cooling(d, claim.model)) emitCool(d, planCool(d.cooldowns, [claim.model], "model", "hang", d.at, undefined))
      return release(d, claim, "hung")
    case "GiveUp":
      return release(d, claim, "gave_up")
    case "Keep":
      d.claims = withClaim(d.claims, next.claim)
      return
  }
}

/** A reaper sweep (SPEC §8.2; TRACE.md §2, §6). */
const sweep = (
  d: Draft,
  input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined },
  blocked: ReadonlyArray<string> | undefined,
  spinning: ReadonlyArray<string> | undefined
): void => {
  const attempted = new Set<string>()
  if (spinning !== undefined) {
    for (const key of spinning) {
      const c = findClaim(d.claims, key)
      if (c === undefined || c.targetSession === null || attempted.has(key)) continue
      attempted.add(key)
      attemptAbort(d, c, outcomeFor(input, key), "hang")
    }
  }
  const blockedSet = blocked === undefined || blocked.length === 0 ? undefined : new Set(blocked)
  const lastActivity = (session: string): number | undefined => {
    const o = HashMap.get(d.activity, session)
    return o._tag === "Some" ? o.value : undefined
  }
  // Each step below changes only the claim it visits, so the snapshot entry is current unless the
  // spinning pass above already handled it.
  const free = { now: d.at, blocked: false, lastActivity }
  const held = { now: d.at, blocked: true, lastActivity }
  for (const c of d.claims) {
    if (attempted.size > 0 && attempted.has(c.key)) continue
    const verdict = judgeClaim(c, blockedSet !== undefined && blockedSet.has(c.key) ? held : free, d.timing)
    switch (verdict._tag) {
      case "RetryAbort":
        attemptAbort(d, c, outcomeFor(input, c.key), c.abortOrigin ?? "hang")
        break
      case "Blocked":
        d.claims = withClaim(d.claims, updateClaim(c, { heartbeatAt: d.at }))
        break
      case "Unbound":
        release(d, c, "unbound")
        break
      case "Hung":
        attemptAbort(d, c, outcomeFor(input, c.key), "hang")
        break
      case "Young":
      case "Healthy":
        break
    }
  }
}

const liveTargetClaim = (d: Draft, session: string | undefined): Claim | undefined => {
  if (session === undefined) return undefined
  for (const c of d.claims) if (c.targetSession === session && isLive(c, d.at)) return c
  return undefined
}

/** Cool, then abort the pooled session and release on success (TRACE.md §3 line order). */
const applySignal = (
  d: Draft,
  decision: SignalDecision,
  target: Claim | undefined,
  input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined }
): void => {
  if (decision._tag === "Ignore") {
    d.out.push({ type: "ignore", at: d.at, reason: decision.reason })
    return
  }
  emitCool(d, decision.plan)
  if (target !== undefined) attemptAbort(d, target, outcomeFor(input, target.key), "signal")
}

const mergePeers = (table: CooldownTable, peers: ReadonlyArray<PeerCooling> | undefined, at: number): CooldownTable => {
  if (peers === undefined) return table
  let t = table
  for (const p of peers) t = mergePeer(t, p, at)
  return t
}

/** Loads, cooling flags and the pick for the current claims, cooldowns and peer load. */
const routeView = (
  slots: ReadonlyArray<Slot>,
  claims: ReadonlyArray<Claim>,
  cooldowns: CooldownTable,
  peers: Readonly<Record<string, number>> | undefined,
  at: number
) => {
  const n = slots.length
  const loads: Array<number> = new Array<number>(n)
  const weights: Array<number> = new Array<number>(n)
  const coolingFlags: Array<boolean> = new Array<boolean>(n)
  for (let i = 0; i < n; i++) {
    const s = slots[i]!
    let load = peers?.[s.model] ?? 0
    for (const c of claims) if (c.model === s.model && isLive(c, at)) load++
    loads[i] = load
    weights[i] = s.weight
    coolingFlags[i] = isCooling(cooldowns.get(s.model), at)
  }
  const pick = pickSlot({ weights, loads, cooling: coolingFlags })!
  return { loads, weights, cooling: coolingFlags, pick }
}

const finish = (state: TraceState, d: Draft, pruneMin: number): StepResult => {
  const pruned = pruneActivity(d.activity, d.claims, state.activityPruneAt, pruneMin)
  return {
    _tag: "Ok",
    state: {
      slots: state.slots,
      claims: d.claims,
      cooldowns: d.cooldowns,
      activity: pruned.activity,
      reaped: d.reaped,
      lastAt: d.at,
      activityPruneAt: pruned.pruneAt
    },
    decisions: d.out,
    warnings: NO_WARNINGS
  }
}

/** Applies one input line. */
export const step = (state: TraceState, input: TraceInput, options: MachineOptions = {}): StepResult => {
  const at = input.at
  if (state.lastAt !== undefined && at < state.lastAt) {
    return invalid(`"at" decreased: ${at} after ${state.lastAt}`)
  }
  if (input.type === "pool") {
    const max = resolveMaxSlots(input.maxSlots)
    const got = entriesFromJson({ slots: input.slots })
    if ("unusable" in got) return invalid(`pool line: ${got.unusable}`)
    const result = validateEntries(got.entries, max.maxSlots)
    const warnings = max.warning === undefined ? result.warnings : [max.warning, ...result.warnings]
    if (result._tag === "Unusable") return invalid(`pool line keeps no slot: ${[result.reason, ...warnings].join("; ")}`)
    return { _tag: "Ok", state: { ...state, slots: result.slots, lastAt: at }, decisions: [], warnings }
  }
  if (state.slots === undefined && (input.type === "spawn" || input.type === "status")) {
    return invalid(`${input.type} before the first pool line`)
  }
  const d: Draft = {
    at,
    slots: state.slots ?? [],
    timing: options.timing ?? DEFAULT_TIMING,
    claims: state.claims,
    cooldowns: state.cooldowns,
    activity: state.activity,
    reaped: state.reaped,
    out: []
  }
  switch (input.type) {
    case "spawn": {
      const variant = VARIANT_PATTERN.exec(input.base)
      if (variant !== null) {
        d.out.push({ type: "refuse", at, claim: input.claim, requested: input.base, base: variant[1]! })
        break
      }
      if (!isPooledBase(input.base)) break
      if (findClaim(d.claims, input.claim) !== undefined) d.claims = withoutClaim(d.claims, input.claim)
      d.cooldowns = mergePeers(d.cooldowns, input.peerCooling, at)
      sweep(d, input, input.blocked, undefined)
      const view = routeView(d.slots, d.claims, d.cooldowns, input.peers, at)
      const slot = d.slots[view.pick.position]!
      d.claims = [
        ...d.claims,
        {
          key: input.claim,
          base: input.base,
          slot: slot.index,
          model: slot.model,
          acquiredAt: at,
          heartbeatAt: at,
          ownerSession: input.session ?? null,
          targetSession: null,
          abortAttempts: 0,
          abortPending: false,
          abortOrigin: null
        }
      ]
      d.out.push({
        type: "route",
        at,
        claim: input.claim,
        base: input.base,
        slot: slot.index,
        model: slot.model,
        agent: `${input.base}-${slot.index}`,
        pass: view.pick.pass,
        loads: view.loads,
        weights: view.weights,
        cooling: view.cooling
      })
      break
    }
    case "bind": {
      const c = findClaim(d.claims, input.claim)
      if (c === undefined) break
      d.claims = withClaim(d.claims, input.activity ? updateClaim(c, { targetSession: input.session, heartbeatAt: at }) : updateClaim(c, { targetSession: input.session }))
      if (input.activity) d.activity = HashMap.set(d.activity, input.session, at)
      break
    }
    case "activity": {
      d.activity = HashMap.set(d.activity, input.session, at)
      for (let i = 0; i < d.claims.length; i++) {
        if (d.claims[i]!.targetSession !== input.session) continue
        d.claims = d.claims.map((c) => (c.targetSession === input.session ? updateClaim(c, { heartbeatAt: at }) : c))
        break
      }
      break
    }
    case "release": {
      const c = findClaim(d.claims, input.claim)
      if (c === undefined) break
      if (input.ok) d.cooldowns = clearOnSuccess(d.cooldowns, c.model, at)
      release(d, c, input.ok ? "done" : "failed")
      break
    }
    case "limit": {
      const target = liveTargetClaim(d, input.session)
      const decision = decideLimit(
        d.slots,
        d.cooldowns,
        { text: input.text, status: input.status, headers: input.headers, model: input.model ?? target?.model, provider: input.provider },
        at
      )
      applySignal(d, decision, target, input)
      break
    }
    case "retry": {
      const target = liveTargetClaim(d, input.session)
      const decision = decideRetry(
        d.slots,
        d.cooldowns,
        { message: input.message, next: input.next, provider: input.provider, model: target?.model, pooled: target !== undefined },
        at
      )
      applySignal(d, decision, target, input)
      break
    }
    case "sweep":
      sweep(d, input, input.blocked, input.spinning)
      break
    case "status": {
      const table = mergePeers(d.cooldowns, input.peerCooling, at)
      const view = routeView(d.slots, d.claims, table, input.peers, at)
      const next = d.slots[view.pick.position]!
      d.out.push({
        type: "status",
        at,
        next: { slot: next.index, model: next.model, pass: view.pick.pass },
        slots: d.slots.map((s, i) => {
          const rec = table.get(s.model)
          return {
            slot: s.index,
            model: s.model,
            weight: s.weight,
            load: view.loads[i]!,
            cap: capOf(s.weight),
            cooling: rec !== undefined && isCooling(rec, at) ? { until: rec.until, reason: rec.reason } : null
          }
        }),
        reaped: d.reaped
      })
      break
    }
  }
  return finish(state, d, options.activityPruneMin ?? ACTIVITY_PRUNE_MIN)
}
