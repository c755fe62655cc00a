/**
 * One event's turn of the engine: the state as it changes, the trace lines fed to the machine, its
 * decisions, the logs, and the effects collected for the shell (effects.ts). Applying a line collects
 * what its decisions make the shell write or do (the models cooled, the aborts, the switches);
 * decisionLog.ts only formats, when the outcome's `logs` are first read (the shell reads them after the
 * commit, so no formatting delays a write). Mutable only inside one `engineStep` call; the handlers (one module per
 * feature) work through it, and `outcome` turns it into the immutable `Applied`.
 */
import type { Claim } from "../pool/claims.js"
import { isCleared, isCooling, type Cooldown, type CooldownTable } from "../pool/cooldown.js"
import { liveLoadByModel } from "../pool/slotStatus.js"
import type { ProcessSnapshot } from "../status.js"
import type { FallbackRecord } from "../quota/fallbackRecord.js"
import type { GroupBudget } from "../limits/learned.js"
import type { QuotaObservation } from "../quota/headers.js"
import { quotaStep } from "../state/quotaMemo.js"
import { getClaim, liveTarget } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { PeerCooling, TraceInput } from "../trace/input.js"
import { step, type TraceState } from "../trace/machine.js"
import { decisionLines, switchText, type DecisionContext } from "./decisionLog.js"
import type { EngineEffect } from "./effects.js"
import { logAbout, type Applied, type EngineCommit, type EngineEvent, type EventNeeds, type LogAnnotations, type LogLevel, type LogLine } from "./events.js"
import { readsShared } from "./sharedLines.js"
import type { Count } from "../metrics/counters.js"
import { countDecisions } from "../metrics/engineCounts.js"
import type { PoolSnapshot } from "./snapshot.js"
import type { EngineState } from "./state.js"

/** The fields of the engine state that are maps, with their keys and values. */
type MapField = { [K in keyof EngineState]: EngineState[K] extends ReadonlyMap<unknown, unknown> ? K : never }[keyof EngineState]
type KeyOf<K extends MapField> = EngineState[K] extends ReadonlyMap<infer Key, unknown> ? Key : never
type ValueOf<K extends MapField> = EngineState[K] extends ReadonlyMap<unknown, infer V> ? V : never

/** What `shared` adds to a line that reads shared state. */
export interface SharedFields {
  readonly peers?: Record<string, number>
  readonly peerCooling?: ReturnType<typeof peerCooling>
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

export class Turn {
  state: EngineState
  readonly lines: Array<TraceInput> = []
  readonly decisions: Array<Decision> = []
  /** The turn's log lines in order; a decision's lines are formatted when the outcome's `logs` are first read (after the commit). */
  readonly logs: Array<LogLine | Deferred> = []
  /** What the shell carries out, in order (effects.ts). */
  readonly effects: Array<EngineEffect> = []
  /** Models the machine cooled in this turn: their records are written. */
  readonly cooled = new Set<string>()
  /** The fallback records of the switches decided in this turn. */
  readonly fallbacks: Array<FallbackRecord> = []
  /** The model groups' budget records decided in this turn (issue 35), by group: the last one wins. */
  readonly budgets = new Map<string, GroupBudget>()
  observed: { readonly model: string; readonly observation: QuotaObservation } | undefined
  ended: string | undefined
  /** Why the abort whose outcome this turn applies failed (for its log line). */
  abortReason: string | undefined
  /** The counts of the turn's decisions (issue 36), one per counter, for the commit; made at the first line that decides something, when counting. */
  private counted: Array<Count> | undefined
  /** Maps this turn copied and no one else holds (`put` sets them in place); forgotten whenever the state is kept for later. */
  private owned: Set<keyof EngineState> | undefined

  constructor(
    state: EngineState,
    readonly at: number,
    readonly snapshot: PoolSnapshot | undefined
  ) {
    this.state = state
  }

  get machine(): TraceState {
    return this.state.machine
  }

  log(level: LogLevel, message: string, annotations?: LogAnnotations): void {
    this.logs.push(annotations === undefined ? { level, message } : { level, message, annotations })
  }

  /** An effect for the shell (effects.ts). */
  effect(e: EngineEffect): void {
    this.effects.push(e)
  }

  set<K extends keyof EngineState>(key: K, value: EngineState[K]): void {
    this.state = { ...this.state, [key]: value }
    this.owned?.delete(key)
  }

  /** The map `key` with `k` set to `v`: copied on the turn's first write to it, so the state before the turn is never changed. */
  put<K extends MapField>(key: K, k: KeyOf<K>, v: ValueOf<K>): void {
    if (this.owned?.has(key) === true) {
      ;(this.state[key] as unknown as Map<KeyOf<K>, ValueOf<K>>).set(k, v)
      return
    }
    this.set(key, new Map(this.state[key] as ReadonlyMap<KeyOf<K>, ValueOf<K>>).set(k, v) as unknown as EngineState[K])
    ;(this.owned ??= new Set()).add(key)
  }

