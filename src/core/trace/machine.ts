/**
 * The spawn-trace state machine (TRACE.md): one input line applied to an immutable pool state gives
 * the next state and the decisions, in order. `ocpool replay` and the property tests drive it; it
 * shares every rule with the plugin through the core modules it calls.
 *
 * `step` is pure: it never mutates the state it is given. Inside one step a local draft collects the
 * changes, and the new state is built from it at the end.
 */
import { emptyActivity, filterActivity, setActivity, type ActivityTable } from "./activity.js"
import { type Claim, updateClaim } from "../pool/claims.js"
import { QUOTA_RESERVE_DEFAULT, VARIANT_PATTERN } from "../constants.js"
import { isPooledBase } from "../pool/routing.js"
import { applyCool, clearOnSuccess, type CooldownTable, decideLimit, decideRetry, providerOf } from "../pool/cooldown.js"
import { planQuotaLow } from "../quota/low.js"
import { messageModel, type Episode } from "../quota/fallback.js"
import { entriesFromJson, resolveMaxSlots, validateEntries, type Slot } from "../pool/pool.js"
import { type ReaperTiming, DEFAULT_TIMING } from "../pool/reaper.js"
import { stepPermits } from "../permits/machine.js"
import { initialRefresh, stepRefresh, type RefreshState } from "../context/refresh.js"
import { slotStatus } from "../pool/slotStatus.js"
import { addClaim, claimList, claimsAt, claimsTargeting, emptyClaims, liveTarget, oldestAcquired, tableLoads, type ClaimTable } from "./claimTable.js"
import type { Decision } from "./decision.js"
import { applySignal, emit, emitCool, findClaim, mergePeers, release, routeView, setMisses, settleAbort, sweep, withClaim, withoutClaim, type AbortRequest, type Draft } from "./draft.js"
import type { TraceInput } from "./input.js"
import { fallBack, learnBudget, switchBeforeSending } from "./quotaRules.js"

export { EPISODES_MAX } from "./quotaRules.js"

export type { Decision, ReleaseReason, SlotView } from "./decision.js"
export type { AbortRequest } from "./draft.js"

export interface TraceState {
  /** `undefined` until the first `pool` line. */
  readonly slots: ReadonlyArray<Slot> | undefined
  /** The claims, persistent and indexed (claimTable.ts). */
  readonly table: ClaimTable
  /** The claims in acquisition order (built from `table` when first read). */
  readonly claims: ReadonlyArray<Claim>
  readonly cooldowns: CooldownTable
  /** Last recorded activity per session. */
  readonly activity: ActivityTable
  readonly reaped: number
  readonly lastAt: number | undefined
  /** The activity table is pruned when it grows past this size (see `pruneActivity`). */
  readonly activityPruneAt: number
  /** Reaper timings from the last `pool` line that carried them; otherwise the replay options'. */
  readonly timing: ReaperTiming | undefined
  /** The fallback models of the last `pool` line (US-50), in order. */
  readonly fallbacks: ReadonlyArray<string>
  /** Root session → its fallback episode (US-50); EPISODES_MAX newest kept. */
  readonly episodes: ReadonlyMap<string, Episode>
  /** The context map's refresh machine (issue 23). */
  readonly context: RefreshState
  /** Model → its verified first-token aborts in a row (issue 35): the second cools it; a success forgets it. */
  readonly firstTokenMisses: ReadonlyMap<string, number>
}


const ACTIVITY_PRUNE_MIN = 1024

/** A state whose `claims` are read from its table when first asked for. Build states with `traceState`, not by spreading one. */
class State implements TraceState {
  readonly slots: ReadonlyArray<Slot> | undefined
  readonly table: ClaimTable
  readonly cooldowns: CooldownTable
  readonly activity: ActivityTable
  readonly reaped: number
  readonly lastAt: number | undefined
  readonly activityPruneAt: number
  readonly timing: ReaperTiming | undefined
  readonly fallbacks: ReadonlyArray<string>
  readonly episodes: ReadonlyMap<string, Episode>
  readonly context: RefreshState
  readonly firstTokenMisses: ReadonlyMap<string, number>
  constructor(f: Omit<TraceState, "claims">) {
    this.slots = f.slots
    this.table = f.table
    this.cooldowns = f.cooldowns
    this.activity = f.activity
    this.reaped = f.reaped
    this.lastAt = f.lastAt
    this.activityPruneAt = f.activityPruneAt
    this.timing = f.timing
    this.fallbacks = f.fallbacks
    this.episodes = f.episodes
    this.context = f.context
    this.firstTokenMisses = f.firstTokenMisses
  }
  get claims(): ReadonlyArray<Claim> {
    return claimList(this.table)
  }
}

