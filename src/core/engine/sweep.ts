/**
 * The reaper's side of the engine (SPEC §8.2): the timer's sweep (its line and what it needs first are
 * claimSteps.ts's), and the outcome of an abort the sweep (or a signal) requested. Both read shared
 * state: a sweep releases and cools.
 */
import { getClaim } from "../trace/claimTable.js"
import type { TraceInput } from "../trace/input.js"
import { sweepLine } from "./claimSteps.js"
import { forgetQuietSessions } from "./state.js"
import { logAbout } from "./events.js"
import { NONE, TRANSACT, type Handlers } from "./turn.js"

export const sweepHandlers: Handlers<"sweep" | "aborted"> = {
  sweep: {
    needs: () => TRANSACT,
    run: (turn) => {
      sweepLine(turn, undefined, true)
      turn.state = forgetQuietSessions(turn.state, turn.at)
    }
  },
  aborted: {
    // only an abort still in flight has an outcome to apply: the line releases or cools
    needs: (state, event) => (getClaim(state.machine.table, event.claim)?.abortInFlight === true ? TRANSACT : NONE),
    run: (turn, event) => {
      const c = getClaim(turn.machine.table, event.claim)
      if (c === undefined || !c.abortInFlight) return
      turn.log("debug", `abort of ${c.targetSession ?? "-"}: ${event.ok ? "confirmed" : event.reason}`, logAbout(c.key, c.targetSession, c.model))
      turn.abortReason = event.reason
      turn.apply({ at: turn.at, type: "aborted", claim: event.claim, ok: event.ok, ...turn.shared() } as TraceInput)
    }
  }
}