  /**
   * `peerCooling` (and with `withPeers`, `peers`) for a line that reads shared state. Only events whose
   * `EventNeeds` declare the shared state get here with a snapshot; without one there is nothing to add.
   */
  shared(withPeers = false): SharedFields {
    if (this.snapshot === undefined) return {}
    const peers = withPeers ? peerLoad(this.snapshot.peers, this.at) : undefined
    const cooling = peerCooling(this.machine.cooldowns, this.snapshot.cooldowns, this.at)
    return { ...(peers === undefined ? {} : { peers }), ...(cooling === undefined ? {} : { peerCooling: cooling }) }
  }

  /** Applies one line to the trace machine; the decisions' logs follow. */
  apply(line: TraceInput): ReadonlyArray<Decision> {
    // an event declared as needing nothing shared must never feed a line that reads it: say so loudly
    if (this.snapshot === undefined && readsShared(line)) this.log("error", `internal: ${line.type} decided without the shared state`)
    const before = this.machine
    const r = step(before, line)
    if (r._tag === "Invalid") {
      this.log("error", `internal: the trace machine refused ${line.type}: ${r.message}`)
      return []
    }
    const requested = r.requests
    // a line that requested an abort is recorded saying so; an unused `pending` would only be noise
    const recorded = requested.length > 0 ? line : withoutPending(line)
    this.lines.push(recorded)
    this.state = { ...this.state, machine: r.state }
    for (const w of r.warnings) this.log("warn", w)
    for (const d of r.decisions) {
      this.decisions.push(d)
      this.collect(d)
      const context: DecisionContext = { state: this.state, at: this.at, abortReason: this.abortReason }
      // the deferred log reads this state later: a later `put` in this turn copies again
      this.owned = undefined
      this.logs.push(() => decisionLines(context, d, before))
    }
    if (r.decisions.length > 0 && this.state.metrics) countDecisions((this.counted ??= []), line, r.decisions, before)
    for (const a of requested) {
      this.effects.push({ _tag: "Abort", claim: a.claim, session: a.session })
      const c = getClaim(r.state.table, a.claim)
      const why = c?.abortOrigin === "signal" ? (this.state.signalled.get(a.claim) ?? "signal") : c?.abortOrigin === "first_token" ? "no first token" : "hang"
      // formatted with the decisions' lines, when the logs are read
      this.logs.push(() => [{ level: "debug", message: `aborting claim=${a.claim} session=${a.session} (${why})`, annotations: logAbout(a.claim, a.session, c?.model) }])
    }
    return r.decisions
  }

  /** What a decision makes the shell write (a cooled model's record) or do (a switch). */
  private collect(d: Decision): void {
    if (d.type === "cool") for (const m of d.models) this.cooled.add(m)
    else if (d.type === "budget") this.budgets.set(d.record.group, d.record)
    else if (d.type === "switch") {
      // the session's model changes when the "continue" message on the fallback is created (`message`):
      // until then a late report of the same failure still names the original, which switches nothing
      const original = this.machine.episodes.get(d.session)?.original ?? d.from
      const agent = this.state.primaries.get(d.session)?.agent
      // before the request (issue 35), the message itself runs on the fallback: nothing to abort or continue
      if (d.via !== "message") this.effects.push({ _tag: "Switch", order: { session: d.session, original, from: d.from, to: d.to, via: d.via, agent, until: d.until, text: switchText(d.from, d.to, d.until) } })
      this.fallbacks.push({ session: d.session, original, active: d.to, until: d.until, at: this.at })
      this.effects.push({ _tag: "Announce", session: d.session, text: switchText(d.from, d.to, d.until) })
    }
  }

  liveTarget(session: string): Claim | undefined {
    return liveTarget(this.machine.table, session, this.at)
  }

