/**
 * The changes one `step` collects before it builds the next state (TRACE.md §2–§3, §6): releases,
 * aborts, cooling, sweeps and signals, each appending its decisions in order. A draft is created and
 * mutated inside one step only, so `step` stays pure.
 */
import { type AbortOrigin, type Claim, updateClaim } from "../pool/claims.js"
import { applyCool, type CooldownTable, type CoolPlan, isCooling, mergePeer, planCool, type SignalDecision } from "../pool/cooldown.js"
import type { Slot } from "../pool/pool.js"
import { afterAbort, firstTokenCools, judgeClaim, type ReaperTiming } from "../pool/reaper.js"
import { pickSlot } from "../pool/routing.js"
import { getActivity, type ActivityTable } from "./activity.js"
import type { Decision, ReleaseReason } from "./decision.js"
import { getClaim, keepDeadlines, removeClaim, setClaim, sweepCandidates, tableLoads, type ClaimTable } from "./claimTable.js"
import type { AbortOutcome, PeerCooling } from "./input.js"

/** Mutable only inside one `step` call. */
export interface Draft {
  readonly at: number
  readonly slots: ReadonlyArray<Slot>
  readonly timing: ReaperTiming
  /** Readied for this line's time (`claimsAt`) before the step reads or writes it. */
  claims: ClaimTable
  cooldowns: CooldownTable
  activity: ActivityTable
  reaped: number
  /** Model → its first-token misses in a row (issue 35); replaced, never changed in place. */
  firstTokenMisses: ReadonlyMap<string, number>
  /** The decisions of this step, in order (allocated on the first: most lines decide nothing). */
  out: Array<Decision> | undefined
  /** Aborts requested on this step whose outcome arrives later (an `aborted` line). */
  requests: Array<AbortRequest> | undefined
}

/** Appends a decision to the step's output. */
export const emit = (d: Draft, decision: Decision): void => {
  if (d.out === undefined) d.out = [decision]
  else d.out.push(decision)
}

export interface AbortRequest {
  readonly claim: string
  readonly session: string
}


export const findClaim = (claims: ClaimTable, key: string): Claim | undefined => getClaim(claims, key)

export const withoutClaim = (claims: ClaimTable, key: string): ClaimTable => removeClaim(claims, key)

export const withClaim = (claims: ClaimTable, claim: Claim): ClaimTable => setClaim(claims, claim)

export const outcomeFor = (input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined }, key: string): AbortOutcome =>
  input.aborts?.[key] ?? input.abort ?? "ok"

export const cooling = (d: Draft, model: string): boolean => isCooling(d.cooldowns.get(model), d.at)

export const emitCool = (d: Draft, plan: CoolPlan): void => {
  emit(d, { type: "cool", at: d.at, models: plan.models, scope: plan.scope, reason: plan.reason, until: plan.until, strike: plan.strike })
  d.cooldowns = applyCool(d.cooldowns, plan, d.at)
}

export const release = (d: Draft, claim: Claim, reason: ReleaseReason): void => {
  d.claims = withoutClaim(d.claims, claim.key)
  if (reason === "hung" || reason === "unbound" || reason === "gave_up") d.reaped++
  emit(d, { type: "release", at: d.at, claim: claim.key, cooled: cooling(d, claim.model), reason })
}

/**
 * An abort request on a claim (SPEC §7.8, §8.2, TRACE.md §6). A claim whose abort is in flight is not
 * attempted again: the request only re-originates it. A `pending` outcome puts the claim in flight; the
 * outcome settles it later (`settleAbort`). `ok`/`fail` settle it at once.
 */
export const attemptAbort = (d: Draft, claim: Claim, outcome: AbortOutcome, origin: AbortOrigin): void => {
  if (claim.abortInFlight) {
    // a spin and a hang end alike (released `hung`): the first request's origin stays
    if (claim.abortOrigin !== origin && !(isHangLike(claim.abortOrigin) && isHangLike(origin))) d.claims = withClaim(d.claims, updateClaim(claim, { abortOrigin: origin }))
    return
  }
  if (outcome === "pending") {
    d.claims = withClaim(d.claims, updateClaim(claim, { abortInFlight: true, abortOrigin: origin }))
    d.requests ??= []
    d.requests.push({ claim: claim.key, session: claim.targetSession ?? "" })
    return
  }
  settleAbort(d, claim, outcome === "ok", origin)
}

const isHangLike = (o: AbortOrigin | null): boolean => o === "hang" || o === "spin"

