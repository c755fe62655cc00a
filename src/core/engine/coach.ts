/**
 * Coaching (issue 12, US-49): when a root session's model request is built, the GO / THROTTLE / STOP
 * line for its model (core/quota/coach.ts decides it), given once per class per session. Children are
 * coached by nobody: only a root's prompt. Reads only this process's state.
 */
import { isCooling } from "../pool/cooldown.js"
import { withNewest } from "../newest.js"
import { coach } from "../quota/coach.js"
import { isChild } from "../session/tree.js"
import { COACHED_MAX, slotsOf } from "./state.js"
import { local, type Handlers } from "./turn.js"
import { isRefreshSession } from "./refreshSessions.js"

export const coachHandlers: Handlers<"coach"> = {
  coach: local((turn, event) => {
    if (isChild(turn.state, event.session) || isRefreshSession(turn.state, event.session)) return
    const at = turn.at
    const tried = turn.machine.episodes.get(event.session)?.tried ?? []
    const fallbackLeft = turn.machine.fallbacks.some((m) => m !== event.model && !tried.includes(m) && !isCooling(turn.machine.cooldowns.get(m), at))
    const c = coach({ model: event.model, quota: turn.state.quotas.get(event.model), slots: slotsOf(turn.state), cooldowns: turn.machine.cooldowns, fallbackLeft, now: at })
    if (turn.state.coached.get(event.session) === c.key) return
    turn.set("coached", withNewest(turn.state.coached, event.session, c.key, COACHED_MAX))
    turn.effect({ _tag: "Coach", line: c.line })
  })
}
