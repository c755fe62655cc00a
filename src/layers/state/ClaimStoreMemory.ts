/**
 * Claims in a shared in-memory table (tests): each process publishes under its pid and reads the
 * others, which are judged by the file layer's dead-holder rules (SPEC §5.2): a pid the test declared
 * dead, or a table not written for DEAD_FILE_MS, is dropped.
 */
import { Effect, Layer } from "effect"
import { judgeClaimFile } from "../../core/claims.js"
import { ClaimStore } from "../../services/state/ClaimStore.js"
import type { MemoryState } from "./MemoryState.js"

export const ClaimStoreMemory = (shared: MemoryState, pid: number, host = "memory") =>
  Layer.succeed(ClaimStore, {
    readPeers: (now) =>
      Effect.sync(() =>
        [...shared.processes.values()].filter((p) => {
          if (p.pid === pid) return false
          const verdict = judgeClaimFile(
            { name: `claims.${p.pid}.json`, isTmp: false, mtimeMs: shared.written.get(p.pid) ?? now, content: { pid: p.pid, host: p.host, startTime: null }, pidState: shared.dead.has(p.pid) ? "dead" : "alive" },
            host,
            now
          )
          if (verdict !== "delete") return true
          shared.processes.delete(p.pid)
          shared.written.delete(p.pid)
          return false
        })
      ),
    publish: (own, now) =>
      Effect.sync(() => {
        shared.processes.set(pid, { pid, host, reaped: own.reaped, claims: own.claims })
        shared.written.set(pid, now)
      }),
    removeOwn: Effect.sync(() => {
      shared.processes.delete(pid)
      shared.written.delete(pid)
    })
  })
