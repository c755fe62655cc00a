/**
 * The permits port as the plugin and the CLI build it (issue 21): the budgets of the settings with
 * capacity `auto` resolved from the machine's facts once, at start, over whichever shared state is
 * provided (the backend is chosen by sharedStateLayer). `resolveBudgets` is the one resolution of the
 * budgets (issue 34): the CLI's views (`status`, `top`, `doctor`) resolve theirs through it too.
 */
import { Effect, Layer } from "effect"
import { budgetsOf, type BudgetSetting } from "../../core/permits/settings.js"
import type { BudgetInfo } from "../../core/permits/view.js"
import { MachineFacts } from "../../services/permits/MachineFacts.js"
import type { Permits } from "../../services/permits/Permits.js"
import type { SharedState } from "../../services/state/SharedState.js"
import { MachineFactsProc } from "./MachineFactsProc.js"
import { PermitsShell } from "./PermitsShell.js"

/** Every budget of `settings` with its capacity in units and how it was found, capacity `auto` from the machine's facts as read now. */
export const resolveBudgets = (settings: ReadonlyArray<BudgetSetting>): Effect.Effect<ReadonlyArray<BudgetInfo>, never, MachineFacts> =>
  Effect.flatMap(MachineFacts, (m) => Effect.map(m.read, (facts) => budgetsOf(settings, facts.cpus)))

export const permitsLayer = (
  settings: ReadonlyArray<BudgetSetting>,
  options: { readonly facts?: Layer.Layer<MachineFacts> | undefined; readonly pollMs?: number | undefined; readonly metrics?: boolean | undefined } = {}
): Layer.Layer<Permits | MachineFacts, never, SharedState> =>
  Layer.unwrapEffect(Effect.map(resolveBudgets(settings), (budgets) => PermitsShell({ budgets, pollMs: options.pollMs, metrics: options.metrics }))).pipe(Layer.provideMerge(options.facts ?? MachineFactsProc()))
