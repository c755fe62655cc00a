/**
 * The one place a shared-state backend is chosen: files in the state directory (opencode, `ocpool`),
 * or a memory state several test "processes" share. Everyone else names only `SharedState`.
 */
import { Effect, Layer } from "effect"
import { SharedState, type SharedStateService } from "../../services/state/SharedState.js"
import type { StateDir } from "../../services/state/StateDir.js"
import type { MemoryState } from "./MemoryState.js"
import { SharedStateFile } from "./SharedStateFile.js"
import { SharedStateMemory } from "./SharedStateMemory.js"

interface Common {
  /** Wraps the port (the stress test checks global loads inside each transaction). */
  readonly wrap?: ((inner: SharedStateService) => SharedStateService) | undefined
}

export type SharedStateOptions =
  | (Common & { readonly backend: "file"; readonly lockWaitMs: number })
  | (Common & { readonly backend: "memory"; readonly shared: MemoryState; readonly pid: number; readonly host?: string })

/** The port over the chosen backend; the file backend reads `StateDir` (and logs through `AppLog` when there is one). */
export const sharedStateLayer = (options: SharedStateOptions): Layer.Layer<SharedState, never, StateDir> => {
  const base = options.backend === "file" ? SharedStateFile(options.lockWaitMs) : SharedStateMemory(options.shared, options.pid, options.host)
  const wrap = options.wrap
  return wrap === undefined ? base : Layer.effect(SharedState, Effect.map(SharedState, wrap)).pipe(Layer.provide(base))
}
