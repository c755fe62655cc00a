/**
 * The plugin's one decision engine: an opencode event and the time it is applied at, plus (when a
 * decision reads shared state) the pool snapshot, give the next state, the spawn-trace input lines that
 * were applied to the trace machine (exactly what is recorded), the machine's decisions, and the
 * effects the shell carries out: publish own claims, write or remove cooldown records, request aborts,
 * log. Pure; `ocpool replay` runs the same trace machine over the recorded lines.
 */
import type { Claim } from "../claims.js"
import { classifyError } from "../classify.js"
import { DAY_MS, isPooledBase, OPENCODE_HIDDEN_AGENTS, QUOTA_RESERVE_DEFAULT, VARIANT_PATTERN } from "../constants.js"
import { withNewest } from "../newest.js"
import { handNamedVariant, refusalLine } from "../spawn/handNamed.js"
import { isCooling, type Cooldown } from "../cooldown.js"
import type { Slot } from "../pool.js"
import { parseRateLimitHeaders, type QuotaDimension, type QuotaObservation } from "../quota/headers.js"
import { planQuotaLow, type QuotaLevel } from "../quota/low.js"
import { coach } from "../quota/coach.js"
import { recordOf } from "../quota/record.js"
import { judgeClaim } from "../reaper.js"
import { providerOf } from "../signals.js"
import { acquisitionOrder, claimsTargeting, getClaim, isTargeted, liveTarget, oldestUnbound, unboundOf } from "../trace/claimTable.js"
import type { Decision } from "../trace/decision.js"
import type { TraceInput } from "../trace/input.js"
import { step, type AbortRequest, type TraceState } from "../trace/machine.js"
import { peerCooling, peerLoad, type PoolSnapshot } from "./snapshot.js"
import {
  ACTIVITY_SAMPLE_MS,
  blockedSessions,
  CHILD_MEMORY_MS,
  CHILD_RING,
  CHILD_SLACK_MS,
  COACHED_MAX,
  FAILURE_MATCH_MS,
  FAILURES_MAX,
  forgetQuietSessions,
  PRIMARIES_MAX,
  SIGNAL_DEDUPE_MS,
  slotsOf,
  SPIN_REQUESTS,
  SPIN_WINDOW_MS,
  type Child,
  type EngineState
} from "./state.js"

export type LogLevel = "debug" | "info" | "warn" | "error"

export interface LogLine {
  readonly level: LogLevel
  readonly message: string
}

/** One opencode happening, as the hooks see it. */
export type EngineEvent =
  | {
      readonly type: "pool"
      readonly slots: ReadonlyArray<Slot>
      readonly origin: string
      readonly warnings: ReadonlyArray<string>
      /** The option `fallbackModels` (US-50), validated. */
      readonly fallbacks?: ReadonlyArray<string> | undefined
    }
  | { readonly type: "spawn"; readonly owner: string; readonly call: string; readonly base: string; readonly taskId?: string | undefined }
  | { readonly type: "taskEnd"; readonly claim: string; readonly ok: boolean }
  | { readonly type: "child"; readonly id: string; readonly parent: string; readonly agent?: string | undefined; readonly title?: string | undefined }
  | { readonly type: "activity"; readonly session: string }
  | { readonly type: "ask"; readonly session: string; readonly id: string }
  | { readonly type: "answered"; readonly session: string; readonly id: string }
  | { readonly type: "busy"; readonly session: string }
  | { readonly type: "idle"; readonly session: string }
  | { readonly type: "output"; readonly session: string }
  /** `chat.params`: a model request of `session` starts, on `model` (`provider/model`) for `agent`. */
  | { readonly type: "request"; readonly session: string; readonly model?: string | undefined; readonly agent?: string | undefined }
  /** `chat.message`: a user message of `session` is created on `model` for `agent` (US-50: it may run on a fallback instead). */
  | { readonly type: "message"; readonly session: string; readonly model: string; readonly agent?: string | undefined }
  /** The outcome of carrying out a `switch` (US-50): the "continue" prompt on `to` was sent, or why not. */
  | { readonly type: "switched"; readonly session: string; readonly to: string; readonly ok: boolean; readonly reason: string }
  | { readonly type: "error"; readonly session: string; readonly error: unknown; readonly model?: string | undefined }
  | { readonly type: "retry"; readonly session: string; readonly message: string; readonly next: number; readonly provider?: string | undefined }
  /**
   * A provider answered a request of `session` with an error status (issue 19): what it said, kept for
   * the retry status opencode publishes next (which carries only a message).
   */
  | {
      readonly type: "failed"
      readonly session: string
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly body: string
    }
  | { readonly type: "sweep" }
  | { readonly type: "aborted"; readonly claim: string; readonly ok: boolean; readonly reason: string }
  | { readonly type: "status" }
  /**
   * A provider response's rate-limit headers (issue 12): `model` when the shell could tell it from the
   * request, else the model of the claim whose session sent it; `reserve` the option `quotaReserve`.
   */
  | {
      readonly type: "response"
      readonly headers: Readonly<Record<string, string>>
      readonly model?: string | undefined
      readonly session?: string | undefined
      readonly reserve: number
    }
  /** A model request of `session` is being built (issue 12, US-49): the coaching line, when it is due. */
  | { readonly type: "coach"; readonly session: string; readonly model: string }