export const traceState = (f: Omit<TraceState, "claims">): TraceState => new State(f)

/** A state's fields, to build the next state from (not a spread: `claims` is a getter). */
const stateFields = (s: TraceState): Omit<TraceState, "claims"> => ({
  slots: s.slots,
  table: s.table,
  cooldowns: s.cooldowns,
  activity: s.activity,
  reaped: s.reaped,
  lastAt: s.lastAt,
  activityPruneAt: s.activityPruneAt,
  timing: s.timing,
  fallbacks: s.fallbacks,
  episodes: s.episodes,
  context: s.context,
  firstTokenMisses: s.firstTokenMisses
})

export const initialState: TraceState = traceState({
  slots: undefined,
  table: emptyClaims,
  cooldowns: new Map(),
  activity: emptyActivity,
  reaped: 0,
  lastAt: undefined,
  activityPruneAt: ACTIVITY_PRUNE_MIN,
  timing: undefined,
  fallbacks: [],
  episodes: new Map(),
  context: initialRefresh,
  firstTokenMisses: new Map()
})

/**
 * Silence runs from the later of a target's last activity and its claim's acquisition, and any
 * claim, present or future, was acquired no earlier than the oldest claim in the table. So an
 * activity time at or before that acquisition can never decide anything and is dropped; without this
 * a long trace would keep every session it ever saw. Amortised: it runs when the table doubles.
 */
const pruneActivity = (
  activity: ActivityTable,
  claims: ClaimTable,
  pruneMin: number
): { readonly activity: ActivityTable; readonly pruneAt: number } => {
  // acquisition order is the order of acquisition times: the first claim is the oldest
  const oldest = oldestAcquired(claims)
  const kept = filterActivity(activity, (t) => t > oldest)
  return { activity: kept, pruneAt: Math.max(pruneMin, 2 * kept.size) }
}

export type StepResult =
  | {
      readonly _tag: "Ok"
      readonly state: TraceState
      readonly decisions: ReadonlyArray<Decision>
      /** Pool validation warnings (stderr in replay). */
      readonly warnings: ReadonlyArray<string>
      /** Aborts this line requested as `pending`: the caller carries them out and feeds back `aborted`. */
      readonly requests: ReadonlyArray<AbortRequest>
    }
  | { readonly _tag: "Invalid"; readonly message: string }

export interface MachineOptions {
  readonly timing?: ReaperTiming | undefined
  /** Smallest activity-table size that triggers a prune (default 1024); tests set it to 0 to prune every line. */
  readonly activityPruneMin?: number | undefined
}

const NO_WARNINGS: ReadonlyArray<string> = []
const NO_REQUESTS: ReadonlyArray<AbortRequest> = []
const NO_DECISIONS: ReadonlyArray<Decision> = []

const invalid = (message: string): StepResult => ({ _tag: "Invalid", message })

