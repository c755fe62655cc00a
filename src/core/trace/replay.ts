/**
 * Replay of a whole trace, line by line (TRACE.md §1): blank lines skipped, the first problem stops
 * the replay and names its line. Pure; the CLI streams lines into `feed` and the tests call `replayText`.
 */
import type { Slot } from "../pool/pool.js"
import type { ReaperTiming } from "../pool/reaper.js"
import { decodeLine, InputError, type TraceInput } from "./input.js"
import { initialState, step, type Decision, type TraceState } from "./machine.js"

export interface ReplayOptions {
  /** `--pool FILE`: slots applied as a `pool` line at the first line's `at`, before that line. */
  readonly pool?: ReadonlyArray<Slot> | undefined
  readonly timing?: ReaperTiming | undefined
  /** See `MachineOptions.activityPruneMin`. */
  readonly activityPruneMin?: number | undefined
}

export interface ReplayCursor {
  readonly state: TraceState
  /** Whether the `--pool` slots still have to be applied. */
  readonly poolPending: boolean
}

export const startReplay = (options: ReplayOptions = {}): ReplayCursor => ({ state: initialState, poolPending: options.pool !== undefined })

export type FeedResult =
  | {
      readonly _tag: "Ok"
      readonly cursor: ReplayCursor
      /** The decoded line (`undefined` for a blank one), for views built beside the replay (`--timeline`). */
      readonly input: TraceInput | undefined
      readonly decisions: ReadonlyArray<Decision>
      readonly warnings: ReadonlyArray<string>
    }
  | { readonly _tag: "Invalid"; readonly message: string }

const NOTHING: ReadonlyArray<never> = []

/** Blank: empty or whitespace only. Lines almost always start with `{`, which answers at once. */
const isBlank = (line: string): boolean => line.charCodeAt(0) !== 123 && line.trim() === ""

/** Feeds one raw line (line numbers are the caller's). */
export const feed = (cursor: ReplayCursor, line: string, options: ReplayOptions = {}): FeedResult => {
  if (isBlank(line)) return { _tag: "Ok", cursor, input: undefined, decisions: NOTHING, warnings: NOTHING }
  const input = decodeLine(line)
  if (input instanceof InputError) return { _tag: "Invalid", message: input.message }
  let state = cursor.state
  let warnings: ReadonlyArray<string> = NOTHING
  if (cursor.poolPending && options.pool !== undefined) {
    const pooled = step(state, { type: "pool", at: input.at, slots: options.pool.map((s) => ({ model: s.model, weight: s.weight })) }, options)
    if (pooled._tag === "Invalid") return pooled
    state = pooled.state
    warnings = pooled.warnings
  }
  const result = step(state, input, options)
  if (result._tag === "Invalid") return result
  return {
    _tag: "Ok",
    cursor: { state: result.state, poolPending: false },
    input,
    decisions: result.decisions,
    warnings: warnings.length === 0 ? result.warnings : [...warnings, ...result.warnings]
  }
}

export interface ReplayOutcome {
  readonly decisions: ReadonlyArray<Decision>
  readonly warnings: ReadonlyArray<string>
  /** The first problem, with its 1-based line number. */
  readonly error?: { readonly line: number; readonly message: string }
  readonly state: TraceState
}

/** Replays a whole text. */
export const replayText = (text: string, options: ReplayOptions = {}): ReplayOutcome => {
  const lines = text.split("\n")
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  let cursor = startReplay(options)
  const decisions: Array<Decision> = []
  const warnings: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const r = feed(cursor, lines[i]!, options)
    if (r._tag === "Invalid") return { decisions, warnings, error: { line: i + 1, message: r.message }, state: cursor.state }
    cursor = r.cursor
    for (const d of r.decisions) decisions.push(d)
    for (const w of r.warnings) warnings.push(w)
  }
  return { decisions, warnings, state: cursor.state }
}
