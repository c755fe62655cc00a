/** Small builders shared by the tests. */
import type { Claim } from "../src/core/pool/claims.js"
import type { PoolSnapshot } from "../src/core/engine/snapshot.js"
import type { EngineState } from "../src/core/engine/state.js"
import { engineStep, type Applied, type EngineEvent } from "../src/core/engine/step.js"
import { formatDecision } from "../src/core/trace/format.js"
import type { Decision } from "../src/core/trace/machine.js"
import { replayText } from "../src/core/trace/replay.js"

export const T0 = 1_796_115_600_000 // 2026-12-01T09:00:00Z

/** Builds a trace text from line objects. */
export const trace = (...lines: ReadonlyArray<Record<string, unknown>>): string => lines.map((l) => JSON.stringify(l)).join("\n") + "\n"

export const pool = (at: number, ...slots: ReadonlyArray<readonly [string, number]>) => ({
  at,
  type: "pool",
  slots: slots.map(([model, weight]) => ({ model, weight }))
})

/** Replays and returns the decisions, failing the test on an invalid trace. */
export const run = (text: string): ReadonlyArray<Decision> => {
  const r = replayText(text)
  if (r.error !== undefined) throw new Error(`line ${r.error.line}: ${r.error.message}`)
  return r.decisions
}

export const lines = (text: string): ReadonlyArray<string> => run(text).map(formatDecision)

export const routes = (ds: ReadonlyArray<Decision>) => ds.flatMap((d) => (d.type === "route" ? [d] : []))

/** A claim with defaults: unbound, owner `p`, acquired and heartbeat at `at`. */
export const makeClaim = (key: string, model: string, base = "explore", at = Date.now(), heartbeatAt = at): Claim => ({
  key,
  base,
  slot: 1,
  model,
  acquiredAt: at,
  heartbeatAt,
  ownerSession: "p",
  targetSession: null,
  abortAttempts: 0,
  abortPending: false,
  abortOrigin: null,
  abortInFlight: false,
  endedInFlight: false
})

/** `events` applied in order from `from`, each at its time and over `snapshot`: the state after them and every turn's answer. */
export const stepEvents = (events: ReadonlyArray<readonly [number, EngineEvent]>, from: EngineState, snapshot: PoolSnapshot): { readonly state: EngineState; readonly outs: ReadonlyArray<Applied> } => {
  let state = from
  const outs: Array<Applied> = []
  for (const [at, e] of events) {
    const o = engineStep(state, e, at, snapshot)
    if (o._tag !== "Applied") throw new Error("no snapshot asked for")
    outs.push(o)
    state = o.state
  }
  return { state, outs }
}
