/**
 * What a permit step counts (issue 36): the counters one step of the permit machine adds to, derived
 * from its op and its decisions. Pure. The permits shell puts them into the commit of the step's own
 * transaction.
 *
 * Budget labels are bounded: a budget this process configured keeps its name (names are checked by the
 * options, `a-z0-9_-`, at most 32, and a request for a budget the process does not know is refused before
 * it is queued, so a client of `ocpool mcp` or `ocpool run` cannot make one up); an entry of a budget only
 * another process knows (its gone holder dropped by this step) is counted under OTHER_BUDGET.
 */
import { capacityOf } from "../permits/machine.js"
import type { Capacities, PermitDecision, PermitOp } from "../permits/types.js"
import { count, observeWait, sumCounts, type Count } from "./counters.js"

/** The label of a budget this process has no capacity for. */
export const OTHER_BUDGET = "other"

const NO_COUNTS: ReadonlyArray<Count> = []

/** A budget as a label: its name when configured here, else OTHER_BUDGET. */
export const budgetLabel = (capacities: Capacities, budget: string): string => (capacityOf(capacities, budget) === undefined ? OTHER_BUDGET : budget)

/**
 * The counts of one permit step, one per counter:
 * - a request queued (`queue`) or granted in its own step → `permit_requests_total{budget}` (a refused or
 *   resent request is none);
 * - every `grant` → `permit_grants_total{budget}` and its wait in the histogram (`observeWait`, seconds
 *   from the request to the grant);
 * - every `cancel` (by its requester, a queued entry released, a gone requester dropped) →
 *   `permit_cancels_total{budget}`.
 */
export const permitCounts = (op: PermitOp, decisions: ReadonlyArray<PermitDecision>, capacities: Capacities): ReadonlyArray<Count> => {
  let out: Array<Count> | undefined
  const fresh = op.op === "request" ? op.entry.id : undefined
  for (const d of decisions) {
    if (d.act === "queue") (out ??= []).push(count("permit_requests_total", [budgetLabel(capacities, d.budget)]))
    else if (d.act === "grant") {
      const budget = budgetLabel(capacities, d.budget)
      out ??= []
      if (d.id === fresh) out.push(count("permit_requests_total", [budget]))
      out.push(count("permit_grants_total", [budget]), ...observeWait(budget, d.waitedMs / 1000))
    } else if (d.act === "cancel") (out ??= []).push(count("permit_cancels_total", [budgetLabel(capacities, d.budget)]))
  }
  return out === undefined ? NO_COUNTS : sumCounts(out)
}