export interface Applied {
  readonly _tag: "Applied"
  readonly state: EngineState
  /** The input lines applied to the trace machine, in order: what the recorder writes. */
  readonly lines: ReadonlyArray<TraceInput>
  readonly decisions: ReadonlyArray<Decision>
  /** Aborts to carry out; each outcome comes back as an `aborted` event. */
  readonly aborts: ReadonlyArray<AbortRequest>
  /** Whether this process's claims (or its reaped count) changed and must be published. */
  readonly publish: boolean
  /** Cooldown records to write (the machine's records after this event). */
  readonly cool: ReadonlyArray<Cooldown>
  /** Models whose record the machine dropped (a success after the window): their files go. */
  readonly uncool: ReadonlyArray<string>
  readonly logs: ReadonlyArray<LogLine>
  /** For `spawn`: the agent to run (`<base>-<n>`), or the refusal of a hand-named variant. */
  readonly agent?: string | undefined
  readonly refused?: { readonly requested: string; readonly base: string } | undefined
  /** For `response`: the quota the headers stated, for the quota records every process reads. */
  readonly observed?: { readonly model: string; readonly observation: QuotaObservation } | undefined
  /** For `coach`: the line to add to the request's system prompt, or undefined (a child, or nothing new to say). */
  readonly coach?: string | undefined
  /** Root sessions to continue on a fallback model (US-50): the shell aborts (or waits for idle), then prompts "continue". */
  readonly switches?: ReadonlyArray<SwitchOrder> | undefined
  /** For `message`: the model the user message runs on instead of the one it named (US-50). */
  readonly model?: string | undefined
  /** For `message`: the session whose fallback episode ended (its original recovered). */
  readonly ended?: string | undefined
}

/** A `switch` decision with what the shell needs to carry it out. */
export interface SwitchOrder {
  readonly session: string
  /** The model the episode started on (`from` is a fallback when that one ran out too). */
  readonly original: string
  readonly from: string
  readonly to: string
  readonly via: "abort" | "idle"
  /** The agent of the session's last user message, so "continue" runs as the same agent. */
  readonly agent: string | undefined
  readonly until: number
  /** `Switched to <to>: <from> hit its quota, resets <HH:MM>Z`: the log line and the notification's text. */
  readonly text: string
}

/** The log line and notification text of a switch (issue 12). */
export const switchText = (from: string, to: string, until: number): string => `Switched to ${to}: ${from} hit its quota, resets ${iso(until).slice(11, 16)}Z`

/** The event reads shared state: the shell takes the pool lock, reads the snapshot, and calls again. */
export interface NeedSnapshot {
  readonly _tag: "NeedSnapshot"
}

export type StepOutcome = Applied | NeedSnapshot

const NEED_SNAPSHOT: NeedSnapshot = { _tag: "NeedSnapshot" }

/** Local control flow only: `engineStep` catches it. */
class MissingSnapshot {}

const iso = (ms: number): string => new Date(ms).toISOString()

/**
 * Whether a `limit` or `retry` line says its provider's account is out of credit (issue 19), attributed
 * as the machine attributes it: the line's model, else `model` (the live claim's, or the primary's).
 */
const isCredit = (line: TraceInput, model: string | undefined): boolean => {
  if (line.type === "limit") return classifyError({ text: line.text, status: line.status, headers: line.headers, body: line.body, model: line.model ?? model, provider: line.provider })?.credit === true
  if (line.type === "retry") return classifyError({ text: line.message, status: line.status, headers: line.headers, body: line.body, model, provider: line.provider })?.credit === true
  return false
}

