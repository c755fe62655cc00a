/**
 * The budgets the CLI knows (issue 21): those of the environment (`heavy`, capacity `auto` or
 * OCPOOL_PERMITS), with `auto` resolved from this machine's facts. The views show entries of other
 * budgets too, without a capacity.
 */
import { availableParallelism } from "node:os"
import { parsePermitSettings, capacityOf } from "../../core/permits/settings.js"
import { readMachineFacts } from "../../layers/permits/MachineFactsProc.js"
import type { BudgetInfo } from "../../core/permits/view.js"

const online = (): number => {
  try {
    return availableParallelism()
  } catch {
    return 1
  }
}

export const cliBudgets = (env: Readonly<Record<string, string | undefined>> = process.env): ReadonlyArray<BudgetInfo> => {
  const { permits } = parsePermitSettings(undefined, env)
  const facts = readMachineFacts("/", online())
  return permits.map((p) => ({ name: p.name, ...capacityOf(p, facts.cpus) }))
}

/** What is wrong with the permit settings of the environment (an invalid OCPOOL_PERMITS: one line naming it). */
export const cliPermitWarnings = (env: Readonly<Record<string, string | undefined>> = process.env): ReadonlyArray<string> => parsePermitSettings(undefined, env).warnings
