/**
 * Room for a writing opencode between the sweeps' transactions (docs/DECISIONS.md 36): after each
 * transaction, `PRAGMA data_version` tells whether another connection has committed since; while that
 * happened in the last 2 s, the next transaction waits a few milliseconds (the core decides how long).
 */
import { Clock, Effect } from "effect"
import { pauseAfterChunk } from "../../core/retention/chunks.js"
import { RetentionStore } from "../../services/retention/RetentionStore.js"

/** An effect to run after each committed transaction; it returns whether it paused. */
export const politeness = Effect.gen(function* () {
  const store = yield* RetentionStore
  let version = yield* store.dataVersion
  let lastOtherWriteAt: number | undefined
  return (more: boolean): Effect.Effect<boolean> =>
    Effect.gen(function* () {
      const seen = yield* store.dataVersion
      const at = yield* Clock.currentTimeMillis
      if (seen !== version) lastOtherWriteAt = at
      version = seen
      const pause = pauseAfterChunk(at, lastOtherWriteAt)
      if (pause === 0 || !more) return false
      yield* Effect.sleep(pause)
      return true
    })
})
