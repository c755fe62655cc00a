/**
 * The shared pool state one decision reads (SPEC §5): the other processes' claims and the cooldown
 * table every process writes, read under the pool lock by the shell. A turn (turn.ts) turns it into
 * what a trace line carries: `peers` (live load by model) and `peerCooling`. Types only.
 */
import type { CooldownTable } from "../pool/cooldown.js"
import type { ProcessSnapshot } from "../status.js"
import type { GroupBudget } from "../limits/learned.js"

export interface PoolSnapshot {
  /** Empty when the decision does not route (see `needsOf`). */
  readonly peers: ReadonlyArray<ProcessSnapshot>
  readonly cooldowns: CooldownTable
  /** The model groups' learned budgets (issue 35), when the event declared `learned`. */
  readonly learned?: ReadonlyArray<GroupBudget> | undefined
}
