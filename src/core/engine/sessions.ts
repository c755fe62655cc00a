/**
 * What opencode says of its sessions, as the engine keeps it (SPEC §6.4, §8.2): sampled activity,
 * questions and permissions asked and answered (a pending one holds its tree's claims), busy and
 * idle (a bound child going idle ends its task), and new output (it resets the spin count).
 */
import { claimsTargeting, isTargeted } from "../trace/claimTable.js"
import { lineage, withAnswer, withAsk, withBusy, withoutBusy } from "../session/tree.js"
import { ACTIVITY_SAMPLE_MS, type EngineState } from "./state.js"
import { endTask } from "./claimSteps.js"
import { endRunOnIdle, idleEndsRun, idleMayRefresh, idleMayStart } from "./context.js"
import { local, NONE, TRANSACT, TRANSACT_WITH_PEERS, type Handlers, type Turn } from "./turn.js"

/** Sampled activity (SPEC §6.4): at most once per ACTIVITY_SAMPLE_MS per session. */
export const sampleActivity = (turn: Turn, session: string): void => {
  const last = turn.state.sampled.get(session)
  if (last !== undefined && turn.at - last < ACTIVITY_SAMPLE_MS) return
  turn.put("sampled", session, turn.at)
  turn.apply({ at: turn.at, type: "activity", session })
}

/**
 * An idle ends the live claim targeting the session, a success unless a signal hit it. Which claim is
 * live depends on the time, so any claim targeting it that was not signalled counts.
 */
const idleMayEndInSuccess = (state: EngineState, session: string): boolean =>
  state.busy.has(session) && claimsTargeting(state.machine.table, session).some((c) => !state.signalled.has(c.key))

export const sessionHandlers: Handlers<"activity" | "ask" | "answered" | "busy" | "idle" | "output"> = {
  activity: local((turn, event) => {
    // a claimed session's model request started: its first token is awaited from now (issue 35)
    if (event.assistant === true && !turn.state.firstTokens.has(event.session) && isTargeted(turn.state.machine.table, event.session)) turn.put("firstTokens", event.session, false)
    sampleActivity(turn, event.session)
  }),
  ask: local((turn, event) => {
    turn.state = withAsk(turn.state, event.session, event.id)
  }),
  answered: local((turn, event) => {
    turn.state = withAnswer(turn.state, event.session, event.id)
    // an answer is activity of every session whose tree holds it
    for (const s of lineage(turn.state, event.session)) sampleActivity(turn, s)
  }),
  busy: local((turn, event) => {
    turn.state = withBusy(turn.state, event.session)
  }),
  idle: {
    // a context map run may start (a spawn: every process's load) or end (its claim released)
    needs: (state, event) =>
      idleMayStart(state, event.session, event.context) ? TRANSACT_WITH_PEERS : idleMayEndInSuccess(state, event.session) || idleEndsRun(state, event.session) ? TRANSACT : NONE,
    run: (turn, event) => {
      if (!turn.state.busy.has(event.session)) return
      if (idleEndsRun(turn.state, event.session)) {
        endRunOnIdle(turn, event.context)
        turn.state = withoutBusy(turn.state, event.session)
        return
      }
      turn.state = withoutBusy(turn.state, event.session)
      const c = turn.liveTarget(event.session)
      if (c !== undefined) endTask(turn, c.key, true)
      else idleMayRefresh(turn, event.session, event.context)
    }
  },
  output: local((turn, event) => {
    // the first output of a claimed session is its first token (issue 35): the first-token clock stops
    if (turn.state.firstTokens.get(event.session) === false) turn.put("firstTokens", event.session, true)
    if (!turn.state.requests.has(event.session)) return
    const requests = new Map(turn.state.requests)
    requests.delete(event.session)
    turn.set("requests", requests)
  })
}
