/** Spawn-trace recording (TRACE.md §4, SPEC §5.5): the input lines applied, and the decisions beside them. */
import { Context, type Effect } from "effect"
import type { Decision } from "../../core/trace/decision.js"
import type { TraceInput } from "../../core/trace/input.js"

export interface TraceRecorderService {
  /** Appends the lines one event applied, in order, and the decisions the machine made of them. */
  readonly record: (lines: ReadonlyArray<TraceInput>, decisions: ReadonlyArray<Decision>) => Effect.Effect<void>
}

export class TraceRecorder extends Context.Tag("opencode-pool/TraceRecorder")<TraceRecorder, TraceRecorderService>() {}