/** Lines whose decisions read or write shared state (routing, cooling, a success clearing a record). */
const readsShared = (line: TraceInput): boolean => {
  switch (line.type) {
    case "spawn":
      return isPooledBase(line.base)
    case "limit":
    case "retry":
    case "sweep":
    case "aborted":
      return true
    case "release":
      return line.ok
    case "quota":
      return quotaPlan(line) !== undefined
    default:
      return false
  }
}

/** A `quota` line's cooling, if its quota is at the reserve. */
const quotaPlan = (line: Extract<TraceInput, { type: "quota" }>) => planQuotaLow(line.model, [line.requests, line.tokens], line.reserve ?? QUOTA_RESERVE_DEFAULT, line.at)

/** A parsed dimension as a line's level (absent fields left out, so the recorded line stays small). */
const levelOf = (d: QuotaDimension): QuotaLevel => ({
  remaining: d.remaining,
  ...(d.limit === undefined ? {} : { limit: d.limit }),
  ...(d.resetAt === undefined ? {} : { resetAt: d.resetAt })
})

/** A copy of `m` with `k` set: the engine's maps are small and never changed in place. */
const setIn = <K, V>(m: ReadonlyMap<K, V>, k: K, v: V): Map<K, V> => new Map(m).set(k, v)

/** Mutable only inside one `engineStep` call. */
class Draft {
  state: EngineState
  readonly lines: Array<TraceInput> = []
  readonly decisions: Array<Decision> = []
  readonly aborts: Array<AbortRequest> = []
  readonly logs: Array<LogLine> = []
  readonly cooled = new Set<string>()
  agent: string | undefined
  refused: { readonly requested: string; readonly base: string } | undefined
  observed: { readonly model: string; readonly observation: QuotaObservation } | undefined
  coachLine: string | undefined
  readonly switches: Array<SwitchOrder> = []
  model: string | undefined
  ended: string | undefined

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

  log(level: LogLevel, message: string): void {
    this.logs.push({ level, message })
  }

  /** `peerCooling` (and for a spawn `peers`) for a line that reads shared state. */
  shared(withPeers = false): { peers?: Record<string, number>; peerCooling?: ReturnType<typeof peerCooling> } {
    if (this.snapshot === undefined) throw new MissingSnapshot()
    const peers = withPeers ? peerLoad(this.snapshot.peers, this.at) : undefined
    const cooling = peerCooling(this.machine.cooldowns, this.snapshot.cooldowns, this.at)
    return { ...(peers === undefined ? {} : { peers }), ...(cooling === undefined ? {} : { peerCooling: cooling }) }
  }

