/**
 * The plugin's one decision engine, its public entry: an opencode event and the time it is applied at,
 * plus (when the event's declared needs read shared state) the pool snapshot, give the next state, the
 * spawn-trace input lines applied to the trace machine (exactly what is recorded), the machine's
 * decisions, and the effects the shell carries out. Pure; `ocpool replay` runs the same trace machine
 * over the recorded lines. The handlers live by feature beside it (dispatch.ts lists them).
 */
import type { Claim } from "../pool/claims.js"
import type { EngineState } from "./state.js"

export { engineStep, needsOf } from "./dispatch.js"
export { switchText } from "./decisionLog.js"
export { NO_COMMIT } from "./events.js"
export type { Applied, EngineCommit, EngineEvent, EventNeeds, LogLevel, LogLine, NeedSnapshot, StepOutcome, SwitchOrder } from "./events.js"

/** Own claims in acquisition order. */
export const ownClaims = (state: EngineState): ReadonlyArray<Claim> => state.machine.claims
