/** The shared state behind the memory layers: several "processes" (each its own pid) can share one. */
import { Effect } from "effect"
import type { Cooldown } from "../../core/pool/cooldown.js"
import type { FallbackRecord } from "../../core/quota/fallbackRecord.js"
import type { QuotaRecord } from "../../core/quota/record.js"
import type { GroupBudget } from "../../core/limits/learned.js"
import type { CounterRow } from "../../core/metrics/counters.js"
import type { Holder } from "../../core/state/holder.js"
import type { EngineRegistration } from "../../core/state/engines.js"
import { permitTable, type PermitTable } from "./permitJudge.js"
import type { ProcessSnapshot } from "../../core/status.js"

export interface MemoryState {
  /** pid → that process's published claims. */
  readonly processes: Map<number, ProcessSnapshot>
  /** pid → the holder of that table and the lease its last publish gave it (a claim file's mtime + DEAD_FILE_MS). */
  readonly holders: Map<number, { readonly holder: Holder; readonly leaseUntil: number }>
  /** Pids a test declared dead (`kill(pid, 0)` would answer ESRCH); a process group whose pgid is here has no live member. */
  readonly dead: Set<number>
  readonly cooldowns: Map<string, Cooldown>
  readonly quota: Map<string, QuotaRecord>
  /** session → its fallback record. */
  readonly fallbacks: Map<string, FallbackRecord>
  /** Every budget's permit entries and when they were last written (the lease of another host's entries). */
  readonly permits: PermitTable
  /** The context map's entries, key → body. */
  readonly context: Map<string, string>
  /** pid → the plugin engine that process registered (issue 33), with its host. */
  readonly engines: Map<number, EngineRegistration & { readonly host: string }>
  /** group → its learned budget (issue 35). */
  readonly learned: Map<string, GroupBudget>
  /** Every host's counters (issue 36), keyed by host, name and labels. */
  readonly counters: Map<string, CounterRow>
  /** The one pool lock every "process" on this state shares. */
  readonly lock: Effect.Semaphore
  /** Called after every commit that wrote something (the memory port's change feed, issue 24). */
  readonly watchers: Set<() => void>
  readonly trace: Array<Record<string, unknown>>
  /** The recorded decisions, formatted as in `<trace>.decisions.jsonl`. */
  readonly decisions: Array<string>
}

export const memoryState = (): MemoryState => ({
  processes: new Map(),
  holders: new Map(),
  dead: new Set(),
  cooldowns: new Map(),
  quota: new Map(),
  fallbacks: new Map(),
  permits: permitTable(),
  context: new Map(),
  engines: new Map(),
  learned: new Map(),
  counters: new Map(),
  lock: Effect.unsafeMakeSemaphore(1),
  watchers: new Set(),
  trace: [],
  decisions: []
})
