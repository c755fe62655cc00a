/** Collects recorded trace lines and decisions in memory (tests). */
import { Effect, Layer } from "effect"
import { formatDecision } from "../../core/trace/format.js"
import { TraceRecorder } from "../../services/pool/TraceRecorder.js"
import type { MemoryState } from "../state/MemoryState.js"
import { spanned } from "../hotPath.js"

export const TraceRecorderMemory = (shared: MemoryState) =>
  Layer.succeed(TraceRecorder, {
    record: (lines, decisions) =>
      Effect.sync(() => {
        for (const l of lines) shared.trace.push(JSON.parse(JSON.stringify(l)) as Record<string, unknown>)
        for (const d of decisions) shared.decisions.push(formatDecision(d))
      }).pipe(spanned("TraceRecorder.record"))
  })