  /** The turn as the engine's answer: what changed since `before`, and every effect collected. */
  outcome(before: EngineState): Applied {
    const was = before.machine
    const after = this.machine
    const cool: Array<Cooldown> = []
    for (const m of this.cooled) {
      const r = after.cooldowns.get(m)
      if (r !== undefined) cool.push(r)
    }
    const uncool: Array<string> = []
    for (const m of was.cooldowns.keys()) if (!after.cooldowns.has(m)) uncool.push(m)
    // the refresh machine's record is saved whenever its state changed, before a run it started is carried out
    const effects = after.context === was.context ? this.effects : withSave(this.effects, this.decisions.some((d) => d.type === "context_start"))
    // the quota write throttle: asked only when a response stated quota
    const quota = this.observed === undefined ? undefined : quotaStep(this.state.quotaWritten, this.observed, this.at)
    const state = quota === undefined || quota.memo === this.state.quotaWritten ? this.state : { ...this.state, quotaWritten: quota.memo }
    const publish = after.table !== was.table || after.reaped !== was.reaped
    return new Outcome(state, this.lines, this.decisions, this.logs, this.observed, effects, {
      claims: publish ? after : undefined,
      cool,
      uncool,
      quota: quota?.write,
      learned: this.budgets,
      fallbacks: this.fallbacks,
      ended: this.ended,
      counts: this.counted
    })
  }
}

/** What the commit is made of, when it is first read. */
interface CommitParts {
  /** The machine state whose claims are published, when they changed. */
  readonly claims: TraceState | undefined
  readonly cool: ReadonlyArray<Cooldown>
  readonly uncool: ReadonlyArray<string>
  readonly quota: EngineCommit["quota"] extends ReadonlyArray<infer Q> | undefined ? Q | undefined : never
  readonly learned: ReadonlyMap<string, GroupBudget>
  readonly fallbacks: ReadonlyArray<FallbackRecord>
  readonly ended: string | undefined
  /** The turn's counts, one per counter (engineCounts.ts sums them as they come). */
  readonly counts: ReadonlyArray<Count> | undefined
}

/**
 * A turn's answer. Its logs are formatted, and its commit built, when first read (the shell reads the
 * commit inside the transaction and the logs after it): a class, so that the lazy parts are the
 * prototype's getters rather than closures made for every turn.
 */
class Outcome implements Applied {
  readonly _tag = "Applied"
  private formatted: ReadonlyArray<LogLine> | undefined
  private built: EngineCommit | undefined
  constructor(
    readonly state: EngineState,
    readonly lines: ReadonlyArray<TraceInput>,
    readonly decisions: ReadonlyArray<Decision>,
    private readonly raw: ReadonlyArray<LogLine | Deferred>,
    readonly observed: Applied["observed"],
    readonly effects: ReadonlyArray<EngineEffect>,
    private readonly parts: CommitParts
  ) {}
  get logs(): ReadonlyArray<LogLine> {
    return (this.formatted ??= formatLogs(this.raw))
  }
  // its claims list is the machine's array view, made on first read
  get commit(): EngineCommit {
    const p = this.parts
    return (this.built ??= {
      claims: p.claims === undefined ? undefined : { claims: p.claims.claims, reaped: p.claims.reaped },
      cool: p.cool,
      uncool: p.uncool,
      quota: p.quota === undefined ? undefined : [p.quota],
      ...(p.learned.size === 0 ? {} : { learned: [...p.learned.values()] }),
      fallbacks: p.fallbacks.length === 0 ? undefined : p.fallbacks,
      endFallbacks: p.ended === undefined ? undefined : [p.ended],
      ...(p.counts === undefined || p.counts.length === 0 ? {} : { counts: p.counts })
    })
  }
}

/** Log lines made when the logs are read, from what they read as it was then. */
type Deferred = () => ReadonlyArray<LogLine>

/** The turn's log lines, the deferred ones made (decisionLog.ts), in order. */
const formatLogs = (raw: ReadonlyArray<LogLine | Deferred>): ReadonlyArray<LogLine> => {
  const out: Array<LogLine> = []
  for (const l of raw) {
    if (typeof l === "function") for (const x of l()) out.push(x)
    else out.push(l)
  }
  return out
}

/** `effects` with `SaveContext` before the first `Refresh` (or last). */
const withSave = (effects: ReadonlyArray<EngineEffect>, started: boolean): ReadonlyArray<EngineEffect> => {
  const at = effects.findIndex((e) => e._tag === "Refresh")
  const save: EngineEffect = { _tag: "SaveContext", started }
  return at < 0 ? [...effects, save] : [...effects.slice(0, at), save, ...effects.slice(at)]
}

const withoutPending = (line: TraceInput): TraceInput => {
  if (!("abort" in line) || line.abort !== "pending") return line
  const { abort: _abort, ...rest } = line
  return rest as TraceInput
}

/**
 * One feature's handling of one event type: what it needs of the shared state (declared from the
 * state and the event alone, before anything is stepped: a time-dependent answer errs towards
 * reading), and the step itself.
 */
export interface Handler<E extends EngineEvent> {
  readonly needs: (state: EngineState, event: E) => EventNeeds
  readonly run: (turn: Turn, event: E) => void
}

/** A feature's handlers, by the event types it owns. */
export type Handlers<K extends EngineEvent["type"]> = { readonly [T in K]: Handler<Extract<EngineEvent, { readonly type: T }>> }

export const NONE: EventNeeds = { shared: "none", peers: false }
export const TRANSACT: EventNeeds = { shared: "transact", peers: false }
export const TRANSACT_WITH_PEERS: EventNeeds = { shared: "transact", peers: true }
/** A transaction that also reads the model groups' learned budgets (issue 35). */
export const TRANSACT_LEARNED: EventNeeds = { shared: "transact", peers: false, learned: true }
export const READ_WITH_PEERS: EventNeeds = { shared: "read", peers: true }
/** A handler that never reads shared state. */
export const local = <E extends EngineEvent>(run: (turn: Turn, event: E) => void): Handler<E> => ({ needs: () => NONE, run })
