/**
 * The one place a shared-state backend is chosen: the state directory's SQLite database (opencode,
 * `ocpool`), PostgreSQL shared by several machines (fleet mode, falling back to it), or a memory state
 * several test "processes" share. Everyone else names only `SharedState`.
 */
import { Effect, Layer } from "effect"
import { SharedState, type SharedStateService } from "../../services/state/SharedState.js"
import type { StateDir } from "../../services/state/StateDir.js"
import type { StateBackend } from "../../core/state/fleet.js"
import type { MemoryState } from "./MemoryState.js"
import { SharedStateSqlite } from "./SharedStateSqlite.js"
import { SharedStateMemory } from "./SharedStateMemory.js"

/** Whether the files a fleet URL names can be read (a part of choosing the backend: here, with the choice). */
export { pgFileProblem, withReadableFiles } from "./pgFiles.js"

interface Common {
  /** Wraps the port (the stress test checks global loads inside each transaction). */
  readonly wrap?: ((inner: SharedStateService) => SharedStateService) | undefined
  /**
   * Counters (issue 36, the plugin's option `metrics`): whether the backend counts its own events
   * (fail-opens, fleet fallbacks) into the commits; default true. What the engines count they decide themselves.
   */
  readonly metrics?: boolean | undefined
}

export type SharedStateOptions =
  /** The embedded default (issue 32): `state.db` in the state directory. */
  | (Common & { readonly backend: "sqlite"; readonly lockWaitMs: number; readonly view?: boolean })
  /** Fleet mode (issue 22): PostgreSQL at `url`, the state directory's database when it does not answer. */
  | (Common & { readonly backend: "postgres"; readonly url: string; readonly schema: string; readonly leaseMs: number; readonly lockWaitMs: number; readonly view?: boolean })
  | (Common & { readonly backend: "memory"; readonly shared: MemoryState; readonly pid: number; readonly host?: string })

/** The port over the chosen backend; the embedded one reads `StateDir` (and logs through `AppLog` when there is one). */
export const sharedStateLayer = (options: SharedStateOptions): Layer.Layer<SharedState, never, StateDir> => {
  const base =
    options.backend === "sqlite"
      ? SharedStateSqlite(options.lockWaitMs, options.view === true, options.metrics !== false)
      : options.backend === "postgres"
        ? // loaded only in fleet mode: the PostgreSQL client probes the runtime when it loads (a
          // `new Response`, Node's whole fetch stack), ~15 ms of every embedded start (bench:coldstart)
          Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./SharedStatePg.js")), (pg) => pg.SharedStatePg(options)))
        : SharedStateMemory(options.shared, options.pid, options.host)
  const wrap = options.wrap
  return wrap === undefined ? base : Layer.effect(SharedState, Effect.map(SharedState, wrap)).pipe(Layer.provide(base))
}

/** The selector's options for the backend the settings chose (core/state/fleet.ts); `view`: a process that only looks (no lease, no reaping). */
export const backendOptions = (state: StateBackend, lockWaitMs: number, view = false): SharedStateOptions =>
  state.backend === "postgres" ? { backend: "postgres", url: state.url, schema: state.schema, leaseMs: state.leaseMs, lockWaitMs, view } : { backend: "sqlite", lockWaitMs, view }
