/** The shared state behind the memory layers: several "processes" (each its own pid) can share one. */
import { Effect } from "effect"
import type { Cooldown } from "../../core/cooldown.js"
import type { ProcessSnapshot } from "../../core/status.js"

export interface MemoryState {
  /** pid → that process's published claims. */
  readonly processes: Map<number, ProcessSnapshot>
  /** pid → when it last published (a claim file's mtime). */
  readonly written: Map<number, number>
  /** Pids a test declared dead (`kill(pid, 0)` would answer ESRCH). */
  readonly dead: Set<number>
  readonly cooldowns: Map<string, Cooldown>
  /** The one pool lock every "process" on this state shares. */
  readonly lock: Effect.Semaphore
  readonly trace: Array<Record<string, unknown>>
  /** The recorded decisions, formatted as in `<trace>.decisions.jsonl`. */
  readonly decisions: Array<string>
}

export const memoryState = (): MemoryState => ({
  processes: new Map(),
  written: new Map(),
  dead: new Set(),
  cooldowns: new Map(),
  lock: Effect.unsafeMakeSemaphore(1),
  trace: [],
  decisions: []
})
