/**
 * The one dispatcher: each event type to its feature's handler. What an event needs of the shared
 * state is declared by its handler and read before anything is stepped (`needsOf`), so `engineStep`
 * answers `NeedSnapshot` up front and never discovers the need halfway.
 */
import { budgetHandlers } from "./budget.js"
import { coachHandlers } from "./coach.js"
import { contextHandlers } from "./context.js"
import { NEED_SNAPSHOT, type EngineEvent, type EventNeeds, type StepOutcome } from "./events.js"
import { fallbackHandlers } from "./fallback.js"
import { poolHandlers } from "./poolLine.js"
import { quotaHandlers } from "./quota.js"
import { sessionHandlers } from "./sessions.js"
import { signalHandlers } from "./signal.js"
import type { PoolSnapshot } from "./snapshot.js"
import { spinHandlers } from "./spin.js"
import type { EngineState } from "./state.js"
import { statusHandlers } from "./status.js"
import { sweepHandlers } from "./sweep.js"
import { taskHandlers } from "./task.js"
import { Turn, type Handler, type Handlers } from "./turn.js"

const HANDLERS: Handlers<EngineEvent["type"]> = {
  ...poolHandlers,
  ...taskHandlers,
  ...sessionHandlers,
  ...spinHandlers,
  ...signalHandlers,
  ...sweepHandlers,
  ...statusHandlers,
  ...fallbackHandlers,
  ...coachHandlers,
  ...quotaHandlers,
  ...budgetHandlers,
  ...contextHandlers
}

const handlerOf = <E extends EngineEvent>(event: E): Handler<E> => HANDLERS[event.type] as unknown as Handler<E>

/** What deciding `event` in `state` needs of the shared state. Pure; time-dependent parts err towards reading. */
export const needsOf = (state: EngineState, event: EngineEvent): EventNeeds => handlerOf(event).needs(state, event)

/**
 * Applies one event at `now` (clamped so time never goes backwards). Returns `NeedSnapshot`, the state
 * unchanged, when the event's declared needs read shared state and no snapshot was given.
 */
export const engineStep = (state: EngineState, event: EngineEvent, now: number, snapshot?: PoolSnapshot): StepOutcome => {
  const handler = handlerOf(event)
  if (snapshot === undefined && handler.needs(state, event).shared !== "none") return NEED_SNAPSHOT
  const last = state.machine.lastAt
  const turn = new Turn(state, last !== undefined && now < last ? last : now, snapshot)
  handler.run(turn, event)
  return turn.outcome(state)
}
