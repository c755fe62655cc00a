/**
 * Learned budgets (issue 35): a slot model's request that succeeded counts in its group's shared record
 * (`sent`), and a rate-limit or quota 429 of a slot model teaches the group its budget (`learn`, the
 * signal's `Learn` effect, in a turn of its own after the 429's cooldown is written; core/limits/learned.ts).
 * Both are `budget` lines, carrying the group's record as read, so a replay learns what the engine
 * learned; the machine decides the record the commit writes and cools the group's slots when it is
 * spent.
 */
import { QUOTA_RESERVE_DEFAULT } from "../constants.js"
import { groupOf } from "../limits/learned.js"
import { slotsOf, type EngineState } from "./state.js"
import { NONE, TRANSACT_LEARNED, type Handlers, type Turn } from "./turn.js"

const isSlotModel = (state: EngineState, model: string | undefined): model is string => model !== undefined && slotsOf(state).some((s) => s.model === model)

/** The group's record in the turn's snapshot (the shell read it: the event declared `learned`). */
const recordOf = (turn: Turn, model: string) => {
  const group = groupOf(model)
  return turn.snapshot?.learned?.find((b) => b.group === group)
}

/** A `budget` line for `model`, read from the snapshot (the shared fields a line carries added). */
const applyBudget = (turn: Turn, model: string, outcome: "ok" | "limit", resetAt: number | undefined, reserve: number): void => {
  const learned = recordOf(turn, model)
  turn.apply({
    at: turn.at,
    type: "budget",
    model,
    outcome,
    ...(resetAt === undefined ? {} : { resetAt }),
    ...(learned === undefined ? {} : { learned }),
    ...(reserve === QUOTA_RESERVE_DEFAULT ? {} : { reserve }),
    ...turn.shared()
  })
}

export const budgetHandlers: Handlers<"sent" | "learn"> = {
  sent: {
    needs: (state, event) => (isSlotModel(state, event.model) || (event.model === undefined && event.session !== undefined && slotsOf(state).length > 0) ? TRANSACT_LEARNED : NONE),
    run: (turn, event) => {
      const model = event.model ?? (event.session === undefined ? undefined : turn.liveTarget(event.session)?.model)
      if (!isSlotModel(turn.state, model)) return
      applyBudget(turn, model, "ok", undefined, event.reserve)
    }
  },
  // each group once, from its first slot model the cooling hit
  learn: {
    needs: (state, event) => (event.models.some((m) => isSlotModel(state, m)) ? TRANSACT_LEARNED : NONE),
    run: (turn, event) => {
      const seen = new Set<string>()
      for (const model of event.models) {
        const group = groupOf(model)
        if (seen.has(group) || !isSlotModel(turn.state, model)) continue
        seen.add(group)
        applyBudget(turn, model, "limit", event.resetAt, QUOTA_RESERVE_DEFAULT)
      }
    }
  }
}
