/**
 * The refresh's own sessions (issue 23): which sessions the context map's runs created. Every feature
 * that treats the user's sessions differently from those asks here; no handler owns it.
 */
import type { EngineState } from "./state.js"

/** Whether `session` is (or was) one of the refresh's own sessions. */
export const isRefreshSession = (state: EngineState, session: string): boolean =>
  state.machine.context.inFlight?.session === session || state.refreshSessions.has(session)
