/**
 * Fallback models (US-50): each root session's model and agent as its messages and requests name them,
 * a user message of a session in a fallback episode rewritten to the fallback, and the outcome of a
 * switch. The machine decides the episodes (core/trace/machine.ts); this feeds it.
 */
import { withNewest } from "../newest.js"
import { isChild } from "../session/tree.js"
import { PRIMARIES_MAX } from "./state.js"
import { logAbout } from "./events.js"
import { local, NONE, TRANSACT, type Handlers, type Turn } from "./turn.js"
import { isCooling } from "../pool/cooldown.js"
import type { EngineState } from "./state.js"
import { isRefreshSession } from "./refreshSessions.js"

/** Remembers a root session's model and agent; children are never primaries. */
export const rememberPrimary = (turn: Turn, session: string, model: string | undefined, agent: string | undefined): void => {
  if (isChild(turn.state, session) || isRefreshSession(turn.state, session)) return
  const old = turn.state.primaries.get(session)
  const next = { model: model ?? old?.model, agent: agent ?? old?.agent }
  if (old !== undefined && old.model === next.model && old.agent === next.agent) return
  turn.set("primaries", withNewest(turn.state.primaries, session, next, PRIMARIES_MAX))
}

/** Whether a root session's message may find its model cooling before it is sent: fallbacks configured, no episode running it elsewhere. */
const mayCoolBeforeSending = (state: EngineState, session: string): boolean =>
  state.machine.fallbacks.length > 0 && !state.machine.episodes.has(session) && !isChild(state, session) && !isRefreshSession(state, session)

/** Whether `model` cools at the turn's time, in this process's table or the shared one. */
const coolsNow = (turn: Turn, model: string): boolean => isCooling(turn.machine.cooldowns.get(model), turn.at) || isCooling(turn.snapshot?.cooldowns.get(model), turn.at)

export const fallbackHandlers: Handlers<"message" | "switched"> = {
  message: {
    // a root's message outside an episode reads the shared cooldowns when fallbacks are configured: its model may cool already (issue 35)
    needs: (state, event) => (mayCoolBeforeSending(state, event.session) ? TRANSACT : NONE),
    run: (turn, event) => {
      if (isChild(turn.state, event.session)) return
      let model = event.model
      // a session in a fallback episode, or one whose model already cools, has a line to record: every other message runs as sent
      const cooling = mayCoolBeforeSending(turn.state, event.session) && coolsNow(turn, event.model)
      if (turn.machine.episodes.has(event.session) || cooling) {
        const decided = turn.apply(cooling ? { at: turn.at, type: "message", session: event.session, model: event.model, ...turn.shared() } : { at: turn.at, type: "message", session: event.session, model: event.model })
        const rewrite = decided.find((x) => x.type === "model")
        if (rewrite?.type === "model") {
          model = rewrite.model
          turn.effect({ _tag: "Model", model })
        }
        if (!turn.machine.episodes.has(event.session)) turn.ended = event.session
      }
      rememberPrimary(turn, event.session, model, event.agent)
    }
  },
  switched: local((turn, event) => {
    turn.apply({ at: turn.at, type: "switched", session: event.session, to: event.to, ok: event.ok })
    if (!event.ok) turn.log("warn", `session ${event.session} was not switched to ${event.to}: ${event.reason}; it stays where it is`, logAbout(undefined, event.session, event.to))
  })
}
