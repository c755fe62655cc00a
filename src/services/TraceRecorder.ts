/** Spawn-trace recording (TRACE.md §4, SPEC §5.5): input lines to the trace, decisions beside it. */
import { Context, type Effect } from "effect"

export interface TraceRecorderService {
  /** Appends an input line (its `at` is clamped so it never goes backwards). */
  readonly input: (line: Record<string, unknown> & { readonly at: number; readonly type: string }) => Effect.Effect<void>
}

export class TraceRecorder extends Context.Tag("opencode-pool/TraceRecorder")<TraceRecorder, TraceRecorderService>() {}