/** An abort's outcome and what follows it: `origin` is the cause of the most recent request. */
export const settleAbort = (d: Draft, claim: Claim, ok: boolean, origin: AbortOrigin): void => {
  emit(d, { type: "abort", at: d.at, claim: claim.key, session: claim.targetSession ?? "", ok })
  if (!ok && claim.endedInFlight) return release(d, claim, "failed")
  const next = afterAbort(claim, ok, origin)
  switch (next._tag) {
    case "ReleaseSignal":
      return release(d, claim, "signal")
    case "ReleaseHung":
      if (!cooling(d, claim.model)) emitCool(d, planCool(d.cooldowns, [claim.model], "model", "hang", d.at, undefined))
      return release(d, claim, "hung")
    case "ReleaseFirstToken": {
      // the second miss in a row cools the model (unless it already cools); the count starts again after
      const before = d.firstTokenMisses.get(claim.model) ?? 0
      const cools = firstTokenCools(before)
      if (cools && !cooling(d, claim.model)) emitCool(d, planCool(d.cooldowns, [claim.model], "model", "hang", d.at, undefined))
      setMisses(d, claim.model, cools ? 0 : before + 1)
      return release(d, claim, "hung")
    }
    case "GiveUp":
      return release(d, claim, "gave_up")
    case "Keep":
      d.claims = withClaim(d.claims, updateClaim(next.claim, { abortInFlight: false, endedInFlight: false }))
      return
  }
}

/** A model's first-token misses in a row (0 forgets it). */
export const setMisses = (d: Draft, model: string, n: number): void => {
  if ((d.firstTokenMisses.get(model) ?? 0) === n) return
  const next = new Map(d.firstTokenMisses)
  if (n === 0) next.delete(model)
  else next.set(model, n)
  d.firstTokenMisses = next
}

const NO_KEYS: ReadonlySet<string> & Set<string> = new Set<string>()

/** A reaper sweep (SPEC §8.2; TRACE.md §2, §6). `stalled`: claims with no first token in time (issue 35), after `spinning`. */
export const sweep = (
  d: Draft,
  input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined },
  blocked: ReadonlyArray<string> | undefined,
  spinning: ReadonlyArray<string> | undefined,
  stalled?: ReadonlyArray<string> | undefined
): void => {
  const attempted = (spinning === undefined || spinning.length === 0) && (stalled === undefined || stalled.length === 0) ? NO_KEYS : new Set<string>()
  if (spinning !== undefined) {
    for (const key of spinning) {
      const c = findClaim(d.claims, key)
      if (c === undefined || c.targetSession === null || attempted.has(key)) continue
      attempted.add(key)
      attemptAbort(d, c, outcomeFor(input, key), "spin")
    }
  }
  if (stalled !== undefined) {
    for (const key of stalled) {
      const c = findClaim(d.claims, key)
      // an abort already owed or in flight keeps its own origin (a signal's or a hang's wins)
      if (c === undefined || c.targetSession === null || c.abortPending || c.abortInFlight || attempted.has(key)) continue
      attempted.add(key)
      attemptAbort(d, c, outcomeFor(input, key), "first_token")
    }
  }
  const blockedSet = blocked === undefined || blocked.length === 0 ? undefined : new Set(blocked)
  const activity = d.activity
  const lastActivity = (session: string): number | undefined => getActivity(activity, session)
  // Each step below changes only the claim it visits, so the snapshot entry is current unless the
  // spinning pass above already handled it.
  const free = { now: d.at, blocked: false, lastActivity }
  const held = { now: d.at, blocked: true, lastActivity }
  // Only the claims that can be acted on at this time are judged: the others would be young, healthy
  // or aborting (claimTable.ts). They are judged in acquisition order, as a sweep over all would.
  const candidates = sweepCandidates(d.claims, d.at, blockedSet)
  for (const c of candidates) {
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
      case "Aborting":
      case "Young":
      case "Healthy":
        break
    }
  }
  if (candidates.length > 0) {
    keepDeadlines(d.claims, candidates, (c) => {
      const last = c.targetSession === null ? undefined : lastActivity(c.targetSession)
      return last === undefined ? c.acquiredAt : Math.max(last, c.acquiredAt)
    })
  }
}

/** Cool, then abort the pooled session and release on success (TRACE.md §3 line order). */
export const applySignal = (
  d: Draft,
  decision: SignalDecision,
  target: Claim | undefined,
  input: { readonly abort?: AbortOutcome | undefined; readonly aborts?: Readonly<Record<string, AbortOutcome>> | undefined }
): void => {
  if (decision._tag === "Ignore") {
    emit(d, { type: "ignore", at: d.at, reason: decision.reason })
    return
  }
  emitCool(d, decision.plan)
  if (target !== undefined) attemptAbort(d, target, outcomeFor(input, target.key), "signal")
}

export const mergePeers = (table: CooldownTable, peers: ReadonlyArray<PeerCooling> | undefined, at: number): CooldownTable => {
  if (peers === undefined) return table
  let t = table
  for (const p of peers) t = mergePeer(t, p, at)
  return t
}

/** Loads, cooling flags and the pick for the current claims, cooldowns and peer load. */
export const routeView = (
  slots: ReadonlyArray<Slot>,
  claims: ClaimTable,
  cooldowns: CooldownTable,
  peers: Readonly<Record<string, number>> | undefined,
  at: number
) => {
  const loads = tableLoads(claims, slots, peers)
  const weights = slots.map((s) => s.weight)
  const coolingFlags = slots.map((s) => isCooling(cooldowns.get(s.model), at))
  const pick = pickSlot({ weights, loads, cooling: coolingFlags })!
  return { loads, weights, cooling: coolingFlags, pick }
}

