/** The short `pool.lock` that makes read → decide → publish atomic across processes (SPEC §5.3). */
import { Context, type Effect } from "effect"

export interface PoolLockService {
  /**
   * Runs `body` holding the lock. After `lockWaitMs` without it, runs `body` anyway (fail-open, logged
   * at most once a minute and counted): the pool never blocks work.
   */
  readonly withLock: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Picks that went ahead without the lock, since start. */
  readonly failOpens: Effect.Effect<number>
}

export class PoolLock extends Context.Tag("opencode-pool/PoolLock")<PoolLock, PoolLockService>() {}