const finish = (state: TraceState, d: Draft, episodes: ReadonlyMap<string, Episode>, pruneMin: number): StepResult => {
  let activity = d.activity
  let pruneAt = state.activityPruneAt
  if (activity.size > (pruneMin === 0 ? 0 : pruneAt)) {
    const pruned = pruneActivity(activity, d.claims, pruneMin)
    activity = pruned.activity
    pruneAt = pruned.pruneAt
  }
  return {
    _tag: "Ok",
    state: traceState({
      slots: state.slots,
      table: d.claims,
      cooldowns: d.cooldowns,
      activity,
      reaped: d.reaped,
      lastAt: d.at,
      activityPruneAt: pruneAt,
      timing: state.timing,
      fallbacks: state.fallbacks,
      episodes,
      context: state.context,
      firstTokenMisses: d.firstTokenMisses
    }),
    decisions: d.out ?? NO_DECISIONS,
    warnings: NO_WARNINGS,
    requests: d.requests ?? NO_REQUESTS
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
    const base = state.timing ?? options.timing ?? DEFAULT_TIMING
    const timing =
      input.hangMinAgeMs === undefined && input.hangSilenceMs === undefined
        ? state.timing
        : { hangMinAgeMs: input.hangMinAgeMs ?? base.hangMinAgeMs, hangSilenceMs: input.hangSilenceMs ?? base.hangSilenceMs }
    return {
      _tag: "Ok",
      state: traceState({
        slots: result.slots,
        table: state.table,
        cooldowns: state.cooldowns,
        activity: state.activity,
        reaped: state.reaped,
        lastAt: at,
        activityPruneAt: state.activityPruneAt,
        timing,
        fallbacks: input.fallbacks ?? [],
        episodes: state.episodes,
        context: state.context,
        firstTokenMisses: state.firstTokenMisses
      }),
      decisions: NO_DECISIONS,
      warnings,
      requests: NO_REQUESTS
    }
  }
  if (input.type === "permit") {
    // the line carries everything the permit machine read; the pool state is untouched
    const r = stepPermits(input.entries, input.capacities, input.op, at)
    return { _tag: "Ok", state: traceState({ ...stateFields(state), lastAt: at }), decisions: r.decisions, warnings: NO_WARNINGS, requests: NO_REQUESTS }
  }
  switch (input.type) {
    // the refresh machine's lines (every `ContextLineType` of core/context/refresh.ts): its own state; the pool state is untouched
    case "context_load":
    case "context_edit":
    case "context_idle":
    case "context_bound":
    case "context_end": {
      const r = stepRefresh(state.context, input)
      return { _tag: "Ok", state: traceState({ ...stateFields(state), lastAt: at, context: r.state }), decisions: r.decisions, warnings: NO_WARNINGS, requests: NO_REQUESTS }
    }
  }
  if (state.slots === undefined && (input.type === "spawn" || input.type === "status")) {
    return invalid(`${input.type} before the first pool line`)
  }
  const timing = state.timing ?? options.timing ?? DEFAULT_TIMING
  const d: Draft = {
    at,
    slots: state.slots ?? [],
    timing,
    claims: claimsAt(state.table, at, timing),
    cooldowns:
      input.type === "spawn" || input.type === "status" || input.type === "bind" || input.type === "activity" || input.type === "switched"
        ? state.cooldowns
        : mergePeers(state.cooldowns, input.peerCooling, at),
    activity: state.activity,
    reaped: state.reaped,
    firstTokenMisses: state.firstTokenMisses,
    out: undefined,
    requests: undefined
  }
  let episodes = state.episodes
  switch (input.type) {
    case "spawn": {
      const variant = VARIANT_PATTERN.exec(input.base)
      if (variant !== null) {
        emit(d, { type: "refuse", at, claim: input.claim, requested: input.base, base: variant[1]! })
        break
      }
      if (!isPooledBase(input.base)) break
      d.claims = withoutClaim(d.claims, input.claim)
      d.cooldowns = mergePeers(d.cooldowns, input.peerCooling, at)
      sweep(d, input, input.blocked, undefined)
      const view = routeView(d.slots, d.claims, d.cooldowns, input.peers, at)
      const slot = d.slots[view.pick.position]!
      d.claims = addClaim(d.claims, {
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
          abortOrigin: null,
          abortInFlight: false,
          endedInFlight: false
        })
      emit(d, {
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
      if (input.activity) d.activity = setActivity(d.activity, input.session, at)
      break
    }
    case "activity": {
      d.activity = setActivity(d.activity, input.session, at)
      for (const c of claimsTargeting(d.claims, input.session)) d.claims = withClaim(d.claims, updateClaim(c, { heartbeatAt: at }))
      break
    }
    case "release": {
      const c = findClaim(d.claims, input.claim)
      if (c === undefined) break
      // the task ended while its abort was in flight: the abort's outcome settles the claim
      if (c.abortInFlight) {
        d.claims = withClaim(d.claims, updateClaim(c, { endedInFlight: true }))
        break
      }
      if (input.ok) {
        d.cooldowns = clearOnSuccess(d.cooldowns, c.model, at)
        // a task that ended well had its first token: the model's misses are no longer in a row
        setMisses(d, c.model, 0)
      }
      release(d, c, input.ok ? "done" : "failed")
      break
    }
    case "aborted": {
      const c = findClaim(d.claims, input.claim)
      if (c === undefined || !c.abortInFlight) break
      settleAbort(d, c, input.ok, c.abortOrigin ?? "hang")
      break
    }
    case "limit": {
      const target = liveTarget(d.claims, input.session, at)
      const primary = target === undefined && input.session !== undefined ? input.primary : undefined
      const model = input.model ?? target?.model ?? primary
      const decision = decideLimit(
        withPrimary(d.slots, primary),
        d.cooldowns,
        { text: input.text, status: input.status, headers: input.headers, body: input.body, model, provider: input.provider },
        at
      )
      applySignal(d, decision, target, input)
      if (primary !== undefined && model !== undefined) episodes = fallBack(d, episodes, state.fallbacks, input.session!, model, decision, "idle")
      break
    }
    case "retry": {
      const target = liveTarget(d.claims, input.session, at)
      const primary = target === undefined ? input.primary : undefined
      const decision = decideRetry(
        withPrimary(d.slots, primary),
        d.cooldowns,
        {
          message: input.message,
          next: input.next,
          provider: input.provider,
          model: target?.model ?? primary,
          pooled: target !== undefined || primary !== undefined,
          status: input.status,
          headers: input.headers,
          body: input.body
        },
        at
      )
      applySignal(d, decision, target, input)
      if (primary !== undefined) episodes = fallBack(d, episodes, state.fallbacks, input.session, primary, decision, "abort")
      break
    }
    case "message": {
      // a message on a model that already cools, outside an episode: the switch before its request (issue 35)
      episodes = switchBeforeSending(d, episodes, state.fallbacks, input.session, input.model)
      const episode = episodes.get(input.session)
      const r = messageModel(episode, input.model, d.cooldowns, at)
      if (r.episode !== episode) {
        const next = new Map(episodes)
        next.delete(input.session)
        episodes = next
      }
      if (r.model !== input.model) emit(d, { type: "model", at, session: input.session, requested: input.model, model: r.model })
      break
    }
    case "switched":
      // the outcome is recorded; the episode stands either way (the original still cools)
      break
    case "sweep":
      sweep(d, input, input.blocked, input.spinning, input.stalled)
      break
    case "quota": {
      if (!d.slots.some((s) => s.model === input.model)) break
      const plan = planQuotaLow(input.model, [input.requests, input.tokens], input.reserve ?? QUOTA_RESERVE_DEFAULT, at)
      // a model already cooling at least that long decides nothing: quota lines come with every response
      if (plan !== undefined && applyCool(d.cooldowns, plan, at) !== d.cooldowns) emitCool(d, plan)
      break
    }
    case "budget": {
      if (!d.slots.some((s) => s.model === input.model)) break
      learnBudget(d, input)
      break
    }
    case "status": {
      // the one status function (issue 20): pool_status and ocpool status compute the same
      const table = mergePeers(d.cooldowns, input.peerCooling, at)
      const view = slotStatus(d.slots, tableLoads(d.claims, d.slots, input.peers), table, at)
      emit(d, {
        type: "status",
        at,
        next: view.next!,
        slots: view.slots.map((s) => ({ ...s, cooling: s.cooling === null ? null : { until: s.cooling.until, reason: s.cooling.reason } })),
        reaped: d.reaped
      })
      break
    }
    default: {
      // every line type is handled above (a new one fails to compile here)
      const unhandled: never = input
      return unhandled
    }
  }
  return finish(state, d, episodes, options.activityPruneMin ?? ACTIVITY_PRUNE_MIN)
}

/**
 * A root session's model as one more slot (US-50), so the §7 rules cool it like any slot: its own
 * model on a model-scope signal, its provider's slots and it on a provider-wide one.
 */
const withPrimary = (slots: ReadonlyArray<Slot>, primary: string | undefined): ReadonlyArray<Slot> =>
  primary === undefined || slots.some((s) => s.model === primary) ? slots : [...slots, { index: slots.length + 1, model: primary, provider: providerOf(primary), weight: 1 }]

