/** The pool lock of a shared memory state (tests): one semaphore for every "process" on it; never fails open. */
import { Effect, Layer } from "effect"
import { PoolLock } from "../../services/state/PoolLock.js"
import type { MemoryState } from "./MemoryState.js"

export const PoolLockMemory = (shared: MemoryState) =>
  Layer.succeed(PoolLock, { withLock: (body) => shared.lock.withPermits(1)(body), failOpens: Effect.succeed(0) })