  /** Applies one line to the trace machine; the decisions' logs follow. */
  apply(line: TraceInput): ReadonlyArray<Decision> {
    if (readsShared(line) && this.snapshot === undefined) throw new MissingSnapshot()
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
      this.logDecision(d, before)
    }
    for (const a of requested) {
      this.aborts.push(a)
      const c = getClaim(r.state.table, a.claim)
      this.log("debug", `aborting claim=${a.claim} session=${a.session} (${c?.abortOrigin === "signal" ? (this.state.signalled.get(a.claim) ?? "signal") : "hang"})`)
    }
    return r.decisions
  }

  reapLine(c: Claim, outcome: "aborted" | "unbound" | "gave_up"): string {
    const last = c.targetSession === null ? undefined : this.state.sampled.get(c.targetSession)
    const silence = c.targetSession === null ? "-" : `${Math.round((this.at - Math.max(last ?? c.acquiredAt, c.acquiredAt)) / 1000)}s`
    return `reaped claim=${c.key} session=${c.targetSession ?? "-"} model=${c.model} age=${Math.round((this.at - c.acquiredAt) / 1000)}s silence=${silence} outcome=${outcome}`
  }

  logDecision(d: Decision, before: TraceState): void {
    switch (d.type) {
      case "route": {
        const slots = slotsOf(this.state)
        const pos = slots.findIndex((s) => s.index === d.slot)
        this.log("info", `routed ${d.base} -> ${d.agent} slot=${d.slot} model=${d.model} load=${d.loads[pos]! + 1}/${2 * (slots[pos]?.weight ?? 0)} pass=${d.pass}`)
        return
      }
      case "refuse":
        this.log("warn", refusalLine(d))
        return
      case "cool":
        for (const m of d.models) this.cooled.add(m)
        this.log("info", `cooling ${d.models.join(",")} ${d.reason} strike ${d.strike} for ${Math.round((d.until - d.at) / 1000)}s until ${iso(d.until)}`)
        return
      case "switch": {
        const text = switchText(d.from, d.to, d.until)
        const original = this.machine.episodes.get(d.session)?.original ?? d.from
        this.switches.push({ session: d.session, original, from: d.from, to: d.to, via: d.via, agent: this.state.primaries.get(d.session)?.agent, until: d.until, text })
        // the session's model changes when the "continue" message on the fallback is created (`message`):
        // until then a late report of the same failure still names the original, which switches nothing
        this.log("info", text)
        return
      }
      case "model":
        this.log("info", `session ${d.session}: message on ${d.requested} runs on ${d.model} while ${d.requested} cools`)
        return
      case "abort": {
        if (d.ok) return
        const c = getClaim(this.machine.table, d.claim)
        if (c !== undefined) this.log("warn", `abort failed claim=${d.claim} session=${d.session} attempt=${c.abortAttempts}/3: ${this.abortReason ?? "failed"}`)
        return
      }
      case "release": {
        const c = getClaim(before.table, d.claim)
        if (c === undefined) return
        if (d.reason === "hung") this.log("warn", this.reapLine(c, "aborted"))
        else if (d.reason === "unbound") this.log("warn", this.reapLine(c, "unbound"))
        else if (d.reason === "gave_up") {
          this.log("error", this.reapLine(c, "gave_up"))
          this.log("error", `abort gave up after 3 attempts: session ${c.targetSession ?? "-"} is still running; stop it by hand`)
        } else if (d.reason === "signal") this.log("info", `released claim=${d.claim} after ${this.state.signalled.get(d.claim) ?? "signal"}`)
        return
      }
      default:
        return
    }
  }

  abortReason: string | undefined

  /** Remembers a root session's model and agent (US-50); children are never primaries. */
  primary(session: string, model: string | undefined, agent: string | undefined): void {
    if (this.state.parents.has(session)) return
    const old = this.state.primaries.get(session)
    const next = { model: model ?? old?.model, agent: agent ?? old?.agent }
    if (old !== undefined && old.model === next.model && old.agent === next.agent) return
    this.set("primaries", withNewest(this.state.primaries, session, next, PRIMARIES_MAX))
  }

  /** `primary` for a signal line: the root session's model, when fallbacks are configured and nothing pooled targets it. */
  primaryOf(session: string): { readonly primary?: string } {
    if (this.machine.fallbacks.length === 0 || this.state.parents.has(session) || this.liveTarget(session) !== undefined) return {}
    const model = this.state.primaries.get(session)?.model
    return model === undefined ? {} : { primary: model }
  }

  set<K extends keyof EngineState>(key: K, value: EngineState[K]): void {
    this.state = { ...this.state, [key]: value }
  }

  /** Back-fill (SPEC §8.2 step 4): the newest unbound-to-us child of the owner, created around the claim. */
  backfill(c: Claim): string | undefined {
    if (c.ownerSession === null) return undefined
    const ring = this.state.children.get(c.ownerSession) ?? []
    for (let i = ring.length - 1; i >= 0; i--) {
      const child = ring[i]!
      if (this.at - child.createdAt > CHILD_MEMORY_MS) break
      if (child.createdAt < c.acquiredAt - CHILD_SLACK_MS) continue
      if (isTargeted(this.machine.table, child.id)) continue
      return child.id
    }
    return undefined
  }

  /** What a sweep needs first: back-fill binds for old unbound claims, then the claims found blocked. */
  prepareSweep(): { readonly blocked?: ReadonlyArray<string> } {
    // the claims a sweep would release as unbound: unbound ones past the minimum age, oldest first
    const never = { now: this.at, blocked: false, lastActivity: () => undefined }
    const timing = this.machine.timing ?? this.state.timing
    const unbound = oldestUnbound(this.machine.table, (c) => judgeClaim(c, never, timing)._tag !== "Young")
    for (const c of unbound) {
      if (judgeClaim(c, never, timing)._tag !== "Unbound") continue
      const child = this.backfill(c)
      if (child === undefined) continue
      this.apply({ at: this.at, type: "bind", claim: c.key, session: child, activity: false })
    }
    // the claims whose target has a question or permission pending in its tree, in acquisition order
    const held: Array<Claim> = []
    for (const s of blockedSessions(this.state)) for (const c of claimsTargeting(this.machine.table, s)) held.push(c)
    return held.length > 0 ? { blocked: acquisitionOrder(this.machine.table, held) } : {}
  }

  liveTarget(session: string): Claim | undefined {
    return liveTarget(this.machine.table, session, this.at)
  }

  /** Sampled activity (SPEC §6.4): at most once per ACTIVITY_SAMPLE_MS per session. */
  activity(session: string): void {
    const last = this.state.sampled.get(session)
    if (last !== undefined && this.at - last < ACTIVITY_SAMPLE_MS) return
    this.set("sampled", setIn(this.state.sampled, session, this.at))
    this.apply({ at: this.at, type: "activity", session })
  }

  /** Signal dedupe (SPEC §7.1): the same text on the same session within SIGNAL_DEDUPE_MS is dropped. */
  firstSignal(session: string, text: string): boolean {
    const key = `${session}\u0000${text}`
    const last = this.state.signals.get(key)
    if (last !== undefined && this.at - last < SIGNAL_DEDUPE_MS) return false
    this.set("signals", setIn(this.state.signals, key, this.at))
    return true
  }

  /** A classified signal's line: cool, abort the pooled target (pending), one-time warnings. */
  signal(line: TraceInput, session: string, text: string): void {
    const target = this.liveTarget(session)
    const decisions = this.apply(line)
    const cool = decisions.find((d): d is Extract<Decision, { type: "cool" }> => d.type === "cool")
    if (cool === undefined) return
    if (target !== undefined && getClaim(this.machine.table, target.key) !== undefined) {
      this.set("signalled", setIn(this.state.signalled, target.key, cool.reason))
    }
    const primary = "primary" in line ? line.primary : undefined
    if (cool.reason === "quota" && cool.scope === "provider" && isCredit(line, target?.model ?? primary)) {
      const provider = providerOf(cool.models[0]!)
      const until = Math.max(cool.until, ...cool.models.map((m) => this.machine.cooldowns.get(m)?.until ?? 0))
      if ((this.state.warnedUntil.get(`credit:${provider}`) ?? 0) > this.at) return
      this.set("warnedUntil", setIn(this.state.warnedUntil, `credit:${provider}`, until))
      // the time of day, with the date when it is a day or more away
      const when = until - this.at >= DAY_MS ? `${iso(until).slice(0, 10)} ${iso(until).slice(11, 16)}Z` : `${iso(until).slice(11, 16)}Z`
      this.log("warn", `provider ${provider} is out of credit; its slots cool until you top up or ${when}`)
      return
    }
    if (cool.reason !== "unavailable" && cool.reason !== "auth") return
    const key = cool.reason === "auth" ? `auth:${providerOf(cool.models[0]!)}` : `unavailable:${cool.models[0]}`
    if ((this.state.warnedUntil.get(key) ?? 0) > this.at) return
    this.set("warnedUntil", setIn(this.state.warnedUntil, key, cool.until))
    this.log(
      "warn",
      cool.reason === "auth"
        ? `provider ${providerOf(cool.models[0]!)} rejected its credentials; ${cool.models.length} slot(s) cool for 15m`
        : `model ${cool.models[0]} unavailable ("${text.slice(0, 80)}"); not routed until ${iso(cool.until).slice(11, 16)}Z`
    )
  }

  /** A task's end: a signalled claim's end is not a success. */
  taskEnd(key: string, ok: boolean): void {
    const c = getClaim(this.machine.table, key)
    if (c === undefined) return
    const success = ok && !this.state.signalled.has(key)
    if (c.targetSession !== null && this.state.busy.has(c.targetSession)) {
      const busy = new Set(this.state.busy)
      busy.delete(c.targetSession)
      this.set("busy", busy)
    }
    this.apply(success ? { at: this.at, type: "release", claim: key, ok: true, ...this.shared() } : { at: this.at, type: "release", claim: key, ok: false })
  }

  sweepLine(spinning?: ReadonlyArray<string>): void {
    const prepared = this.prepareSweep()
    this.apply({ at: this.at, type: "sweep", ...prepared, ...(spinning === undefined ? {} : { spinning }), abort: "pending", ...this.shared() })
    this.set("lastSweepAt", this.at)
  }
}

