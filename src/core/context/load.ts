/**
 * Between the refresh machine and its record in the state directory (issue 23): the `contextLoad`
 * event a process starts from (a run left in flight by an opencode that stopped is over: its paths go
 * back in front of the queue), the record a state is saved as, and the stamp of the map a line carries.
 * Pure.
 */
import type { EngineEvent } from "../engine/events.js"
import { MAP_FILES } from "./map.js"
import { mapBytes, mapFiles, type MapFacts } from "./mapFacts.js"
import type { ContextRecord } from "./record.js"
import { enqueue, type MapStamp, type RefreshState } from "./refresh.js"

export interface Loaded {
  readonly event: Extract<EngineEvent, { type: "contextLoad" }>
  /** A log line when a run was left in flight. */
  readonly note: string | undefined
}

/** The event a process starts from, given the project's record (or none). */
export const loadEvent = (root: string, maxBytes: number, record: ContextRecord | undefined): Loaded => {
  const base = { type: "contextLoad" as const, root, maxBytes }
  if (record === undefined) return { event: { ...base, pending: [], dropped: 0, lastStartedAt: undefined, lastRun: undefined }, note: undefined }
  const f = record.inFlight
  const queue = f === null ? enqueue([], record.pending) : enqueue(f.paths, record.pending)
  return {
    event: {
      ...base,
      pending: queue.pending,
      dropped: record.dropped + queue.dropped,
      lastStartedAt: record.lastStartedAt ?? undefined,
      lastRun: record.lastRun ?? undefined
    },
    note:
      f === null
        ? undefined
        : `context map: run ${f.run} was in flight when its opencode stopped; its ${f.paths.length} ${f.paths.length === 1 ? "path goes" : "paths go"} back in the queue`
  }
}

/** The record of a refresh state, written at `now` by `host`/`pid`. */
export const recordOf = (state: RefreshState, root: string, now: number, host: string, pid: number): ContextRecord => {
  const maxBytes = state.maxBytes
  const f = state.inFlight
  const last = state.lastRun
  return {
    root,
    writtenAt: now,
    pending: state.pending,
    dropped: state.dropped,
    lastStartedAt: state.lastStartedAt ?? null,
    inFlight: f === undefined ? null : { run: f.run, kind: f.kind, session: f.session ?? null, startedAt: f.startedAt, paths: f.paths, host, pid },
    lastRun:
      last === undefined
        ? null
        : {
            run: last.run,
            kind: last.kind,
            startedAt: last.startedAt,
            endedAt: last.endedAt,
            outcome: last.outcome,
            paths: last.paths,
            ...(last.reason === undefined ? {} : { reason: last.reason })
          },
    maxBytes
  }
}

/** The map as a line carries it: whether one of the five files exists, their bytes, and a stamp of their names, sizes and times. */
export const stampOf = (facts: MapFacts): MapStamp => {
  const files = mapFiles(facts)
  const order = new Map<string, number>(MAP_FILES.map((f, i) => [f, i]))
  const sorted = [...files].sort((a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0))
  // the map exists when one of its five files does: a directory holding only the user's manager.md is no map yet
  return { exists: files.length > 0, bytes: mapBytes(facts), stamp: sorted.map((f) => `${f.name}:${f.bytes}:${f.mtimeMs}`).join(",") }
}
