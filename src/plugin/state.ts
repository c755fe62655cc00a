/** What one plugin process remembers between hooks: its own claims and what it saw of sessions. */
import type { Claim } from "../core/claims.js"
import type { Slot } from "../core/pool.js"

export const CHILD_RING = 8
export const CHILD_MEMORY_MS = 1_800_000
export const CHILD_SLACK_MS = 1_000
export const ACTIVITY_SAMPLE_MS = 10_000
export const SIGNAL_DEDUPE_MS = 30_000
export const SPIN_REQUESTS = 20
export const SPIN_WINDOW_MS = 10_000

export interface Child {
  readonly id: string
  readonly createdAt: number
  readonly agent: string | undefined
}

export interface PoolState {
  slots: ReadonlyArray<Slot>
  origin: string
  poolWarnings: ReadonlyArray<string>
  /** Own claims in acquisition order. */
  claims: ReadonlyArray<Claim>
  reaped: number
  /** Last recorded (sampled) activity per session. */
  readonly activity: Map<string, number>
  /** Child → parent, from `session.created`. */
  readonly parents: Map<string, string>
  /** Owner session → its newest children (newest last, at most CHILD_RING). */
  readonly children: Map<string, Array<Child>>
  /** Session → ids of questions and permissions asked in it and not answered yet. */
  readonly asks: Map<string, Set<string>>
  /** Claims whose target had a classified signal while held: their release is not a success. */
  readonly signalled: Set<string>
  /** `session\0text` → when that signal was last handled (SIGNAL_DEDUPE_MS). */
  readonly signals: Map<string, number>
  /** Sessions seen busy since their last idle (a bound child going idle ends its task). */
  readonly busy: Set<string>
  /** Session → start times of recent model requests with no new output since (spin detection). */
  readonly requests: Map<string, Array<number>>
  /** Claims this process is aborting right now: the abort's own outcome releases them, not the events it causes. */
  readonly aborting: Set<string>
  lastSweepAt: number | undefined
  sweeping: boolean
  /** One-time warnings: model or provider → until when it is suppressed. */
  readonly warnedUntil: Map<string, number>
}

export const emptyState = (): PoolState => ({
  slots: [],
  origin: "built-in",
  poolWarnings: [],
  claims: [],
  reaped: 0,
  activity: new Map(),
  parents: new Map(),
  children: new Map(),
  asks: new Map(),
  signalled: new Set(),
  signals: new Map(),
  busy: new Set(),
  requests: new Map(),
  aborting: new Set(),
  lastSweepAt: undefined,
  sweeping: false,
  warnedUntil: new Map()
})

/** Whether a question or permission is pending in `session` or any known descendant (SPEC §8.2 step 2). */
export const blockedInTree = (state: PoolState, session: string): boolean => {
  const pending = (s: string) => (state.asks.get(s)?.size ?? 0) > 0
  if (pending(session)) return true
  for (const [asked, set] of state.asks) {
    if (set.size === 0) continue
    let s: string | undefined = state.parents.get(asked)
    for (let depth = 0; s !== undefined && depth < 64; depth++) {
      if (s === session) return true
      s = state.parents.get(s)
    }
  }
  return false
}

/** How long what the plugin saw of a session is kept once the session is quiet and holds no claim. */
export const SESSION_MEMORY_MS = 2 * CHILD_MEMORY_MS

/**
 * Forgets sessions that can no longer matter, so a long-running opencode does not accumulate them:
 * quiet for SESSION_MEMORY_MS, no own claim on them, nothing asked in them. Called from the reaper.
 */
export const forgetQuietSessions = (state: PoolState, now: number): void => {
  const targets = new Set<string>()
  const owners = new Set<string>()
  for (const c of state.claims) {
    if (c.targetSession !== null) targets.add(c.targetSession)
    if (c.ownerSession !== null) owners.add(c.ownerSession)
  }
  const keep = (s: string) => targets.has(s) || owners.has(s) || (state.asks.get(s)?.size ?? 0) > 0
  for (const [s, at] of state.activity) if (now - at > SESSION_MEMORY_MS && !keep(s)) state.activity.delete(s)
  for (const [s] of state.parents) if (!state.activity.has(s) && !keep(s)) state.parents.delete(s)
  for (const [owner, ring] of state.children) {
    const newest = ring.at(-1)
    if ((newest === undefined || now - newest.createdAt > CHILD_MEMORY_MS) && !owners.has(owner)) state.children.delete(owner)
  }
  for (const [s, set] of state.asks) if (set.size === 0) state.asks.delete(s)
  for (const [key, at] of state.signals) if (now - at >= SIGNAL_DEDUPE_MS) state.signals.delete(key)
  for (const [s, times] of state.requests) if (times.length === 0 || now - times[times.length - 1]! >= SPIN_WINDOW_MS) state.requests.delete(s)
  for (const [key, until] of state.warnedUntil) if (until <= now) state.warnedUntil.delete(key)
  for (const s of state.busy) if (!state.activity.has(s) && !keep(s)) state.busy.delete(s)
}