const withoutPending = (line: TraceInput): TraceInput => {
  if (!("abort" in line) || line.abort !== "pending") return line
  const { abort: _abort, ...rest } = line
  return rest as TraceInput
}

const run = (d: Draft, event: EngineEvent): void => {
  const at = d.at
  switch (event.type) {
    case "pool": {
      d.set("origin", event.origin)
      d.set("poolWarnings", event.warnings)
      for (const w of event.warnings) d.log("warn", w)
      const t = d.state.timing
      d.apply({
        at,
        type: "pool",
        slots: event.slots.map((s) => ({ model: s.model, weight: s.weight })),
        ...(event.slots.length > 4 ? { maxSlots: event.slots.length } : {}),
        hangMinAgeMs: t.hangMinAgeMs,
        hangSilenceMs: t.hangSilenceMs,
        ...(event.fallbacks === undefined || event.fallbacks.length === 0 ? {} : { fallbacks: event.fallbacks })
      })
      return
    }
    case "spawn": {
      const variant = handNamedVariant(event.base)
      const claim = `${event.owner}:${event.call}`
      if (variant === undefined && !isPooledBase(event.base)) return
      if (variant !== undefined) {
        d.apply({ at, type: "spawn", claim, base: event.base, session: event.owner })
        d.refused = variant
        return
      }
      const prepared = d.prepareSweep()
      const decisions = d.apply({ at, type: "spawn", claim, base: event.base, session: event.owner, ...prepared, ...d.shared(true), abort: "pending" })
      d.set("lastSweepAt", at)
      const route = decisions.find((x) => x.type === "route")
      if (route?.type === "route") d.agent = route.agent
      if (event.taskId !== undefined && event.taskId !== "") d.apply({ at, type: "bind", claim, session: event.taskId, activity: true })
      return
    }
    case "taskEnd":
      d.taskEnd(event.claim, event.ok)
      return
    case "child": {
      d.set("parents", setIn(d.state.parents, event.id, event.parent))
      if (d.state.primaries.has(event.id)) {
        const primaries = new Map(d.state.primaries)
        primaries.delete(event.id)
        d.set("primaries", primaries)
      }
      const ring: Array<Child> = [...(d.state.children.get(event.parent) ?? []), { id: event.id, createdAt: at, agent: event.agent }]
      while (ring.length > CHILD_RING) ring.shift()
      d.set("children", setIn(d.state.children, event.parent, ring))
      const variant = event.agent ?? /\(@([a-z]+-[0-9]+) subagent\)\s*$/.exec(event.title ?? "")?.[1]
      const unbound = unboundOf(d.machine.table, event.parent)
      let match = unbound.find((c) => `${c.base}-${c.slot}` === variant)
      if (match === undefined && (variant === undefined || VARIANT_PATTERN.test(variant))) match = unbound[0]
      if (match !== undefined) {
        d.set("sampled", setIn(d.state.sampled, event.id, at))
        d.apply({ at, type: "bind", claim: match.key, session: event.id, activity: true })
      }
      return
    }
    case "activity":
      d.activity(event.session)
      return
    case "ask":
      d.set("asks", setIn(d.state.asks, event.session, new Set([...(d.state.asks.get(event.session) ?? []), event.id])))
      return
    case "answered": {
      const open = new Set(d.state.asks.get(event.session) ?? [])
      if (event.id === "*") open.clear()
      else open.delete(event.id)
      d.set("asks", setIn(d.state.asks, event.session, open))
      // an answer is activity of every session whose tree holds it
      let s: string | undefined = event.session
      for (let depth = 0; s !== undefined && depth < 64; depth++) {
        d.activity(s)
        s = d.state.parents.get(s)
      }
      return
    }
    case "busy":
      if (!d.state.busy.has(event.session)) d.set("busy", new Set([...d.state.busy, event.session]))
      return
    case "idle": {
      if (!d.state.busy.has(event.session)) return
      const busy = new Set(d.state.busy)
      busy.delete(event.session)
      d.set("busy", busy)
      const c = d.liveTarget(event.session)
      if (c !== undefined) d.taskEnd(c.key, true)
      return
    }
    case "output":
      if (d.state.requests.has(event.session)) {
        const requests = new Map(d.state.requests)
        requests.delete(event.session)
        d.set("requests", requests)
      }
      return
    case "request": {
      // the title generator's request (agent `title`, often another model) is not the user's: "continue"
      // after a switch must run as the user's agent, on the model the user chose
      const hidden = event.agent !== undefined && OPENCODE_HIDDEN_AGENTS.has(event.agent)
      if (!hidden && (event.model !== undefined || event.agent !== undefined)) d.primary(event.session, event.model, event.agent)
      const c = d.liveTarget(event.session)
      if (c === undefined) return
      const times = [...(d.state.requests.get(event.session) ?? []).filter((t) => at - t < SPIN_WINDOW_MS), at]
      const requests = new Map(d.state.requests)
      if (times.length < SPIN_REQUESTS) {
        d.set("requests", requests.set(event.session, times))
        return
      }
      requests.delete(event.session)
      d.set("requests", requests)
      d.log("warn", `spinning session=${event.session} model=${c.model} requests=${times.length}/${SPIN_WINDOW_MS / 1000}s`)
      d.sweepLine([c.key])
      return
    }
    case "error": {
      const e = (typeof event.error === "object" && event.error !== null ? event.error : {}) as { name?: unknown; data?: Record<string, unknown> }
      if (e.name === "MessageAbortedError") {
        const c = d.liveTarget(event.session)
        if (c !== undefined) d.taskEnd(c.key, false)
        return
      }
      const text = JSON.stringify(event.error ?? null)
      if (!d.firstSignal(event.session, text)) return
      const status = typeof e.data?.statusCode === "number" ? e.data.statusCode : undefined
      const headers = typeof e.data?.responseHeaders === "object" && e.data.responseHeaders !== null ? (e.data.responseHeaders as Record<string, unknown>) : undefined
      const metadata = e.data?.metadata as { provider?: unknown } | undefined
      const provider = typeof metadata?.provider === "string" ? metadata.provider : undefined
      d.signal(
        {
          at,
          type: "limit",
          text,
          ...(status === undefined ? {} : { status }),
          ...(headers === undefined ? {} : { headers }),
          ...(event.model === undefined ? {} : { model: event.model }),
          ...(provider === undefined ? {} : { provider }),
          session: event.session,
          ...d.primaryOf(event.session),
          abort: "pending",
          ...d.shared()
        } as TraceInput,
        event.session,
        text
      )
      return
    }
    case "failed": {
      d.set("failures", withNewest(d.state.failures, event.session, { at, status: event.status, headers: event.headers, body: event.body }, FAILURES_MAX))
      return
    }
    case "retry": {
      if (!d.firstSignal(event.session, event.message)) return
      const seen = d.state.failures.get(event.session)
      const failure = seen !== undefined && at - seen.at <= FAILURE_MATCH_MS ? seen : undefined
      if (seen !== undefined) {
        const failures = new Map(d.state.failures)
        failures.delete(event.session)
        d.set("failures", failures)
      }
      d.signal(
        {
          at,
          type: "retry",
          session: event.session,
          message: event.message,
          next: event.next,
          ...(event.provider === undefined ? {} : { provider: event.provider }),
          ...(failure === undefined ? {} : { status: failure.status, headers: failure.headers, body: failure.body }),
          ...d.primaryOf(event.session),
          abort: "pending",
          ...d.shared()
        } as TraceInput,
        event.session,
        event.message
      )
      return
    }
    case "sweep":
      d.sweepLine()
      d.state = forgetQuietSessions(d.state, at)
      return
    case "aborted": {
      const c = getClaim(d.machine.table, event.claim)
      if (c === undefined || !c.abortInFlight) return
      d.log("debug", `abort of ${c.targetSession ?? "-"}: ${event.ok ? "confirmed" : event.reason}`)
      d.abortReason = event.reason
      d.apply({ at, type: "aborted", claim: event.claim, ok: event.ok, ...d.shared() } as TraceInput)
      return
    }
    case "status":
      // with the other processes' load and cooldowns, as pool_status and ocpool status show them (issue 20)
      d.apply({ at, type: "status", ...d.shared(true) })
      return
    case "message": {
      if (d.state.parents.has(event.session)) return
      let model = event.model
      // only a session in a fallback episode has a line to record: every other message runs as sent
      if (d.machine.episodes.has(event.session)) {
        const decided = d.apply({ at, type: "message", session: event.session, model: event.model })
        const rewrite = decided.find((x) => x.type === "model")
        if (rewrite?.type === "model") model = d.model = rewrite.model
        if (!d.machine.episodes.has(event.session)) d.ended = event.session
      }
      d.primary(event.session, model, event.agent)
      return
    }
    case "switched":
      d.apply({ at, type: "switched", session: event.session, to: event.to, ok: event.ok })
      if (!event.ok) d.log("warn", `session ${event.session} was not switched to ${event.to}: ${event.reason}; it stays where it is`)
      return
    case "coach": {
      // children and unknown parents' subagents are coached by nobody: only a root's prompt
      if (d.state.parents.has(event.session)) return
      const tried = d.machine.episodes.get(event.session)?.tried ?? []
      const fallbackLeft = d.machine.fallbacks.some((m) => m !== event.model && !tried.includes(m) && !isCooling(d.machine.cooldowns.get(m), at))
      const c = coach({ model: event.model, quota: d.state.quotas.get(event.model), slots: slotsOf(d.state), cooldowns: d.machine.cooldowns, fallbackLeft, now: at })
      if (d.state.coached.get(event.session) === c.key) return
      d.set("coached", withNewest(d.state.coached, event.session, c.key, COACHED_MAX))
      d.coachLine = c.line
      return
    }
    case "response": {
      const observation = parseRateLimitHeaders(event.headers, at)
      if (observation === undefined || (observation.requests === undefined && observation.tokens === undefined)) return
      const model = event.model ?? (event.session === undefined ? undefined : d.liveTarget(event.session)?.model)
      if (model === undefined) return
      d.observed = { model, observation }
      const record = recordOf(model, observation, at)
      if (record !== undefined) d.set("quotas", setIn(d.state.quotas, model, record))
      // only a slot's model can cool; other models' quota is only recorded
      if (!slotsOf(d.state).some((s) => s.model === model)) return
      const line = {
        at,
        type: "quota",
        model,
        ...(observation.requests === undefined ? {} : { requests: levelOf(observation.requests) }),
        ...(observation.tokens === undefined ? {} : { tokens: levelOf(observation.tokens) }),
        ...(event.reserve === QUOTA_RESERVE_DEFAULT ? {} : { reserve: event.reserve })
      } as const
      d.apply(quotaPlan(line) === undefined ? line : { ...line, ...d.shared() })
      return
    }
  }
}

