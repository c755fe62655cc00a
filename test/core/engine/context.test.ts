/**
 * The context map's refresh in the engine (core/engine/context.ts): what ends a run besides its own
 * idle. A run's question or permission ask blocks nothing (nobody sees it: a refresh never notifies),
 * so silence reaps it; a run whose claim is gone (reaped, or its abort gave up) is closed as failed at
 * the next root idle, and its paths are queued again.
 */
import { describe, expect, it } from "@effect/vitest"
import type { PoolSnapshot } from "../../../src/core/engine/snapshot.js"
import { initialEngineState, type EngineState } from "../../../src/core/engine/state.js"
import type { EngineEvent } from "../../../src/core/engine/step.js"
import { stepEvents } from "../../helpers.js"
import { effectsOf } from "../../../src/core/engine/effects.js"
import type { MapStamp } from "../../../src/core/context/refresh.js"

const T0 = 1_796_115_600_000
const SNAPSHOT: PoolSnapshot = { peers: [], cooldowns: new Map() }
const NO_MAP: MapStamp = { exists: false, bytes: 0, stamp: "" }
const TIMING = { hangMinAgeMs: 300_000, hangSilenceMs: 180_000 }

const run = (events: ReadonlyArray<readonly [number, EngineEvent]>, from: EngineState = initialEngineState(TIMING)) => {
  const { state, outs } = stepEvents(events, from, SNAPSHOT)
  return { state, outs, decisions: outs.flatMap((o) => o.decisions), orders: outs.flatMap((o) => effectsOf(o, "Refresh").map((e) => e.order)) }
}

const started = (): ReturnType<typeof run> =>
  run([
    [T0, { type: "pool", slots: [{ index: 1, provider: "zen", model: "zen/alpha", weight: 1 }], origin: "test", warnings: [] }],
    [T0, { type: "contextLoad", root: "/p", maxBytes: 24_576, pending: [], dropped: 0, lastStartedAt: undefined, lastRun: undefined }],
    [T0 + 1, { type: "contextEdit", session: "root", paths: ["/p/src/a.ts"] }],
    [T0 + 2, { type: "busy", session: "root" }],
    [T0 + 3, { type: "idle", session: "root", context: { map: NO_MAP, requested: false } }]
  ])

describe("the context map's refresh in the engine", () => {
  it("US-20 a root idle with an edit pending routes a context spawn and orders the run as its variant", () => {
    const s = started()
    expect(s.orders).toEqual([expect.objectContaining({ agent: "context-1", model: "zen/alpha", title: "context (auto bootstrap)" })])
    expect(s.state.machine.claims).toEqual([expect.objectContaining({ base: "context", ownerSession: "context-map" })])
  })

  it("US-20 a refresh run's permission ask does not hold its claim: silence reaps it, and the next root idle finds its path queued again", () => {
    const s = started()
    const order = s.orders[0]!
    const later = run(
      [
        [T0 + 100, { type: "contextBound", run: order.run, session: "ctx" }],
        [T0 + 200, { type: "busy", session: "ctx" }],
        [T0 + 300, { type: "ask", session: "ctx", id: "perm_1" }],
        [T0 + 600_000, { type: "sweep" }]
      ],
      s.state
    )
    expect(later.outs.flatMap((o) => effectsOf(o, "Abort").map(({ claim, session }) => ({ claim, session })))).toEqual([{ claim: order.claim, session: "ctx" }])
    // the abort is confirmed; the run is over and its path waits again
    const done = run(
      [
        [T0 + 600_100, { type: "aborted", claim: order.claim, ok: true, reason: "" }],
        [T0 + 600_200, { type: "error", session: "ctx", error: { name: "MessageAbortedError", data: { message: "aborted" } } }],
        [T0 + 600_300, { type: "idle", session: "ctx", context: { map: NO_MAP, requested: false } }]
      ],
      later.state
    )
    expect(done.decisions.filter((d) => d.type === "context_done")).toEqual([expect.objectContaining({ outcome: "failed", requeued: 1 })])
    expect(done.state.machine.context.pending).toEqual(["src/a.ts"])
  })

  it("US-20 a run whose claim is gone but whose session never idles (its abort gave up) is closed as failed at the next root idle", () => {
    const s = started()
    const order = s.orders[0]!
    const bound = run([[T0 + 100, { type: "contextBound", run: order.run, session: "ctx" }]], s.state)
    // three failed aborts of a hung run: the claim is released as gave_up, the session runs on
    let state = bound.state
    let at = T0 + 600_000
    for (let i = 0; i < 3; i++) {
      state = run([[at, { type: "sweep" }]], state).state
      state = run([[at + 10, { type: "aborted", claim: order.claim, ok: false, reason: "timeout" }]], state).state
      at += 30_000
    }
    state = run([[at, { type: "sweep" }]], state).state
    expect(state.machine.claims).toEqual([])
    const next = run(
      [
        [at + 700_000, { type: "busy", session: "root" }],
        [at + 700_001, { type: "idle", session: "root", context: { map: NO_MAP, requested: false } }]
      ],
      state
    )
    expect(next.decisions.filter((d) => d.type === "context_done")).toEqual([expect.objectContaining({ outcome: "failed", requeued: 1, reason: expect.stringContaining("claim was released") })])
    expect(next.decisions.filter((d) => d.type === "context_start")).toEqual([expect.objectContaining({ paths: ["src/a.ts"] })])
  })
})
