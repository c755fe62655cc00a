/**
 * A model request (`chat.params`): the root session's model and agent remembered for fallbacks, and
 * spin detection (SPEC §8.5): a pooled session sending SPIN_REQUESTS requests within SPIN_WINDOW_MS
 * with no output between them is handed to a sweep as spinning, which aborts it.
 */
import { OPENCODE_HIDDEN_AGENTS } from "../constants.js"
import { isTargeted } from "../trace/claimTable.js"
import { rememberPrimary } from "./fallback.js"
import { SPIN_REQUESTS, SPIN_WINDOW_MS } from "./state.js"
import { sweepLine } from "./claimSteps.js"
import { wholeSeconds } from "../time.js"
import { logAbout } from "./events.js"
import { NONE, TRANSACT, type Handlers } from "./turn.js"

export const spinHandlers: Handlers<"request"> = {
  request: {
    // the request that reaches the count sweeps; which requests are within the window depends on the
    // time, so reaching it counting every remembered one is enough to declare it
    needs: (state, event) =>
      (state.requests.get(event.session)?.length ?? 0) + 1 >= SPIN_REQUESTS && isTargeted(state.machine.table, event.session) ? TRANSACT : NONE,
    run: (turn, event) => {
      const at = turn.at
      // the title generator's request (agent `title`, often another model) is not the user's: "continue"
      // after a switch must run as the user's agent, on the model the user chose
      const hidden = event.agent !== undefined && OPENCODE_HIDDEN_AGENTS.has(event.agent)
      if (!hidden && (event.model !== undefined || event.agent !== undefined)) rememberPrimary(turn, event.session, event.model, event.agent)
      const c = turn.liveTarget(event.session)
      if (c === undefined) return
      const times = [...(turn.state.requests.get(event.session) ?? []).filter((t) => at - t < SPIN_WINDOW_MS), at]
      const requests = new Map(turn.state.requests)
      if (times.length < SPIN_REQUESTS) {
        turn.set("requests", requests.set(event.session, times))
        return
      }
      requests.delete(event.session)
      turn.set("requests", requests)
      turn.log("warn", `spinning session=${event.session} model=${c.model} requests=${times.length}/${wholeSeconds(SPIN_WINDOW_MS)}`, logAbout(c.key, event.session, c.model))
      sweepLine(turn, [c.key])
    }
  }
}
