/**
 * The context map's automatic refresh in the engine (issue 23, US-20): edits collected as
 * `context_edit` lines, a root session's idle as a `context_idle` line (whose `context_start` becomes
 * a `context` spawn on a pool slot: it holds a claim, cools and is reaped like any), the run's session
 * bound to that claim, and the run's end (its session idle, an error in it, or a failure to start it)
 * as a `context_end` line that releases the claim. The refresh machine decides (core/context/refresh.ts).
 * A refresh session never starts a refresh, is never coached, and never counts as the user's work.
 */
import { REFRESH_OWNER, type ContextDecision, type MapStamp } from "../context/refresh.js"
import { REFRESH_TITLE } from "../context/map.js"
import { refreshPrompt } from "../context/prompt.js"
import { withNewest } from "../newest.js"
import { isChild } from "../session/tree.js"
import { getClaim } from "../trace/claimTable.js"
import type { EngineState } from "./state.js"
import { endTask, prepareSweep } from "./claimSteps.js"
import { isRefreshSession } from "./refreshSessions.js"
import { local, type Handlers, type Turn } from "./turn.js"

/** How many refresh sessions are remembered (their later idles and errors are not the user's). */
export const REFRESH_SESSIONS_MAX = 64

/** What the shell adds to an idle when the context map is on: the map as it is, and whether a refresh was asked for. */
export interface IdleContext {
  readonly map: MapStamp
  readonly requested: boolean
}

/** Whether an idle of `session` may start a run: a root session (not a refresh's), a project, and something to do. */
export const idleMayStart = (state: EngineState, session: string, context: IdleContext | undefined): boolean => {
  const c = state.machine.context
  if (context === undefined || c.root === undefined) return false
  if (isChild(state, session) || isRefreshSession(state, session)) return false
  return c.pending.length > 0 || context.requested || staleRun(state)
}

/** A run in flight whose claim is gone (a limit, the reaper, an abort that gave up): it has failed, whether or not its session ever idles. */
const staleRun = (state: EngineState): boolean => {
  const f = state.machine.context.inFlight
  return f !== undefined && getClaim(state.machine.table, f.claim) === undefined
}

/** Whether an idle of `session` ends the run in flight. */
export const idleEndsRun = (state: EngineState, session: string): boolean => {
  const f = state.machine.context.inFlight
  return f !== undefined && f.session === session && state.busy.has(session)
}

/** The run in flight ends: its claim is released (a success only if nothing failed), then `context_end`. */
const endRun = (turn: Turn, ok: boolean, map: MapStamp, reason: string | undefined): void => {
  const f = turn.machine.context.inFlight
  if (f === undefined) return
  const held = getClaim(turn.machine.table, f.claim) !== undefined
  const failed = turn.state.refreshFailed ?? (!ok ? (reason ?? "failed") : !held ? "its claim was released (a limit, a hang or an abort)" : undefined)
  if (held) endTask(turn, f.claim, failed === undefined)
  turn.set("refreshFailed", undefined)
  turn.apply({ at: turn.at, type: "context_end", run: f.run, ok: failed === undefined, map, ...(failed === undefined ? {} : { reason: failed }) })
}

/** An idle of the run's own session: the run is over. */
export const endRunOnIdle = (turn: Turn, context: IdleContext | undefined): void => {
  const f = turn.machine.context.inFlight
  if (f === undefined) return
  endRun(turn, true, context?.map ?? f.map, undefined)
}

/** The `context_start` decision carried out in the engine: the `context` spawn routed, and the order for the shell. */
const spawnRun = (turn: Turn, start: Extract<ContextDecision, { type: "context_start" }>, map: MapStamp): void => {
  const prepared = prepareSweep(turn)
  const decisions = turn.apply({ at: turn.at, type: "spawn", claim: start.claim, base: "context", session: REFRESH_OWNER, ...prepared, ...turn.shared(true), abort: "pending" })
  turn.set("lastSweepAt", turn.at)
  const route = decisions.find((d) => d.type === "route")
  if (route?.type !== "route") {
    turn.apply({ at: turn.at, type: "context_end", run: start.run, ok: false, map, reason: "no pool slot to run on" })
    return
  }
  const root = turn.machine.context.root ?? ""
  turn.effect({
    _tag: "Refresh",
    order: {
      run: start.run,
      claim: start.claim,
      agent: route.agent,
      model: route.model,
      title: REFRESH_TITLE[start.kind],
      prompt: refreshPrompt(root, start, { bytes: map.bytes, maxBytes: turn.machine.context.maxBytes })
    }
  })
}

/** A root session's idle (after the task bookkeeping): a stale run is closed, then the machine decides. */
export const idleMayRefresh = (turn: Turn, session: string, context: IdleContext | undefined): void => {
  if (context === undefined || !idleMayStart(turn.state, session, context)) return
  const f = turn.machine.context.inFlight
  // a run whose claim is gone has failed (a limit, the reaper, an abort that gave up); its session's late idle is ignored
  if (f !== undefined && staleRun(turn.state)) endRun(turn, false, context.map, f.session === undefined ? "its session never started" : "its claim was released (a limit, a hang or an abort)")
  const decisions = turn.apply({ at: turn.at, type: "context_idle", session, map: context.map, ...(context.requested ? { requested: true } : {}) })
  for (const d of decisions) if (d.type === "context_start") spawnRun(turn, d, context.map)
}

/** An error in the run's session: the run has failed (its idle, which follows, ends it). */
export const noteRefreshError = (turn: Turn, session: string, reason: string): void => {
  const f = turn.machine.context.inFlight
  if (f === undefined || f.session !== session || turn.state.refreshFailed !== undefined) return
  turn.set("refreshFailed", reason)
}

export const contextHandlers: Handlers<"contextLoad" | "contextEdit" | "contextBound" | "contextEnd"> = {
  contextLoad: local((turn, event) => {
    turn.apply({
      at: turn.at,
      type: "context_load",
      root: event.root,
      maxBytes: event.maxBytes,
      ...(event.pending.length === 0 ? {} : { pending: event.pending }),
      ...(event.dropped === 0 ? {} : { dropped: event.dropped }),
      ...(event.lastStartedAt === undefined ? {} : { lastStartedAt: event.lastStartedAt }),
      ...(event.lastRun === undefined ? {} : { lastRun: event.lastRun })
    })
  }),
  contextEdit: local((turn, event) => {
    if (turn.machine.context.root === undefined || event.paths.length === 0 || isRefreshSession(turn.state, event.session)) return
    turn.apply({ at: turn.at, type: "context_edit", paths: event.paths, session: event.session })
  }),
  contextBound: local((turn, event) => {
    // the session is the refresh's even when its run is over: its idles and edits are never the user's
    turn.set("refreshSessions", withNewest(turn.state.refreshSessions, event.session, turn.at, REFRESH_SESSIONS_MAX))
    const f = turn.machine.context.inFlight
    if (f === undefined || f.run !== event.run) return
    if (getClaim(turn.machine.table, f.claim) !== undefined) turn.apply({ at: turn.at, type: "bind", claim: f.claim, session: event.session, activity: true })
    turn.apply({ at: turn.at, type: "context_bound", run: event.run, session: event.session })
  }),
  // a run that could not be started: its claim is released as a failure, so nothing shared is read
  contextEnd: local((turn, event) => {
    const f = turn.machine.context.inFlight
    if (f === undefined || f.run !== event.run) return
    endRun(turn, false, event.map, event.reason)
  })
}
