/**
 * The budgets the CLI knows (issue 21): those of the environment (`heavy`, capacity `auto` or
 * OCPOOL_PERMITS), resolved by the one resolution (layers/permits/permitsLayer.ts `resolveBudgets`),
 * `auto` from the `MachineFacts` in context. The views show entries of other budgets too, without a
 * capacity.
 */
import type { Effect } from "effect"
import { parsePermitSettings } from "../../core/permits/settings.js"
import type { BudgetInfo } from "../../core/permits/view.js"
import { resolveBudgets } from "../../layers/permits/permitsLayer.js"
import type { MachineFacts } from "../../services/permits/MachineFacts.js"

export const cliBudgets = (env: Readonly<Record<string, string | undefined>> = process.env): Effect.Effect<ReadonlyArray<BudgetInfo>, never, MachineFacts> =>
  resolveBudgets(parsePermitSettings(undefined, env).permits)

/** What is wrong with the permit settings of the environment (an invalid OCPOOL_PERMITS: one line naming it). */
export const cliPermitWarnings = (env: Readonly<Record<string, string | undefined>> = process.env): ReadonlyArray<string> => parsePermitSettings(undefined, env).warnings
