/** The shared state behind the memory layers: several "processes" (each its own pid) can share one. */
import type { Cooldown } from "../core/cooldown.js"
import type { ProcessSnapshot } from "../core/status.js"

export interface MemoryState {
  /** pid → that process's published claims. */
  readonly processes: Map<number, ProcessSnapshot>
  readonly cooldowns: Map<string, Cooldown>
  readonly trace: Array<Record<string, unknown>>
  /** The recorded decisions, formatted as in `<trace>.decisions.jsonl`. */
  readonly decisions: Array<string>
}

export const memoryState = (): MemoryState => ({ processes: new Map(), cooldowns: new Map(), trace: [], decisions: [] })
