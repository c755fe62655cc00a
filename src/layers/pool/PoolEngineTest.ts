/**
 * The engine over memory backends (tests): the shared state of one memory "process" (SharedStateMemory
 * through the selector, and its identity), the rest (log, aborts, recorder, pool) given by the test.
 */
import { Effect, Layer } from "effect"
import type { MemoryState } from "../state/MemoryState.js"
import { sharedStateLayer, type SharedStateOptions } from "../state/sharedStateLayer.js"
import { StateDirMemory } from "../state/StateDirMemory.js"
import type { EngineConfig } from "../../services/pool/PoolEngine.js"
import { pinLogs, pinned } from "../opencode/LoggerAppLog.js"
import { makeEngine } from "./PoolEngineShell.js"

/** Memory process `pid` on `shared`: its identity and its shared-state port (`wrap`: the test's view of the port, a commit counter say). */
export const memoryProcess = (shared: MemoryState, pid: number, host = "memory", wrap?: SharedStateOptions["wrap"]) =>
  Layer.merge(StateDirMemory(pid, host), sharedStateLayer({ backend: "memory", shared, pid, host, wrap }).pipe(Layer.provide(StateDirMemory(pid, host))))

/**
 * The engine of memory process `pid` on `shared` (scoped: closing the scope disposes it); it logs where
 * it was built whoever calls it (a test calls it from its own program).
 */
export const makeTestEngine = (config: EngineConfig, shared: MemoryState, pid: number, host?: string, wrap?: SharedStateOptions["wrap"]) =>
  makeEngine(config).pipe(
    Effect.flatMap((engine) => Effect.map(pinLogs, (pin) => pinned(pin, engine))),
    Effect.provide(memoryProcess(shared, pid, host, wrap))
  )
