/** Collects recorded trace lines in memory (tests). */
import { Effect, Layer } from "effect"
import { TraceRecorder } from "../services/TraceRecorder.js"
import type { MemoryState } from "./MemoryState.js"

export const TraceRecorderMemory = (shared: MemoryState) =>
  Layer.succeed(TraceRecorder, { input: (line) => Effect.sync(() => void shared.trace.push(line)) })
