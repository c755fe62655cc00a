/**
 * Which trace lines read or write shared state (routing, cooling, a success clearing a record, the
 * status view): the line-level rule the handlers' declared needs must cover. Pure.
 */
import { QUOTA_RESERVE_DEFAULT } from "../constants.js"
import { isPooledBase } from "../pool/routing.js"
import type { CoolPlan } from "../pool/cooldown.js"
import type { TraceInput } from "../trace/input.js"
import { planQuotaLow } from "../quota/low.js"

/** A `quota` line's cooling, if its quota is at the reserve. */
export const quotaPlan = (line: Extract<TraceInput, { type: "quota" }>): CoolPlan | undefined =>
  planQuotaLow(line.model, [line.requests, line.tokens], line.reserve ?? QUOTA_RESERVE_DEFAULT, line.at)

export const readsShared = (line: TraceInput): boolean => {
  switch (line.type) {
    case "spawn":
      return isPooledBase(line.base)
    case "limit":
    case "retry":
    case "sweep":
    case "aborted":
    case "status":
      return true
    case "release":
      return line.ok
    case "quota":
      return quotaPlan(line) !== undefined
    case "budget":
      return true
    default:
      return false
  }
}