/**
 * Events whose decision reads shared state but writes none (the status view): the shell reads the
 * snapshot without the pool lock, as `ocpool status` does, instead of running a transaction.
 */
export const readsOnly = (event: EngineEvent): boolean => event.type === "status"

/** Whether an event's snapshot needs the other processes' claims (routing and the status view count their load). */
export const needsPeers = (event: EngineEvent): boolean => event.type === "spawn" || event.type === "status"

/**
 * Events whose decision always reads shared state: the shell takes the snapshot at once instead of
 * asking twice. Any other event still answers `NeedSnapshot` when it turns out to need one.
 */
export const needsSnapshot = (event: EngineEvent): boolean => {
  switch (event.type) {
    case "spawn":
      return isPooledBase(event.base)
    case "sweep":
    case "retry":
    case "aborted":
    case "status":
      return true
    case "error":
      return !(typeof event.error === "object" && event.error !== null && (event.error as { name?: unknown }).name === "MessageAbortedError")
    default:
      return false
  }
}

/**
 * Applies one event at `now` (clamped so time never goes backwards). Returns `NeedSnapshot` when the
 * event's decision reads shared state and no snapshot was given; the state is then unchanged.
 */
export const engineStep = (state: EngineState, event: EngineEvent, now: number, snapshot?: PoolSnapshot): StepOutcome => {
  const last = state.machine.lastAt
  const at = last !== undefined && now < last ? last : now
  const d = new Draft(state, at, snapshot)
  try {
    run(d, event)
  } catch (e) {
    if (e instanceof MissingSnapshot) return NEED_SNAPSHOT
    throw e
  }
  const before = state.machine
  const after = d.machine
  const cool: Array<Cooldown> = []
  for (const m of d.cooled) {
    const r = after.cooldowns.get(m)
    if (r !== undefined) cool.push(r)
  }
  const uncool: Array<string> = []
  for (const m of before.cooldowns.keys()) if (!after.cooldowns.has(m)) uncool.push(m)
  return {
    _tag: "Applied",
    state: d.state,
    lines: d.lines,
    decisions: d.decisions,
    aborts: d.aborts,
    publish: after.table !== before.table || after.reaped !== before.reaped,
    cool,
    uncool,
    logs: d.logs,
    agent: d.agent,
    refused: d.refused,
    observed: d.observed,
    coach: d.coachLine,
    switches: d.switches.length === 0 ? undefined : d.switches,
    model: d.model,
    ended: d.ended
  }
}

/** Own claims in acquisition order. */
export const ownClaims = (state: EngineState): ReadonlyArray<Claim> => state.machine.claims
