/**
 * The context map's automatic refresh (SPEC §13, US-20) as a pure machine over trace lines: edits
 * under the project root are collected (the map, skipped segments and paths outside the root are
 * not), a root session's idle starts a run when none is in flight and the last one began at least
 * REFRESH_SPACING_MS ago (a queued request from `ocpool context refresh` starts one at the next idle
 * regardless of the spacing), a run takes every pending path and lists PROMPT_PATHS_MAX of them, and
 * a failed run puts its paths back in front of the queue. No I/O, no clock: `at` comes with each line.
 */
import { PENDING_MAX, PROMPT_PATHS_MAX, queuedPath, REFRESH_SPACING_MS, MAP_MAX_BYTES_DEFAULT, type RefreshKind } from "./map.js"

/** What the shell saw of the map: whether one of the five files exists, their bytes, and a stamp that changes when any of them does. */
export interface MapStamp {
  readonly exists: boolean
  readonly bytes: number
  readonly stamp: string
}

export type RunOutcome = "ok" | "unchanged" | "failed"

export interface LastRun {
  readonly run: string
  readonly kind: RefreshKind
  readonly startedAt: number
  readonly endedAt: number
  readonly outcome: RunOutcome
  readonly paths: number
  readonly reason?: string | undefined
}

export interface InFlight {
  readonly run: string
  readonly kind: RefreshKind
  /** The pool claim the run holds (a `context` spawn). */
  readonly claim: string
  readonly startedAt: number
  /** Every pending path the run took, in order (the prompt lists the first PROMPT_PATHS_MAX). */
  readonly paths: ReadonlyArray<string>
  /** The run's session, once created. */
  readonly session: string | undefined
  /** The map as it was when the run started: a run that leaves it as it was changed nothing. */
  readonly map: MapStamp
}

export interface RefreshState {
  /** The project root; undefined until a `context_load` line, and edits before it are not collected. */
  readonly root: string | undefined
  /** The budget of the five map files (option `contextMap.maxBytes`). */
  readonly maxBytes: number
  /** Pending paths, relative to the root, unique, oldest first. */
  readonly pending: ReadonlyArray<string>
  /** Paths not kept because PENDING_MAX were already pending. */
  readonly dropped: number
  readonly inFlight: InFlight | undefined
  readonly lastStartedAt: number | undefined
  readonly lastRun: LastRun | undefined
}

export const initialRefresh: RefreshState = {
  root: undefined,
  maxBytes: MAP_MAX_BYTES_DEFAULT,
  pending: [],
  dropped: 0,
  inFlight: undefined,
  lastStartedAt: undefined,
  lastRun: undefined
}

/** The input lines of the refresh machine (docs/TRACE-FORMAT.md, "Context map lines"). */
export type ContextLine =
  | {
      readonly type: "context_load"
      readonly at: number
      readonly root: string
      readonly maxBytes?: number | undefined
      readonly pending?: ReadonlyArray<string> | undefined
      readonly dropped?: number | undefined
      readonly lastStartedAt?: number | undefined
      readonly lastRun?: LastRun | undefined
    }
  | { readonly type: "context_edit"; readonly at: number; readonly paths: ReadonlyArray<string>; readonly session?: string | undefined }
  | { readonly type: "context_idle"; readonly at: number; readonly session: string; readonly map: MapStamp; readonly requested?: boolean | undefined }
  | { readonly type: "context_bound"; readonly at: number; readonly run: string; readonly session: string }
  | { readonly type: "context_end"; readonly at: number; readonly run: string; readonly ok: boolean; readonly map: MapStamp; readonly reason?: string | undefined }

export type ContextLineType = ContextLine["type"]


/** The refresh machine's decisions (output lines). */
export type ContextDecision =
  | {
      readonly type: "context_start"
      readonly at: number
      readonly run: string
      readonly kind: RefreshKind
      readonly claim: string
      /** The paths the prompt lists (at most PROMPT_PATHS_MAX). */
      readonly paths: ReadonlyArray<string>
      /** How many more the run took (`…and K more`). */
      readonly more: number
      /** The map is over its budget: the prompt asks to condense it. */
      readonly condense: boolean
      /** Started by a request (`ocpool context refresh`) rather than by edits. */
      readonly requested: boolean
    }
  | {
      readonly type: "context_skip"
      readonly at: number
      readonly reason: "in_flight" | "spacing"
      readonly pending: number
      /** in_flight: the run in flight; spacing: when the next run may start. */
      readonly run?: string | undefined
      readonly until?: number | undefined
    }
  | {
      readonly type: "context_done"
      readonly at: number
      readonly run: string
      readonly outcome: RunOutcome
      /** Paths put back in the queue (a failed run's). */
      readonly requeued: number
      readonly reason?: string | undefined
    }

export interface RefreshStep {
  readonly state: RefreshState
  readonly decisions: ReadonlyArray<ContextDecision>
}

const NONE: ReadonlyArray<ContextDecision> = []

/** The claim a run holds in the pool: owned by no session of the user's, so no task child binds to it. */
export const REFRESH_OWNER = "context-map"
export const claimOfRun = (run: string): string => `${REFRESH_OWNER}:${run}`
export const runId = (at: number): string => `ctx-${at.toString(36)}`

