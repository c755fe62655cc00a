/**
 * In-memory layers for the shared-state services (tests pick layers, never monkey-patch). Several
 * "processes" can share one `MemoryState`: each gets its own pid and sees the others as peers.
 */
import { Effect, Layer, Ref } from "effect"
import type { Cooldown } from "../core/cooldown.js"
import type { ResolvedPool } from "../core/source.js"
import type { ProcessSnapshot } from "../core/status.js"
import { ClaimStore } from "../services/ClaimStore.js"
import { CooldownStore } from "../services/CooldownStore.js"
import { PoolConfig } from "../services/PoolConfig.js"
import { PoolLock } from "../services/PoolLock.js"
import { StateDir } from "../services/StateDir.js"
import { TraceRecorder } from "../services/TraceRecorder.js"

export interface MemoryState {
  /** pid → that process's published claims. */
  readonly processes: Map<number, ProcessSnapshot>
  readonly cooldowns: Map<string, Cooldown>
  readonly trace: Array<Record<string, unknown>>
}

export const memoryState = (): MemoryState => ({ processes: new Map(), cooldowns: new Map(), trace: [] })

export const StateDirMemory = (pid: number, host = "memory") => Layer.succeed(StateDir, { dir: undefined, pid, host, startTime: null })

export const ClaimStoreMemory = (shared: MemoryState, pid: number, host = "memory") =>
  Layer.succeed(ClaimStore, {
    readPeers: () => Effect.sync(() => [...shared.processes.values()].filter((p) => p.pid !== pid)),
    publish: (own) => Effect.sync(() => void shared.processes.set(pid, { pid, host, reaped: own.reaped, claims: own.claims })),
    removeOwn: Effect.sync(() => void shared.processes.delete(pid))
  })

export const CooldownStoreMemory = (shared: MemoryState) =>
  Layer.succeed(CooldownStore, {
    readAll: () => Effect.sync(() => new Map(shared.cooldowns)),
    write: (records) => Effect.sync(() => records.forEach((r) => shared.cooldowns.set(r.model, r))),
    remove: (model) => Effect.sync(() => void shared.cooldowns.delete(model))
  })

/** A lock that is always free (one process), counting nothing. */
export const PoolLockMemory = Layer.effect(
  PoolLock,
  Effect.gen(function* () {
    const semaphore = yield* Effect.makeSemaphore(1)
    const failOpens = yield* Ref.make(0)
    return { withLock: (body) => semaphore.withPermits(1)(body), failOpens: Ref.get(failOpens) }
  })
)

export const TraceRecorderMemory = (shared: MemoryState) =>
  Layer.succeed(TraceRecorder, { input: (line) => Effect.sync(() => void shared.trace.push(line)), enabled: true })

export const PoolConfigMemory = (pool: ResolvedPool) => Layer.succeed(PoolConfig, { load: Effect.succeed(pool), watched: [] })
