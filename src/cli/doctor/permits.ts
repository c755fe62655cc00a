/**
 * `ocpool doctor`'s heavy-work checks (issue 21): the budgets, what is held and waited for (`permits`),
 * and the machine's facts capacity `auto` is read from (`machine`), both through the `MachineFacts`
 * service (issue 34: the budgets resolved as every other view resolves them, rendered by
 * core/permits/view.ts).
 */
import { Effect } from "effect"
import type { PermitView } from "../../core/permits/types.js"
import { budgetsJson, budgetSummary } from "../../core/permits/view.js"
import { ocpoolLine } from "../../layers/install/installation.js"
import { MachineFacts } from "../../services/permits/MachineFacts.js"
import { machineText } from "../permits.js"
import { cliBudgets, cliPermitWarnings } from "../shared/budgets.js"
import { failedItself, guarded, type Check } from "./check.js"

/** `permits`: each budget's use and queue; a warning for bad settings and for entries of a gone holder (the next permit step frees them). */
export const permitsCheck = (entries: ReadonlyArray<PermitView>): Effect.Effect<ReadonlyArray<Check>, never, MachineFacts> =>
  Effect.flatMap(cliBudgets(), (budgets) =>
    guarded("permits", () => {
      const gone = entries.filter((e) => e.gone).length
      const detail = budgetsJson(budgets, entries).map(budgetSummary).join("; ")
      const notes = [...cliPermitWarnings(), ...(gone > 0 ? [`${gone} entr${gone === 1 ? "y" : "ies"} of a gone holder (freed at the next permit step, or '${ocpoolLine("permits release ID")}')`] : [])]
      return { id: "permits", status: notes.length > 0 ? "warn" : "ok", detail: [detail, ...notes].join("; ") }
    })
  ).pipe(Effect.catchAllCause(failedItself("permits")))

/** `machine`: effective CPUs and memory with their cgroup limits, pressure. */
export const machineCheck: Effect.Effect<ReadonlyArray<Check>, never, MachineFacts> = Effect.flatMap(MachineFacts, (m) => m.read).pipe(
  Effect.flatMap((facts) => guarded("machine", () => ({ id: "machine", status: "ok", detail: machineText(facts).replace(/^machine: /, "") }))),
  Effect.catchAllCause(failedItself("machine"))
)
