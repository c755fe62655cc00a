/**
 * What one plugin process knows between opencode events (SPEC §6.4, §7.1, §8.2, §8.5): the spawn-trace
 * machine's state (slots, own claims, cooldowns, activity, reaped) plus the bookkeeping that turns
 * opencode's events into machine inputs (children, asks, busy sessions, spin counts, signal dedupe,
 * sampled activity, one-time warnings). Immutable: `engineStep` returns a new state.
 */
import type { Slot } from "../pool/pool.js"
import type { QuotaRecord } from "../quota/record.js"
import { NO_QUOTA_WRITTEN, type QuotaMemo } from "../state/quotaMemo.js"
import { getClaim, isOwner, isTargeted } from "../trace/claimTable.js"
import { DEFAULT_TIMING, type ReaperTiming } from "../pool/reaper.js"
import { initialState, traceState, type TraceState } from "../trace/machine.js"
import { blockedSessions, CHILD_MEMORY_MS, emptyTree, pruneTree, type SessionTree } from "../session/tree.js"
import { filterMap } from "../maps.js"

// the session tree's bookkeeping lives in core/session; the engine's names for it stay here
export { blockedSessions, CHILD_MEMORY_MS, CHILD_RING, type Child } from "../session/tree.js"

export const CHILD_SLACK_MS = 1_000
export const ACTIVITY_SAMPLE_MS = 10_000
export const SIGNAL_DEDUPE_MS = 30_000
export const SPIN_REQUESTS = 20
export const SPIN_WINDOW_MS = 10_000
/** A failed response seen by the fetch wrapper is joined to the session's retry status this long after it (issue 19). */
export const FAILURE_MATCH_MS = 30_000
/** How many sessions' last failed responses are kept; the oldest is forgotten first. */
export const FAILURES_MAX = 64
/** How long what the plugin saw of a session is kept once the session is quiet and holds no claim. */
export const SESSION_MEMORY_MS = 2 * CHILD_MEMORY_MS

/** The session tree (`parents`, `children`, `asks`, `busy`: core/session/tree.ts) and the rest of what the engine knows. */
export interface EngineState extends SessionTree {
  readonly machine: TraceState
  readonly timing: ReaperTiming
  readonly origin: string
  readonly poolWarnings: ReadonlyArray<string>
  /** Last sampled activity per session (SPEC §6.4). */
  readonly sampled: ReadonlyMap<string, number>
  /** Claim → the class of the signal that hit its session: its release is not a success. */
  readonly signalled: ReadonlyMap<string, string>
  /** `session\0text` → when that signal was last handled (SIGNAL_DEDUPE_MS). */
  readonly signals: ReadonlyMap<string, number>
  /** Session → start times of recent model requests with no new output since (spin detection). */
  readonly requests: ReadonlyMap<string, ReadonlyArray<number>>
  /**
   * Issue 35: claimed sessions whose model request started (an assistant message was written) → whether
   * output (a text, reasoning or tool part) came after it: its first token. A user message's text part,
   * written before any assistant message, is no token.
   */
  readonly firstTokens: ReadonlyMap<string, boolean>
  /** One-time warnings: model or provider → until when it is suppressed. */
  readonly warnedUntil: ReadonlyMap<string, number>
  readonly lastSweepAt: number | undefined
  /** The latest quota this process saw stated per model (issue 12), for coaching. */
  readonly quotas: ReadonlyMap<string, QuotaRecord>
  /** The quota records this process last wrote (the write throttle's reference, core/state/quotaMemo.ts). */
  readonly quotaWritten: QuotaMemo
  /** Root session → the class of the last coaching line injected into it (COACHED_MAX newest kept). */
  readonly coached: ReadonlyMap<string, string>
  /** Root session → the model and agent of its latest user message or request (US-50; PRIMARIES_MAX newest kept). */
  readonly primaries: ReadonlyMap<string, { readonly model: string | undefined; readonly agent: string | undefined }>
  /** Session → its last failed provider response (issue 19), for the retry status that follows it. */
  readonly failures: ReadonlyMap<string, Failure>
  /** The context map's refresh sessions (issue 23) → when each was bound; REFRESH_SESSIONS_MAX newest kept. */
  readonly refreshSessions: ReadonlyMap<string, number>
  /** Why the refresh run in flight failed (an error in its session), until its end is applied. */
  readonly refreshFailed: string | undefined
  /** Counters (issue 36): each turn's decisions counted into its commit; `false` (option `metrics: false`) counts nothing. */
  readonly metrics: boolean
}

/** What a failed provider response said (status, headers, a bounded body), and when it was seen. */
export interface Failure {
  readonly at: number
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** How many root sessions' models are remembered for fallbacks; the oldest is forgotten first. */
export const PRIMARIES_MAX = 500

/** How many sessions' coaching classes are remembered; the oldest is forgotten first. */
export const COACHED_MAX = 500

export const initialEngineState = (timing: ReaperTiming = DEFAULT_TIMING, metrics = true): EngineState => ({
  machine: traceState({ ...initialState, table: initialState.table, timing }),
  timing,
  origin: "built-in",
  poolWarnings: [],
  sampled: new Map(),
  ...emptyTree(),
  signalled: new Map(),
  signals: new Map(),
  requests: new Map(),
  firstTokens: new Map(),
  warnedUntil: new Map(),
  lastSweepAt: undefined,
  quotas: new Map(),
  quotaWritten: NO_QUOTA_WRITTEN,
  coached: new Map(),
  primaries: new Map(),
  failures: new Map(),
  refreshSessions: new Map(),
  refreshFailed: undefined,
  metrics
})

export const slotsOf = (state: EngineState): ReadonlyArray<Slot> => state.machine.slots ?? []

/**
 * Forgets sessions that can no longer matter, so a long-running opencode does not accumulate them:
 * quiet for SESSION_MEMORY_MS, no own claim on them, nothing asked in them. Run with every timer sweep.
 */
export const forgetQuietSessions = (state: EngineState, now: number): EngineState => {
  const table = state.machine.table
  // a pending ask keeps the whole chain above it: it blocks every ancestor's claim
  const asking = blockedSessions(state)
  const keep = (s: string) => isTargeted(table, s) || isOwner(table, s) || asking.has(s)
  const sampled = filterMap(state.sampled, (at, s) => now - at <= SESSION_MEMORY_MS || keep(s))
  return {
    ...pruneTree(state, now, (s) => sampled.has(s) || keep(s), (owner) => isOwner(table, owner)),
    sampled,
    signalled: filterMap(state.signalled, (_c, key) => getClaim(table, key) !== undefined),
    signals: filterMap(state.signals, (at) => now - at < SIGNAL_DEDUPE_MS),
    requests: filterMap(state.requests, (times) => times.length > 0 && now - times[times.length - 1]! < SPIN_WINDOW_MS),
    warnedUntil: filterMap(state.warnedUntil, (until) => until > now),
    firstTokens: state.firstTokens.size === 0 ? state.firstTokens : filterMap(state.firstTokens, (_spoke, s) => isTargeted(table, s))
  }
}
