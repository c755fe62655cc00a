/**
 * The plugin's decision engine as a service: opencode events in, the core machine's decisions carried
 * out (claims published, cooldown, quota and fallback records written through `SharedState`, aborts
 * called, lines recorded, logs). One event at a time; after dispose nothing is written.
 */
import type { BudgetInfo } from "../../core/permits/view.js"
import { Context, type Effect } from "effect"
import type { EngineEvent, Applied } from "../../core/engine/step.js"
import type { EngineState } from "../../core/engine/state.js"
import type { JsonRecord } from "../../core/json.js"
import type { ResolvedPool } from "../../core/source.js"

/** Raised out of `tool.execute.before` on purpose: the one place a hook fails a call (SPEC §6.3). */
export class VariantRefused extends Error {
  constructor(
    readonly requested: string,
    readonly base: string
  ) {
    super(`opencode-pool: "${requested}" is a pool slot variant and cannot be spawned by name; spawn "${base}" and the pool picks the slot`)
    this.name = "VariantRefused"
  }
}

/** What an engine is made with (the plugin's settings, or a test's). */
export interface EngineConfig {
  /** `firstTokenMs` (issue 35): absent, no first-token rule (the plugin always passes its option, 90 s by default). */
  readonly timing: { readonly hangMinAgeMs: number; readonly hangSilenceMs: number; readonly firstTokenMs?: number | undefined }
  readonly reapMs: number
  /** The delegation policy (US-1); `false` leaves `build` and `plan` alone. Default true. */
  readonly delegate?: boolean
  /** The context map (SPEC §13); `false` injects none of its agents, rules and commands. Default true. */
  readonly contextMap?: boolean
  /** The option `fallbackModels` (US-50), validated; none by default. */
  readonly fallbacks?: ReadonlyArray<string>
  /** The context map's automatic refresh (issue 23); absent (or without a ContextStore) nothing is collected and no run starts. */
  readonly refresh?: { readonly root: string; readonly maxBytes: number } | undefined
  /** Counters in the shared state (issue 36, option `metrics`); `false`: the engine counts nothing. Default true. */
  readonly metrics?: boolean
}

export interface PoolEngineService {
  /** Applies one event (one at a time) and carries out its effects; `undefined` once disposed. */
  readonly apply: (event: EngineEvent) => Effect.Effect<Applied | undefined>
  /** `tool.execute.before` for `task`: rewrites `args.subagent_type`, or fails for a hand-named variant. */
  readonly beforeTask: (session: string, call: string, args: Record<string, unknown>) => Effect.Effect<void, VariantRefused>
  /** The timer's sweep. */
  readonly sweep: Effect.Effect<void>
  readonly applyPool: (pool: ResolvedPool) => Effect.Effect<void>
  /** The context map's record read at start (issue 23): the project root and the refresh queue; nothing when the refresh is off. */
  readonly loadContext: Effect.Effect<void>
  /** The `config` hook: injects agents and variants into opencode's config object (SPEC §4). */
  readonly configure: (cfg: JsonRecord) => Effect.Effect<void>
  /** Loads the pool again (a watched file changed) and binds the variants again. */
  readonly reload: Effect.Effect<void>
  /**
   * `pool_status`'s text, its compact view last (issue 24), from one snapshot of the shared state.
   * `budgets`: the heavy-work budgets the permits service knows (its capacities); that snapshot's
   * permits are shown under them when some permit is held or waited for.
   */
  readonly statusText: (budgets?: ReadonlyArray<BudgetInfo>) => Effect.Effect<string>
  /** The current state (read-only; tests and status). */
  readonly state: Effect.Effect<EngineState>
  /** Waits until no abort is in flight (tests). */
  readonly settle: Effect.Effect<void>
  /** How many aborts are in flight. */
  readonly aborting: Effect.Effect<number>
}

export class PoolEngine extends Context.Tag("opencode-pool/PoolEngine")<PoolEngine, PoolEngineService>() {}
