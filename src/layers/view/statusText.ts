/**
 * `pool_status`'s text (US-6, issue 24): one snapshot, the view showing what the recorded `status`
 * decision says (one status, issue 20), then the lock's fail-opens, the fleet's fallbacks, and the
 * compact view of the same snapshot last (the picture the live view draws).
 */
import { Clock, Effect } from "effect"
import type { PoolSnapshot } from "../../core/engine/snapshot.js"
import { slotsOf, type EngineState } from "../../core/engine/state.js"
import type { Applied, EngineEvent } from "../../core/engine/step.js"
import { budgetsJson, type BudgetInfo } from "../../core/permits/view.js"
import { renderStatus, statusView } from "../../core/status.js"
import { compactView, GLANCE } from "../../core/view/live.js"
import { ALL_RECORDS, SharedState, type Needs, type SharedSnapshot } from "../../services/state/SharedState.js"
import { StateDir } from "../../services/state/StateDir.js"
import { traced } from "../hotPath.js"

interface StatusDeps {
  readonly apply: (event: EngineEvent, given: { readonly now: number; readonly snapshot: PoolSnapshot }) => Effect.Effect<Applied | undefined>
  readonly stateNow: Effect.Effect<EngineState>
  /** A view's read (without the lock), its problems logged. */
  readonly read: (now: number, needs: Needs) => Effect.Effect<SharedSnapshot>
  readonly reapMs: number
}

export const makeStatusText = (deps: StatusDeps) =>
  Effect.gen(function* () {
    const store = yield* SharedState
    const self = yield* StateDir
    return traced("PoolEngine.statusText")(function* (budgets?: ReadonlyArray<BudgetInfo>) {
      const now = yield* Clock.currentTimeMillis
      const snapshot = yield* deps.read(now, ALL_RECORDS)
      const out = yield* deps.apply({ type: "status" }, { now, snapshot })
      const decided = out?.decisions.find((d) => d.type === "status")
      const state = yield* deps.stateNow
      const processes = [{ pid: self.pid, host: self.host, reaped: state.machine.reaped, claims: state.machine.claims, self: true }, ...snapshot.peers]
      const view = statusView({
        origin: state.origin,
        slots: slotsOf(state),
        processes,
        cooldowns: snapshot.cooldowns,
        now,
        warnings: state.poolWarnings,
        quota: snapshot.quota,
        learned: snapshot.learned,
        fallbacks: snapshot.fallbacks,
        // the heavy-work budgets over this snapshot's permits: one read for the whole view (issue 34)
        ...(budgets === undefined ? {} : { permits: budgetsJson(budgets, snapshot.permits) }),
        ...(decided?.type === "status" ? { decided } : {})
      })
      const { failOpens, fallbacks: onFiles } = yield* store.stats
      const fleet = onFiles !== undefined && onFiles > 0 ? `\nfleet fallbacks: ${onFiles} (PostgreSQL did not answer; decided on the state directory)` : ""
      const reaper = { intervalMs: deps.reapMs, lastSweepAt: state.lastSweepAt }
      return `${renderStatus(view, { now, processes, reaper })}${failOpens > 0 ? `\nlock fail-opens: ${failOpens}` : ""}${fleet}${GLANCE}\n${compactView(view, now).join("\n")}`
    })
  })
