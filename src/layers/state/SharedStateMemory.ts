/**
 * The shared-state port in memory (tests): several "processes" (each its own pid) share one
 * `MemoryState`, its one lock and its tables. A claims table's holder is `{ host, pid, startToken }`
 * with the lease its last publish gave it, judged by the file backend's rules (core/state/holder.ts):
 * a pid the test declared dead, or a lease run out, and the table is dropped. Permit entries are judged
 * the same way (core/state/holder.ts `permitGone`): a pid, or a group's pgid, the test declared dead is
 * gone; a memory process has no start token. A registered plugin engine (issue 33) is live while its pid
 * is not declared dead (another host's: while its holder's lease holds).
 */
import { Effect, Layer, Stream } from "effect"
import { DEAD_FILE_MS } from "../../core/constants.js"
import { holderGone } from "../../core/state/holder.js"
import { byStart, engineLive } from "../../core/state/engines.js"
import { SharedState } from "../../services/state/SharedState.js"
import { contextInMemory, cooldownsInMemory, countersInMemory, fallbacksInMemory, learnedInMemory, quotaInMemory } from "./memoryRecords.js"
import type { MemoryState } from "./MemoryState.js"
import { permitsInMemory, type PermitJudge } from "./permitJudge.js"
import { sharedStateOver, type ClaimRecords, type EngineRecords, type StateLock } from "./sharedStateOver.js"

/** Process `pid`'s claims part: its table published under its pid, the others' read while their holder holds. */
const claimsInMemory = (shared: MemoryState, pid: number, host: string): ClaimRecords => {
  const forget = (p: number) => {
    shared.processes.delete(p)
    shared.holders.delete(p)
  }
  return {
    readPeers: (now) =>
      Effect.sync(() =>
        [...shared.processes.values()].filter((p) => {
          if (p.pid === pid) return false
          const held = shared.holders.get(p.pid)
          const gone = held !== undefined && holderGone(held.holder, held.leaseUntil, { pidState: shared.dead.has(p.pid) ? "dead" : "alive" }, host, now)
          if (gone) forget(p.pid)
          return !gone
        })
      ),
    publish: (own, now) =>
      Effect.sync(() => {
        shared.processes.set(pid, { pid, host, reaped: own.reaped, claims: own.claims })
        // a memory process has no start token: its pid is never reused under it
        shared.holders.set(pid, { holder: { host, pid, startToken: null }, leaseUntil: now + DEAD_FILE_MS })
      }),
    removeOwn: Effect.sync(() => forget(pid))
  }
}

/** Process `pid`'s engine registration; every process's read, judged as the SQL backends judge theirs. */
const enginesInMemory = (shared: MemoryState, pid: number, host: string): EngineRecords => ({
  readAll: (now) =>
    Effect.sync(() =>
      byStart(
        [...shared.engines.entries()].map(([p, e]) => ({
          host: e.host,
          pid: p,
          version: e.version,
          backend: e.backend,
          since: e.since,
          live: engineLive({ host: e.host, pid: p, startToken: null }, shared.holders.get(p)?.leaseUntil, { pidState: shared.dead.has(p) ? "dead" : "alive" }, host, now),
          local: e.host === host
        }))
      )
    ),
  register: (e) =>
    Effect.sync(() => {
      for (const p of shared.engines.keys()) if (shared.dead.has(p) && shared.engines.get(p)?.host === host) shared.engines.delete(p)
      shared.engines.set(pid, { ...e, host })
    }),
  removeOwn: Effect.sync(() => void shared.engines.delete(pid))
})

/** Holders as the test declared them: alive unless their pid (or their group's pgid) is in `dead`. */
const memoryJudge = (shared: MemoryState, host: string): PermitJudge => ({
  host,
  facts: (pid) => ({ pidState: shared.dead.has(pid) ? "dead" : "alive" }),
  groupAlive: (pgid) => !shared.dead.has(pgid)
})

/** The one semaphore of a shared memory state; never fails open. */
const lockInMemory = (shared: MemoryState): StateLock => ({ withLock: (body) => shared.lock.withPermits(1)(body), failOpens: Effect.succeed(0) })

/** Every process's commits on `shared`, announced to every subscriber. */
const changesInMemory = (shared: MemoryState) => ({
  stream: Stream.asyncScoped<void>((emit) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const watcher = () => void emit.single(undefined)
        shared.watchers.add(watcher)
        return watcher
      }),
      (watcher) => Effect.sync(() => void shared.watchers.delete(watcher))
    )
  ),
  touch: Effect.sync(() => {
    for (const w of shared.watchers) w()
  })
})

/** The port for process `pid` on `shared`, as a value (a view with nothing to read uses an empty one). */
export const memoryPort = (shared: MemoryState, pid: number, host = "memory") =>
  sharedStateOver({
    claims: claimsInMemory(shared, pid, host),
    cooldowns: cooldownsInMemory(shared.cooldowns),
    quota: quotaInMemory(shared.quota),
    fallbacks: fallbacksInMemory(shared.fallbacks),
    permits: permitsInMemory(memoryJudge(shared, host), shared.permits),
    context: contextInMemory(shared.context),
    engines: enginesInMemory(shared, pid, host),
    learned: learnedInMemory(shared.learned),
    counters: countersInMemory(shared.counters, host),
    lock: lockInMemory(shared),
    changes: changesInMemory(shared)
  })

/** The port for process `pid` on `shared`. */
export const SharedStateMemory = (shared: MemoryState, pid: number, host = "memory") => Layer.effect(SharedState, memoryPort(shared, pid, host))
