import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as claimTable from "../../../src/core/trace/claimTable.js"
import { engineStep } from "../../../src/core/engine/step.js"
import { initialEngineState, type EngineState } from "../../../src/core/engine/state.js"
import { replayText } from "../../../src/core/trace/replay.js"
import { T0 } from "../../helpers.js"
import type { LoopCounter } from "../../support/countingClaimTable.js"

// count the reaper's judgements: a sweep judges each claim it visits once
const judged = vi.hoisted(() => ({ n: 0 }))
vi.mock("../../../src/core/pool/reaper.js", async (original) => {
  const mod = await original<typeof import("../../../src/core/pool/reaper.js")>()
  return {
    ...mod,
    judgeClaim: (...args: Parameters<typeof mod.judgeClaim>) => {
      judged.n++
      return mod.judgeClaim(...args)
    }
  }
})

// the claim table's own work: its counting variant (test/support/countingClaimTable.ts) counts every loop iteration
vi.mock("../../../src/core/trace/claimTable.js", async () => {
  const { countingClaimTablePath } = await import("../../support/countingClaimTable.js")
  return await import(/* @vite-ignore */ countingClaimTablePath())
})
const tableLoops = (): number => (claimTable as unknown as LoopCounter).__loops.n

const POOL = { at: T0, type: "pool", slots: [{ model: "zen/alpha", weight: 3 }, { model: "zen/beta", weight: 2 }] }

/** N spawns 5 ms apart, none released, then a sweep and a status: every claim young and held. */
const heldTrace = (n: number): string => {
  const lines: Array<object> = [POOL]
  for (let i = 0; i < n; i++) lines.push({ at: T0 + 1 + 5 * i, type: "spawn", claim: `c${i}`, base: "explore", session: "ses_parent" })
  lines.push({ at: T0 + 5 * n, type: "sweep" }, { at: T0 + 5 * n, type: "status" })
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n"
}

/** N claims spawned and bound, kept healthy by activity, swept every 50 lines over 3 hours. */
const boundTrace = (n: number): string => {
  const lines: Array<object> = [POOL]
  let at = T0
  for (let i = 0; i < n; i++) {
    at += 1_000
    lines.push({ at, type: "spawn", claim: `c${i}`, base: "explore", session: "ses_parent" }, { at, type: "bind", claim: `c${i}`, session: `s${i}` })
  }
  for (let k = 0; k < 10_000; k++) {
    at += 1_000
    lines.push(k % 50 === 0 ? { at, type: "sweep" } : { at, type: "activity", session: `s${(k * 7) % n}` })
  }
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n"
}

const lineCount = (text: string) => text.split("\n").length - 1

const measure = (text: string) => {
  judged.n = 0
  const visits0 = tableLoops()
  const r = replayText(text)
  expect(r.error).toBeUndefined()
  return { decisions: r.decisions, judged: judged.n, visits: tableLoops() - visits0, lines: lineCount(text) }
}

describe("replay cost with many claims held (docs/PERFORMANCE.md)", () => {
  it("US-45 replaying 4,000 held claims judges and visits a bounded number of claims per line, not every held claim", () => {
    const m = measure(heldTrace(4_000))
    expect(m.decisions.filter((d) => d.type === "route")).toHaveLength(4_000)
    const status = m.decisions.at(-1)
    expect(status?.type === "status" ? status.slots.reduce((n, s) => n + s.load, 0) : 0).toBe(4_000)
    // sweeping every held claim on every spawn would judge 4,000 × 3,999 / 2 ≈ 8 million times
    expect(m.judged).toBeLessThanOrEqual(2 * m.lines)
    expect(m.visits).toBeLessThanOrEqual(8 * m.lines)
    // the counting variant counts: every part of the table is instrumented (a counter stuck at 0 would pass the bound)
    expect(m.visits).toBeGreaterThan(0)
  })

  it("US-45 held bound claims kept healthy by activity are judged about once per silence window, not on every sweep", () => {
    const m = measure(boundTrace(500))
    expect(m.decisions.some((d) => d.type === "abort")).toBe(true)
    // 200 sweeps over 500 held claims would judge 100,000 times
    expect(m.judged).toBeLessThanOrEqual(m.lines)
    expect(m.visits).toBeLessThanOrEqual(8 * m.lines)
  })

  it("US-32 the plugin's engine, holding 2,000 claims, routes and sweeps with a bounded number of claims judged per event", () => {
    const snapshot = { peers: [], cooldowns: new Map() }
    let state: EngineState = initialEngineState()
    const apply = (event: Parameters<typeof engineStep>[1], now: number) => {
      const r = engineStep(state, event, now, snapshot)
      if (r._tag !== "Applied") throw new Error("a snapshot was given")
      state = r.state
      return r
    }
    apply({ type: "pool", slots: [{ index: 1, model: "zen/alpha", provider: "zen", weight: 3 }, { index: 2, model: "zen/beta", provider: "zen", weight: 2 }], origin: "test", warnings: [] }, T0)
    judged.n = 0
    const visits0 = tableLoops()
    let events = 0
    for (let i = 0; i < 2_000; i++) {
      apply({ type: "spawn", owner: "ses_parent", call: `call_${i}`, base: "explore" }, T0 + 1 + 5 * i)
      apply({ type: "child", id: `ses_child${i}`, parent: "ses_parent", agent: "explore-1" }, T0 + 2 + 5 * i)
      apply({ type: "ask", session: `ses_child${i % 3}`, id: `q${i}` }, T0 + 3 + 5 * i)
      if (i % 10 === 0) apply({ type: "sweep" }, T0 + 4 + 5 * i)
      events += i % 10 === 0 ? 4 : 3
    }
    expect(state.machine.claims).toHaveLength(2_000)
    expect(state.machine.claims.every((c) => c.targetSession !== null)).toBe(true)
    expect(judged.n).toBeLessThanOrEqual(2 * events)
    expect(tableLoops() - visits0).toBeLessThanOrEqual(16 * events)
  })
})
