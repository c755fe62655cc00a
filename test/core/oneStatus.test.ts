/**
 * One status (issue 20 item 3): the recorded `status` decision, `pool_status` and `ocpool status` come
 * from one function over one snapshot, so they name the same loads, cooling and next slot; and the
 * recorded line (which now carries the other processes' load) replays to the same decision.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Claim } from "../../src/core/pool/claims.js"
import type { Cooldown } from "../../src/core/pool/cooldown.js"
import type { PoolSnapshot } from "../../src/core/engine/snapshot.js"
import { initialEngineState, type EngineState } from "../../src/core/engine/state.js"
import { engineStep, type Applied, type EngineEvent } from "../../src/core/engine/step.js"
import type { Slot } from "../../src/core/pool/pool.js"
import { statusView, type ProcessSnapshot } from "../../src/core/status.js"
import type { Decision } from "../../src/core/trace/decision.js"
import { replayText } from "../../src/core/trace/replay.js"
import { T0 } from "../helpers.js"

const MODELS = ["zen/a", "zen/b", "go/c", "or/d"]

const step = (state: EngineState, event: EngineEvent, at: number, snapshot: PoolSnapshot): Applied => {
  const o = engineStep(state, event, at, snapshot)
  if (o._tag !== "Applied") throw new Error("needs a snapshot")
  return o
}

const peerClaim = (model: string, i: number, heartbeatAt: number): Claim => ({
  key: `peer:${i}`,
  base: "explore",
  slot: 1,
  model,
  ownerSession: "ses_peer",
  targetSession: null,
  acquiredAt: heartbeatAt,
  heartbeatAt,
  abortAttempts: 0,
  abortPending: false,
  abortOrigin: null,
  abortInFlight: false,
  endedInFlight: false
})

const world = fc.record({
  slots: fc.uniqueArray(fc.record({ model: fc.constantFrom(...MODELS), weight: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 4, selector: (s) => s.model }),
  spawns: fc.integer({ min: 0, max: 8 }),
  peers: fc.array(fc.array(fc.record({ model: fc.constantFrom(...MODELS, "elsewhere/x"), age: fc.integer({ min: 0, max: 15 * 60_000 }) }), { maxLength: 6 }), { maxLength: 3 }),
  cooling: fc.array(fc.record({ model: fc.constantFrom(...MODELS), ends: fc.integer({ min: -120_000, max: 600_000 }), reason: fc.constantFrom("rate_limit" as const, "quota" as const, "outage" as const), strikes: fc.integer({ min: 0, max: 3 }) }), { maxLength: 4 })
})

const project = (slots: ReadonlyArray<{ slot: number; model: string; weight: number; load: number; cap: number; cooling: { until: number; reason: string } | null }>) =>
  slots.map((s) => ({ slot: s.slot, model: s.model, weight: s.weight, load: s.load, cap: s.cap, cooling: s.cooling === null ? null : { until: s.cooling.until, reason: s.cooling.reason } }))

describe("one status (issue 20)", () => {
  it("US-6 over random snapshots, the recorded status decision and the status view name the same loads, cooling and next slot; the recorded lines replay to it", () => {
    fc.assert(
      fc.property(world, ({ cooling, peers, slots: raw, spawns }) => {
        const slots: ReadonlyArray<Slot> = raw.map((s, i) => ({ index: i + 1, model: s.model, provider: s.model.split("/")[0]!, weight: s.weight }))
        const now = T0 + 20 * 60_000
        const processes: Array<ProcessSnapshot> = peers.map((claims, p) => ({ pid: 100 + p, host: "h", reaped: 0, claims: claims.map((c, i) => peerClaim(c.model, p * 10 + i, now - c.age)) }))
        const cooldowns = new Map<string, Cooldown>()
        for (const c of cooling) cooldowns.set(c.model, { model: c.model, reason: c.reason, strikes: c.strikes, scope: "model", since: now - 1_000, until: now + c.ends, source: "backoff" })
        const snapshot: PoolSnapshot = { peers: processes, cooldowns }
        const lines: Array<unknown> = []
        const decisions: Array<Decision> = []
        let state = initialEngineState()
        const run = (event: EngineEvent, at: number) => {
          const out = step(state, event, at, snapshot)
          lines.push(...out.lines)
          decisions.push(...out.decisions)
          state = out.state
          return out
        }
        run({ type: "pool", slots, origin: "t", warnings: [] }, now - 60_000)
        for (let i = 0; i < spawns; i++) run({ type: "spawn", owner: "ses_root", call: `call_${i}`, base: "explore" }, now - 30_000 + i)
        const out = run({ type: "status" }, now)
        const decided = out.decisions.find((d) => d.type === "status")
        if (decided?.type !== "status") throw new Error("no status decision")
        const view = statusView({ origin: "t", slots, processes: [{ pid: 1, host: "h", reaped: 0, claims: state.machine.claims, self: true }, ...processes], cooldowns, now, warnings: [] })
        expect(project(decided.slots)).toEqual(project(view.slots))
        expect(decided.next).toEqual(view.next)
        // the plugin's view, given its decision, shows exactly that decision
        const shown = statusView({ origin: "t", slots, processes, cooldowns, now, warnings: [], decided })
        expect(project(shown.slots)).toEqual(project(decided.slots))
        // and the recorded lines (the status line with the peers' load) replay to the same decisions
        const replayed = replayText(lines.map((l) => JSON.stringify(l)).join("\n"))
        expect(replayed.error).toBeUndefined()
        expect(replayed.decisions.filter((d) => d.type === "status")).toEqual([decided])
      }),
      { numRuns: 200 }
    )
  })

  it("US-6 the recorded status line carries the other processes' load: a peer's claims move the next slot in the trace as on screen", () => {
    const slots: ReadonlyArray<Slot> = [
      { index: 1, model: "zen/a", provider: "zen", weight: 1 },
      { index: 2, model: "zen/b", provider: "zen", weight: 1 }
    ]
    const snapshot: PoolSnapshot = { peers: [{ pid: 7, host: "h", reaped: 0, claims: [peerClaim("zen/a", 1, T0)] }], cooldowns: new Map() }
    let state = step(initialEngineState(), { type: "pool", slots, origin: "t", warnings: [] }, T0, snapshot).state
    const out = step(state, { type: "status" }, T0 + 1_000, snapshot)
    state = out.state
    expect(out.lines.find((l) => l.type === "status")).toMatchObject({ peers: { "zen/a": 1 } })
    expect(out.decisions.find((d) => d.type === "status")).toMatchObject({ next: { slot: 2, model: "zen/b", pass: "first" }, slots: [{ load: 1 }, { load: 0 }] })
  })
})
