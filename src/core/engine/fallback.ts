/**
 * Fallback models (US-50): each root session's model and agent as its messages and requests name them,
 * a user message of a session in a fallback episode rewritten to the fallback, and the outcome of a
 * switch. The machine decides the episodes (core/trace/machine.ts); this feeds it.
 */
import { withNewest } from "../newest.js"
import { isChild } from "../session/tree.js"
import { PRIMARIES_MAX } from "./state.js"
import { logAbout } from "./events.js"
import { local, type Handlers, type Turn } from "./turn.js"
import { isRefreshSession } from "./refreshSessions.js"

/** Remembers a root session's model and agent; children are never primaries. */
export const rememberPrimary = (turn: Turn, session: string, model: string | undefined, agent: string | undefined): void => {
  if (isChild(turn.state, session) || isRefreshSession(turn.state, session)) return
  const old = turn.state.primaries.get(session)
  const next = { model: model ?? old?.model, agent: agent ?? old?.agent }
  if (old !== undefined && old.model === next.model && old.agent === next.agent) return
  turn.set("primaries", withNewest(turn.state.primaries, session, next, PRIMARIES_MAX))
}

export const fallbackHandlers: Handlers<"message" | "switched"> = {
  message: local((turn, event) => {
    if (isChild(turn.state, event.session)) return
    let model = event.model
    // only a session in a fallback episode has a line to record: every other message runs as sent
    if (turn.machine.episodes.has(event.session)) {
      const decided = turn.apply({ at: turn.at, type: "message", session: event.session, model: event.model })
      const rewrite = decided.find((x) => x.type === "model")
      if (rewrite?.type === "model") {
        model = rewrite.model
        turn.effect({ _tag: "Model", model })
      }
      if (!turn.machine.episodes.has(event.session)) turn.ended = event.session
    }
    rememberPrimary(turn, event.session, model, event.agent)
  }),
  switched: local((turn, event) => {
    turn.apply({ at: turn.at, type: "switched", session: event.session, to: event.to, ok: event.ok })
    if (!event.ok) turn.log("warn", `session ${event.session} was not switched to ${event.to}: ${event.reason}; it stays where it is`, logAbout(undefined, event.session, event.to))
  })
}
