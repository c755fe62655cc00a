/**
 * The shared-state port over files in the state directory (SPEC §5): `claims.<pid>.json` per process,
 * `cooldown.<enc>.json`, `quota.<enc>.json` and `fallback.<enc>.json` per record, `permits.json` for
 * every budget's permit entries, and `pool.lock`
 * around each transaction (stale takeover, fail-open counted in `stats`). Holders, `{ host, pid,
 * startToken }` as the files name them, are judged by pid and start token on this host and by lease
 * everywhere (core/state/holder.ts). Synchronous file calls: the transaction runs on every spawn, where
 * asynchronous file APIs measured 4× slower (SPEC §5.3). Without a usable directory every record lives
 * in this process only.
 */
import { Effect, Layer, Stream } from "effect"
import { SharedState } from "../../services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../services/state/StateDir.js"
import { claimFilesOn } from "./claimFiles.js"
import { dirChanges } from "../fs/dirChanges.js"
import { cooldownFilesOn } from "./cooldownFiles.js"
import { fallbackFilesOn } from "./fallbackFiles.js"
import { permitFilesOn, procJudge } from "./permitFiles.js"
import { poolLockOn } from "./poolLock.js"
import { quotaFilesOn } from "./quotaFiles.js"
import { sharedStateOver, type SharedStateParts } from "./sharedStateOver.js"

/** The file backend's parts over `state` (the PostgreSQL backend falls back to them). */
export const filePartsOn = (state: StateDirService, lockWaitMs: number) =>
  Effect.gen(function* () {
    // other processes' dead records are deleted only in a trusted directory (SPEC §2.1)
    const clean = state.trusted === true
    return {
      claims: yield* claimFilesOn(state),
      cooldowns: cooldownFilesOn(state.dir, clean),
      quota: quotaFilesOn(state.dir, clean),
      fallbacks: fallbackFilesOn(state.dir, clean),
      permits: permitFilesOn(state.dir, procJudge(state.host)),
      lock: yield* poolLockOn(state, lockWaitMs),
      // every process's writes show in the directory itself: nothing to announce
      changes: { stream: Stream.map(dirChanges(state.dir), () => undefined), touch: Effect.void }
    } satisfies SharedStateParts
  })

/** The port over the `StateDir` in context; `lockWaitMs`: how long a transaction waits for `pool.lock` before going ahead. */
export const SharedStateFile = (lockWaitMs: number) =>
  Layer.scoped(
    SharedState,
    Effect.gen(function* () {
      return yield* sharedStateOver(yield* filePartsOn(yield* StateDir, lockWaitMs))
    })
  )
