/**
 * Issue 19: a failed provider response seen by the fetch wrapper is joined to the session's next retry
 * status (which carries only a message), recorded on the `retry` line and read by the breaker; an empty
 * balance warns once per provider.
 */
import { describe, expect, it } from "@effect/vitest"
import { FAILURE_MATCH_MS, FAILURES_MAX, initialEngineState, type EngineState } from "../../src/core/engine/state.js"
import { engineStep, type Applied, type EngineEvent } from "../../src/core/engine/step.js"
import type { PoolSnapshot } from "../../src/core/engine/snapshot.js"
import { replayText } from "../../src/core/trace/replay.js"
import { T0 } from "../helpers.js"

const SLOTS = [
  { index: 1, provider: "gemini", model: "gemini/flash", weight: 1 },
  { index: 2, provider: "gemini", model: "gemini/pro", weight: 1 },
  { index: 3, provider: "openrouter", model: "openrouter/a", weight: 1 },
  { index: 4, provider: "openrouter", model: "openrouter/b", weight: 1 }
]
const EMPTY: PoolSnapshot = { peers: [], cooldowns: new Map() }
const GEMINI_429 = JSON.stringify({
  error: { code: 429, message: "You exceeded your current quota, please check your plan and billing details.", status: "RESOURCE_EXHAUSTED", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "26s" }] }
})

const step = (state: EngineState, event: EngineEvent, at: number): Applied => {
  const o = engineStep(state, event, at, EMPTY)
  if (o._tag !== "Applied") throw new Error("needs a snapshot")
  return o
}

/** A pool with a pooled `explore` child `ses_c` on slot 1. */
const pooled = (): EngineState => {
  let s = step(initialEngineState(), { type: "pool", slots: SLOTS, origin: "t", warnings: [] }, T0).state
  s = step(s, { type: "spawn", owner: "ses_root", call: "call_1", base: "explore" }, T0 + 1).state
  s = step(s, { type: "child", id: "ses_c", parent: "ses_root", agent: "explore-1" }, T0 + 2).state
  return s
}

