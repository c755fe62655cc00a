/** An in-process lock (a semaphore) that never fails open (tests). Share one instance between "processes". */
import { Effect, Layer, Ref } from "effect"
import { PoolLock } from "../services/PoolLock.js"

export const PoolLockMemory = Layer.effect(
  PoolLock,
  Effect.gen(function* () {
    const semaphore = yield* Effect.makeSemaphore(1)
    const failOpens = yield* Ref.make(0)
    return { withLock: (body) => semaphore.withPermits(1)(body), failOpens: Ref.get(failOpens) }
  })
)