/** `paths` appended to `queue` in order, each once, at most PENDING_MAX kept; how many did not fit. */
export const enqueue = (queue: ReadonlyArray<string>, paths: ReadonlyArray<string>): { readonly pending: ReadonlyArray<string>; readonly dropped: number } => {
  const seen = new Set(queue)
  const out = queue.length > PENDING_MAX ? queue.slice(0, PENDING_MAX) : [...queue]
  let dropped = queue.length - out.length
  for (const p of paths) {
    if (seen.has(p)) continue
    seen.add(p)
    if (out.length >= PENDING_MAX) dropped++
    else out.push(p)
  }
  return { pending: out, dropped }
}

/** Whether a map file differs between two looks at the map (created, removed, resized or rewritten). */
export const mapDiffers = (before: MapStamp, after: MapStamp): boolean => before.stamp !== after.stamp

/** When the next automatic run may start (undefined: at once). */
export const nextStartAt = (s: RefreshState): number | undefined => (s.lastStartedAt === undefined ? undefined : s.lastStartedAt + REFRESH_SPACING_MS)

const idle = (s: RefreshState, line: Extract<ContextLine, { type: "context_idle" }>): RefreshStep => {
  const requested = line.requested === true
  if (s.root === undefined) return { state: s, decisions: NONE }
  if (s.pending.length === 0 && !requested) return { state: s, decisions: NONE }
  if (s.inFlight !== undefined) {
    return { state: s, decisions: [{ type: "context_skip", at: line.at, reason: "in_flight", pending: s.pending.length, run: s.inFlight.run }] }
  }
  const next = nextStartAt(s)
  if (!requested && next !== undefined && line.at < next) {
    return { state: s, decisions: [{ type: "context_skip", at: line.at, reason: "spacing", pending: s.pending.length, until: next }] }
  }
  const run = runId(line.at)
  const kind: RefreshKind = line.map.exists ? "update" : "bootstrap"
  const claim = claimOfRun(run)
  const paths = s.pending
  const inFlight: InFlight = { run, kind, claim, startedAt: line.at, paths, session: undefined, map: line.map }
  const listed = paths.slice(0, PROMPT_PATHS_MAX)
  return {
    state: { ...s, pending: [], dropped: 0, inFlight, lastStartedAt: line.at },
    decisions: [
      {
        type: "context_start",
        at: line.at,
        run,
        kind,
        claim,
        paths: listed,
        more: paths.length - listed.length,
        condense: line.map.exists && line.map.bytes > s.maxBytes,
        requested
      }
    ]
  }
}

const end = (s: RefreshState, line: Extract<ContextLine, { type: "context_end" }>): RefreshStep => {
  const f = s.inFlight
  if (f === undefined || f.run !== line.run) return { state: s, decisions: NONE }
  const outcome: RunOutcome = !line.ok ? "failed" : mapDiffers(f.map, line.map) ? "ok" : "unchanged"
  const back = outcome === "failed" ? enqueue(f.paths, s.pending) : { pending: s.pending, dropped: 0 }
  const reason = outcome === "failed" ? line.reason : undefined
  const lastRun: LastRun = {
    run: f.run,
    kind: f.kind,
    startedAt: f.startedAt,
    endedAt: line.at,
    outcome,
    paths: f.paths.length,
    ...(reason === undefined ? {} : { reason })
  }
  return {
    state: { ...s, inFlight: undefined, pending: back.pending, dropped: s.dropped + back.dropped, lastRun },
    decisions: [
      {
        type: "context_done",
        at: line.at,
        run: f.run,
        outcome,
        requeued: outcome === "failed" ? f.paths.length : 0,
        ...(reason === undefined ? {} : { reason })
      }
    ]
  }
}

/** Applies one context line. */
export const stepRefresh = (s: RefreshState, line: ContextLine): RefreshStep => {
  switch (line.type) {
    case "context_load": {
      const loaded = enqueue([], line.pending ?? [])
      return {
        state: {
          root: line.root,
          maxBytes: line.maxBytes ?? s.maxBytes,
          pending: loaded.pending,
          dropped: (line.dropped ?? 0) + loaded.dropped,
          inFlight: undefined,
          lastStartedAt: line.lastStartedAt,
          lastRun: line.lastRun
        },
        decisions: NONE
      }
    }
    case "context_edit": {
      const root = s.root
      if (root === undefined) return { state: s, decisions: NONE }
      const fresh: Array<string> = []
      for (const p of line.paths) {
        const q = queuedPath(root, p)
        if (q !== undefined) fresh.push(q)
      }
      if (fresh.length === 0) return { state: s, decisions: NONE }
      const next = enqueue(s.pending, fresh)
      if (next.pending.length === s.pending.length && next.dropped === 0) return { state: s, decisions: NONE }
      return { state: { ...s, pending: next.pending, dropped: s.dropped + next.dropped }, decisions: NONE }
    }
    case "context_idle":
      return idle(s, line)
    case "context_bound": {
      const f = s.inFlight
      if (f === undefined || f.run !== line.run) return { state: s, decisions: NONE }
      return { state: { ...s, inFlight: { ...f, session: line.session } }, decisions: NONE }
    }
    case "context_end":
      return end(s, line)
  }
}