describe("issue 19: the failed response behind a retry", () => {
  it("US-42 the body's RetryInfo reaches the retry line and times the cooldown (26 s, not the 60 s backoff)", () => {
    let s = pooled()
    s = step(s, { type: "failed", session: "ses_c", status: 429, headers: { "content-type": "application/json" }, body: GEMINI_429 }, T0 + 10).state
    const out = step(s, { type: "retry", session: "ses_c", message: "You exceeded your current quota, please check your plan and billing details.", next: T0 + 2_500 }, T0 + 11)
    const line = out.lines.find((l) => l.type === "retry")
    expect(line).toMatchObject({ status: 429, body: GEMINI_429 })
    const cool = out.decisions.find((d) => d.type === "cool")
    expect(cool).toMatchObject({ models: ["gemini/flash"], reason: "quota", until: T0 + 11 + 26_000 })
    expect(out.state.failures.has("ses_c")).toBe(false)
    // the recorded lines replay to the same decision
    const replayed = replayText([...pooledLines(), ...out.lines].map((l) => JSON.stringify(l)).join("\n"))
    expect(replayed.error).toBeUndefined()
    expect(replayed.decisions.filter((d) => d.type === "cool")).toEqual([cool])
  })

  it("US-42 a failure older than FAILURE_MATCH_MS, or another session's, is not joined", () => {
    let s = pooled()
    s = step(s, { type: "failed", session: "ses_c", status: 429, headers: {}, body: GEMINI_429 }, T0 + 10).state
    const late = step(s, { type: "retry", session: "ses_c", message: "Rate limit exceeded", next: T0 + FAILURE_MATCH_MS + 13_000 }, T0 + 11 + FAILURE_MATCH_MS)
    expect(late.lines.find((l) => l.type === "retry")).not.toHaveProperty("body")
    let t = pooled()
    t = step(t, { type: "failed", session: "ses_other", status: 429, headers: {}, body: GEMINI_429 }, T0 + 10).state
    const other = step(t, { type: "retry", session: "ses_c", message: "Rate limit exceeded", next: T0 + 13_000 }, T0 + 11)
    expect(other.lines.find((l) => l.type === "retry")).not.toHaveProperty("body")
  })

  it("US-42 at most FAILURES_MAX sessions' failures are kept, the oldest forgotten first", () => {
    let s = pooled()
    for (let i = 0; i <= FAILURES_MAX; i++) s = step(s, { type: "failed", session: `ses_${i}`, status: 500, headers: {}, body: "" }, T0 + 10 + i).state
    expect(s.failures.size).toBe(FAILURES_MAX)
    expect(s.failures.has("ses_0")).toBe(false)
    expect(s.failures.has(`ses_${FAILURES_MAX}`)).toBe(true)
  })

  it("US-44 an empty balance cools every slot of the provider and warns once that it is out of credit", () => {
    let s = pooled()
    const error = {
      name: "APIError",
      data: { message: "Insufficient credits", statusCode: 402, isRetryable: false, responseBody: JSON.stringify({ error: { message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits", code: 402 } }), metadata: { url: "https://openrouter.ai/api/v1/chat/completions" } }
    }
    const first = step(s, { type: "error", session: "ses_x", error, model: "openrouter/a" }, T0 + 10)
    expect(first.decisions.find((d) => d.type === "cool")).toMatchObject({ models: ["openrouter/a", "openrouter/b"], reason: "quota", until: T0 + 10 + 3_600_000 })
    expect(first.logs.filter((l) => l.message.includes("out of credit"))).toEqual([{ level: "warn", message: "provider openrouter is out of credit; its slots cool until you top up or 10:00Z" }])
    s = first.state
    const again = step(s, { type: "error", session: "ses_y", error, model: "openrouter/b" }, T0 + 40_000)
    expect(again.logs.filter((l) => l.message.includes("out of credit"))).toEqual([])
  })
})

describe("issue 19: credit behind a retry", () => {
  it("US-44 a Z.ai 1113 answer behind a pooled retry (whose message alone names no family) warns that the provider is out of credit", () => {
    const zai = [
      { index: 1, provider: "zai-coding-plan", model: "zai-coding-plan/glm-4.6", weight: 1 },
      { index: 2, provider: "zai-coding-plan", model: "zai-coding-plan/glm-4.5", weight: 1 }
    ]
    let s = step(initialEngineState(), { type: "pool", slots: zai, origin: "t", warnings: [] }, T0).state
    s = step(s, { type: "spawn", owner: "ses_root", call: "call_1", base: "explore" }, T0 + 1).state
    s = step(s, { type: "child", id: "ses_c", parent: "ses_root", agent: "explore-1" }, T0 + 2).state
    const body = JSON.stringify({ error: { code: "1113", message: "余额不足或无可用资源包,请充值。" } })
    s = step(s, { type: "failed", session: "ses_c", status: 429, headers: {}, body }, T0 + 10).state
    const out = step(s, { type: "retry", session: "ses_c", message: "余额不足或无可用资源包,请充值。", next: T0 + 2_000 }, T0 + 11)
    expect(out.decisions.find((d) => d.type === "cool")).toMatchObject({ models: ["zai-coding-plan/glm-4.6", "zai-coding-plan/glm-4.5"], reason: "quota", until: T0 + 11 + 3_600_000 })
    expect(out.logs.map((l) => l.message).filter((m) => m.includes("out of credit"))).toEqual(["provider zai-coding-plan is out of credit; its slots cool until you top up or 10:00Z"])
  })
})

/** The lines `pooled()` records, for replay. */
const pooledLines = () => {
  const lines: Array<unknown> = []
  let s = initialEngineState()
  const events: ReadonlyArray<readonly [EngineEvent, number]> = [
    [{ type: "pool", slots: SLOTS, origin: "t", warnings: [] }, T0],
    [{ type: "spawn", owner: "ses_root", call: "call_1", base: "explore" }, T0 + 1],
    [{ type: "child", id: "ses_c", parent: "ses_root", agent: "explore-1" }, T0 + 2]
  ]
  for (const [e, at] of events) {
    const out = step(s, e, at)
    lines.push(...out.lines)
    s = out.state
  }
  return lines
}
