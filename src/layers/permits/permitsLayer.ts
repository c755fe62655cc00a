/**
 * The permits port as the plugin and the CLI build it (issue 21): the budgets of the settings with
 * capacity `auto` resolved from the machine's facts once, at start, over whichever shared state is
 * provided (the backend is chosen by sharedStateLayer).
 */
import { Effect, Layer } from "effect"
import { capacityOf, type BudgetSetting } from "../../core/permits/settings.js"
import { MachineFacts, type MachineFactsView } from "../../services/permits/MachineFacts.js"
import type { Permits } from "../../services/permits/Permits.js"
import type { SharedState } from "../../services/state/SharedState.js"
import { MachineFactsProc } from "./MachineFactsProc.js"
import { PermitsShell, type Budget } from "./PermitsShell.js"

/** Every budget with its capacity in units and how it was found. */
export const resolveBudgets = (settings: ReadonlyArray<BudgetSetting>, facts: MachineFactsView): ReadonlyArray<Budget> =>
  settings.map((s) => ({ name: s.name, ...capacityOf(s, facts.cpus) }))

export const permitsLayer = (
  settings: ReadonlyArray<BudgetSetting>,
  options: { readonly facts?: Layer.Layer<MachineFacts> | undefined; readonly pollMs?: number | undefined } = {}
): Layer.Layer<Permits | MachineFacts, never, SharedState> =>
  Layer.unwrapEffect(Effect.map(MachineFacts, (m) => Effect.map(m.read, (facts) => PermitsShell({ budgets: resolveBudgets(settings, facts), pollMs: options.pollMs }))).pipe(Effect.flatten)).pipe(
    Layer.provideMerge(options.facts ?? MachineFactsProc())
  )
