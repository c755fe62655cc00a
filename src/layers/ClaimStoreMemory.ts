/** Claims in a shared in-memory table: each process publishes under its pid and reads the others (tests). */
import { Effect, Layer } from "effect"
import { ClaimStore } from "../services/ClaimStore.js"
import type { MemoryState } from "./MemoryState.js"

export const ClaimStoreMemory = (shared: MemoryState, pid: number, host = "memory") =>
  Layer.succeed(ClaimStore, {
    readPeers: () => Effect.sync(() => [...shared.processes.values()].filter((p) => p.pid !== pid)),
    publish: (own) => Effect.sync(() => void shared.processes.set(pid, { pid, host, reaped: own.reaped, claims: own.claims })),
    removeOwn: Effect.sync(() => void shared.processes.delete(pid))
  })
