/** Quota sensing in the decision core (issue 12, US-48): the `quota` trace line and the `quota_low` cooling. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { QUOTA_LOW_WINDOW_MS, STATED_RESET_MAX_MS } from "../../../src/core/constants.js"
import { initialEngineState } from "../../../src/core/engine/state.js"
import { engineStep, type Applied, type EngineEvent } from "../../../src/core/engine/step.js"
import { isLow, planQuotaLow } from "../../../src/core/quota/low.js"
import { decodeLine } from "../../../src/core/trace/input.js"
import { replayText } from "../../../src/core/trace/replay.js"
import { lines, pool, T0, trace } from "../../helpers.js"

const P = pool(T0, ["zen/a", 1], ["go/b", 1])
const quota = (at: number, model: string, requests?: unknown, tokens?: unknown, extra: object = {}) => ({
  at,
  type: "quota",
  model,
  ...(requests === undefined ? {} : { requests }),
  ...(tokens === undefined ? {} : { tokens }),
  ...extra
})

describe("quota_low (US-48)", () => {
  it("US-48 at or below 2 % of the limit is low; without a limit only 0 is", () => {
    expect(isLow({ remaining: 2, limit: 100 }, 0.02)).toBe(true)
    expect(isLow({ remaining: 3, limit: 100 }, 0.02)).toBe(false)
    expect(isLow({ remaining: 0, limit: 10 }, 0.02)).toBe(true)
    expect(isLow({ remaining: 1, limit: 10 }, 0.02)).toBe(false)
    expect(isLow({ remaining: 0 }, 0.02)).toBe(true)
    expect(isLow({ remaining: 1 }, 0.5)).toBe(false)
    expect(isLow({ remaining: 50, limit: 100 }, 0.5)).toBe(true)
  })

  it("US-48 a slot's requests at the reserve cool it as quota_low until the stated reset, strike 0; the next spawn goes to the other slot", () => {
    const out = lines(
      trace(
        P,
        quota(T0 + 1000, "zen/a", { remaining: 2, limit: 100, resetAt: T0 + 61_000 }),
        { at: T0 + 2000, type: "spawn", claim: "c1", base: "explore" }
      )
    )
    expect(out).toEqual([
      `{"at":${T0 + 1000},"type":"cool","models":["zen/a"],"scope":"model","reason":"quota_low","until":${T0 + 61_000},"strike":0}`,
      `{"at":${T0 + 2000},"type":"route","claim":"c1","base":"explore","slot":2,"model":"go/b","agent":"explore-2","pass":"first"}`
    ])
  })

  it("US-48 tokens low count too; no reset stated cools for 60 s; the latest reset of the low dimensions wins", () => {
    expect(lines(trace(P, quota(T0 + 1, "zen/a", { remaining: 90, limit: 100 }, { remaining: 100, limit: 10_000 })))).toEqual([
      `{"at":${T0 + 1},"type":"cool","models":["zen/a"],"scope":"model","reason":"quota_low","until":${T0 + 1 + QUOTA_LOW_WINDOW_MS},"strike":0}`
    ])
    const plan = planQuotaLow("m", [{ remaining: 0, resetAt: T0 + 5000 }, { remaining: 1, limit: 100, resetAt: T0 + 9000 }], 0.02, T0)
    expect(plan).toMatchObject({ reason: "quota_low", until: T0 + 9000, strike: 0, source: "header" })
  })

  it("US-48 above the reserve, a model outside the pool, or a model already cooling that long: no decision", () => {
    expect(lines(trace(P, quota(T0 + 1, "zen/a", { remaining: 50, limit: 100, resetAt: T0 + 9000 })))).toEqual([])
    expect(lines(trace(P, quota(T0 + 1, "other/m", { remaining: 0, limit: 100 })))).toEqual([])
    const again = lines(
      trace(
        P,
        quota(T0 + 1, "zen/a", { remaining: 1, limit: 100, resetAt: T0 + 60_000 }),
        quota(T0 + 2, "zen/a", { remaining: 0, limit: 100, resetAt: T0 + 60_000 }),
        quota(T0 + 3, "zen/a", { remaining: 0, limit: 100, resetAt: T0 + 90_000 })
      )
    )
    expect(again.map((l) => JSON.parse(l).until)).toEqual([T0 + 60_000, T0 + 90_000])
  })

  it("US-48 quota_low never shortens a longer cooldown (a stated 429 reset)", () => {
    const out = lines(
      trace(
        P,
        { at: T0 + 1, type: "limit", text: "Rate limit exceeded", status: 429, headers: { "retry-after": "600" }, model: "zen/a" },
        quota(T0 + 2, "zen/a", { remaining: 0, limit: 100, resetAt: T0 + 60_000 }),
        { at: T0 + 3, type: "status" }
      )
    )
    expect(JSON.parse(out[0]!)).toMatchObject({ reason: "rate_limit", until: T0 + 1 + 600_000 })
    expect(out).toHaveLength(2)
    expect(JSON.parse(out[1]!).slots[0].cooling).toEqual({ until: T0 + 1 + 600_000, reason: "rate_limit" })
  })

  it("US-48 the reserve on the line is used; status shows quota_low with its reset", () => {
    const out = lines(trace(P, quota(T0 + 1, "go/b", { remaining: 40, limit: 100, resetAt: T0 + 30_000 }, undefined, { reserve: 0.5 }), { at: T0 + 2, type: "status" }))
    expect(JSON.parse(out[1]!).slots[1].cooling).toEqual({ until: T0 + 30_000, reason: "quota_low" })
  })

  it("US-48 bad quota lines are refused naming the field; a trace without quota lines replays as before", () => {
    const msg = (o: object) => {
      const r = decodeLine(JSON.stringify(o))
      return "message" in r && !("type" in r) ? r.message : undefined
    }
    expect(msg(quota(T0, "zen/a", { remaining: -1 }))).toBe('field "requests.remaining" must be ≥ 0')
    expect(msg(quota(T0, "zen/a", { remaining: 1, limit: 0 }))).toBe('field "requests.limit" must be above 0')
    expect(msg(quota(T0, "zen/a", "x"))).toBe('field "requests" must be an object {remaining, limit?, resetAt?}')
    expect(msg(quota(T0, "zen/a", { remaining: 1 }, undefined, { reserve: 1 }))).toBe('field "reserve" must be a fraction from 0 up to (not including) 1')
    expect(msg({ at: T0, type: "quota" })).toBe('missing required field "model"')
    expect(replayText(trace(P, quota(T0 + 1, "zen/a", { remaining: "1" }))).error?.line).toBe(2)
  })

  it("US-48 a reset more than 7 days out is absent (issue 18): 60 s, as with none; exactly 7 days is kept; a valid reset beside a garbage one wins", () => {
    const WEEK = STATED_RESET_MAX_MS
    expect(planQuotaLow("m", [{ remaining: 0, resetAt: T0 + WEEK + 1_000 }], 0.02, T0)).toMatchObject({ until: T0 + QUOTA_LOW_WINDOW_MS, source: "flat" })
    expect(planQuotaLow("m", [{ remaining: 0, resetAt: 8.64e15 }], 0.02, T0)).toMatchObject({ until: T0 + QUOTA_LOW_WINDOW_MS, source: "flat" })
    expect(planQuotaLow("m", [{ remaining: 0, resetAt: T0 + WEEK }], 0.02, T0)).toMatchObject({ until: T0 + WEEK, source: "header" })
    expect(planQuotaLow("m", [{ remaining: 0, resetAt: T0 + WEEK + 1_000 }, { remaining: 1, limit: 100, resetAt: T0 + 9_000 }], 0.02, T0)).toMatchObject({ until: T0 + 9_000, source: "header" })
    expect(lines(trace(P, quota(T0 + 1, "zen/a", { remaining: 0, limit: 100, resetAt: T0 + 1 + 3_000 * 86_400_000 })))).toEqual([
      `{"at":${T0 + 1},"type":"cool","models":["zen/a"],"scope":"model","reason":"quota_low","until":${T0 + 1 + QUOTA_LOW_WINDOW_MS},"strike":0}`
    ])
  })

  it.prop("US-48 a quota_low cooling always ends after the line and within 7 days", [fc.nat(1000), fc.option(fc.nat(2000), { nil: undefined }), fc.option(fc.integer({ min: -1e9, max: 1e12 }), { nil: undefined })], ([remaining, limit, reset]) => {
    const plan = planQuotaLow("m", [{ remaining, ...(limit === undefined || limit === 0 ? {} : { limit }), ...(reset === undefined ? {} : { resetAt: T0 + reset }) }], 0.02, T0)
    if (plan === undefined) return
    expect(plan.until).toBeGreaterThan(T0)
    expect(plan.until).toBeLessThanOrEqual(T0 + STATED_RESET_MAX_MS)
    expect(plan.strike).toBe(0)
  })
})

describe("quota in the engine (US-48)", () => {
  const applied = (o: ReturnType<typeof engineStep>): Applied => {
    if (o._tag !== "Applied") throw new Error("needs a snapshot")
    return o
  }
  const booted = () => applied(engineStep(initialEngineState(), { type: "pool", slots: [{ index: 1, provider: "zen", model: "zen/a", weight: 1 }, { index: 2, provider: "go", model: "go/b", weight: 1 }], origin: "test", warnings: [] }, T0)).state
  const response = (headers: Record<string, string>, model?: string): EngineEvent => ({ type: "response", headers, ...(model === undefined ? {} : { model }), reserve: 0.02 })

  it("US-48 a response with room left records a quota line and the observation, decides nothing, and needs no lock", () => {
    const out = applied(engineStep(booted(), response({ "x-ratelimit-remaining-requests": "80", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "30s" }, "zen/a"), T0 + 10))
    expect(out.lines).toEqual([{ at: T0 + 10, type: "quota", model: "zen/a", requests: { remaining: 80, limit: 100, resetAt: T0 + 30_010 } }])
    expect(out.decisions).toEqual([])
    expect(out.observed).toMatchObject({ model: "zen/a", observation: { requests: { remaining: 80, limit: 100 } } })
  })

  it("US-48 a response at the reserve needs the shared state, then cools the slot and writes its cooldown", () => {
    const state = booted()
    const ev = response({ "x-ratelimit-remaining-requests": "1", "x-ratelimit-limit-requests": "100", "x-ratelimit-reset-requests": "45s" }, "zen/a")
    expect(engineStep(state, ev, T0 + 10)._tag).toBe("NeedSnapshot")
    const out = applied(engineStep(state, ev, T0 + 10, { peers: [], cooldowns: new Map() }))
    expect(out.decisions).toEqual([{ type: "cool", at: T0 + 10, models: ["zen/a"], scope: "model", reason: "quota_low", until: T0 + 45_010, strike: 0 }])
    expect(out.commit.cool).toEqual([expect.objectContaining({ model: "zen/a", reason: "quota_low", until: T0 + 45_010, strikes: 0 })])
    expect(out.logs.map(({ level, message }) => ({ level, message }))).toContainEqual({ level: "info", message: `cooling zen/a quota_low strike 0 for 45s until ${new Date(T0 + 45_010).toISOString()}` })
  })

  it("US-48 a model outside the pool is only observed; a response without rate-limit headers is nothing", () => {
    const other = applied(engineStep(booted(), response({ "x-ratelimit-remaining-requests": "0" }, "big/model"), T0 + 10))
    expect(other.lines).toEqual([])
    expect(other.observed?.model).toBe("big/model")
    const none = applied(engineStep(booted(), response({ "content-type": "text/event-stream" }, "zen/a"), T0 + 10))
    expect(none.lines).toEqual([])
    expect(none.observed).toBeUndefined()
  })
})
