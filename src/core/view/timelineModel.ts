/**
 * The timeline of a spawn trace (issue 24): what `ocpool replay --timeline` draws. Built from the
 * trace's input lines and the decisions they produced (core/view/timeline.ts); drawn as a
 * self-contained HTML page or a static SVG (core/view/timelineHtml.ts). Plain data, JSON-safe.
 */

/** How a claim ended: `open` when the trace ends with it still held. */
export type BarOutcome = "ok" | "limit" | "hung" | "spinning" | "aborted" | "failed" | "open"

export const BAR_OUTCOMES: ReadonlyArray<BarOutcome> = ["ok", "limit", "hung", "spinning", "aborted", "failed", "open"]

/** One lane per slot (in slot order), then the special lanes that have anything on them. */
export interface Lane {
  /** `slot-1`, `slot-2`, …; `fallback`, `quota`, `context`, `refused`. */
  readonly id: string
  /** `1. fakeB/pool-b` for a slot (the model the pool line gave it last), else the lane's name. */
  readonly label: string
  readonly kind: "slot" | "fallback" | "quota" | "context" | "refused"
  /** Slot number for slot lanes. */
  readonly slot?: number
}

/** One claim from its route to its release (or the trace's end). */
export interface Bar {
  readonly claim: string
  readonly lane: string
  readonly start: number
  readonly end: number
  readonly outcome: BarOutcome
  readonly base: string
  readonly agent: string
  readonly model: string
  /** The routing pass that placed it: first, second or overflow. */
  readonly pass: string
  /** The bound child session, when the trace bound one. */
  readonly session?: string
  /** `explainDecision` of the route, then of the abort and release (the same text as `--explain`), one per line. */
  readonly explain: string
}

/** A cooldown: a model (on every lane whose slot runs it) shaded from the decision to its `until`. */
export interface Cool {
  readonly model: string
  /** Lanes whose slot ran the model at the time. */
  readonly lanes: ReadonlyArray<string>
  readonly start: number
  readonly end: number
  readonly reason: string
  readonly strike: number
  readonly scope: "model" | "provider"
  readonly explain: string
}

/** A point event: an abort and its outcome, a fallback switch, a quota line, a refusal, a context run. */
export interface Mark {
  readonly at: number
  readonly lane: string
  readonly kind: "abort" | "abort-failed" | "switch" | "model" | "quota" | "refuse" | "context-start" | "context-skip" | "context-done"
  /** Short label drawn beside the mark. */
  readonly label: string
  readonly explain: string
}

export interface Timeline {
  /** The trace's name as given (file name), for the title. */
  readonly title: string
  /** First and last `at` seen (equal for a one-line trace; 0 and 0 for an empty one). */
  readonly start: number
  readonly end: number
  readonly lanes: ReadonlyArray<Lane>
  readonly bars: ReadonlyArray<Bar>
  readonly cools: ReadonlyArray<Cool>
  readonly marks: ReadonlyArray<Mark>
  /** Trace lines and decisions read, for the footer. */
  readonly lines: number
  readonly decisions: number
}
