/**
 * Budgets a provider will tell when asked (issue 35, US-48): OpenRouter's key answer read, when a read
 * is due, what is logged, and the budget as quota sensing's `response` events through the real engine.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { DAY_MS } from "../../../src/core/constants.js"
import { initialEngineState } from "../../../src/core/engine/state.js"
import { engineStep, type Applied } from "../../../src/core/engine/step.js"
import type { Slot } from "../../../src/core/pool/pool.js"
import { budgetEvents, budgetHeaders, coveredModels } from "../../../src/core/quota/keyBudget.js"
import { apiKeyOf, KEY_ENDPOINTS, nextUtcMidnight, readOpenRouterKey } from "../../../src/core/quota/keyEndpoints.js"
import { dueReads, endpointsInUse, KEY_READ_EVERY_MS, NO_KEY, NO_KEY_MEMORY, readDone, readFailed, type KeyMemory } from "../../../src/core/quota/keySchedule.js"
import { parseRateLimitHeaders } from "../../../src/core/quota/headers.js"
import { makeClaim, T0 } from "../../helpers.js"

const OPENROUTER = KEY_ENDPOINTS.find((e) => e.provider === "openrouter")!
const slot = (index: number, model: string): Slot => ({ index, model, provider: model.slice(0, model.indexOf("/")), weight: 1 })
const SLOTS = [slot(1, "openrouter/qwen/qwen3-coder:free"), slot(2, "openrouter/deepseek/deepseek-r1:free"), slot(3, "openrouter/anthropic/claude-sonnet-4"), slot(4, "zen/alpha")]
const MIDNIGHT = Date.UTC(2026, 11, 2) // after T0, 2026-12-01T09:00Z
const answer = (daily: unknown) => ({ data: { label: "sk-or-v1-abc...xyz", limit: null, usage: 0, is_free_tier: true, free_model_daily_requests: daily } })

describe("OpenRouter's key answer (US-48)", () => {
  it("US-48 free_model_daily_requests states the :free budget of the day, reset at the next 00:00 UTC", () => {
    expect(readOpenRouterKey(answer({ limit: 50, remaining: 38, used: 12 }), T0)).toEqual({ _tag: "Budget", budget: { remaining: 38, limit: 50, resetAt: MIDNIGHT } })
    // without remaining, limit − used
    expect(readOpenRouterKey(answer({ limit: 1000, used: 999 }), T0)).toEqual({ _tag: "Budget", budget: { remaining: 1, limit: 1000, resetAt: MIDNIGHT } })
    // more used than the limit: nothing left, never negative
    expect(readOpenRouterKey(answer({ limit: 50, used: 60 }), T0)).toMatchObject({ budget: { remaining: 0 } })
    expect(readOpenRouterKey(answer({ limit: 50, remaining: 70 }), T0)).toMatchObject({ budget: { remaining: 50 } })
  })

  it("US-48 a key that states no :free budget is no budget; an answer that cannot be read is malformed, with the reason", () => {
    expect(readOpenRouterKey(answer(null), T0)).toEqual({ _tag: "NoBudget" })
    expect(readOpenRouterKey({ data: { label: "x", usage: 1 } }, T0)).toEqual({ _tag: "NoBudget" })
    expect(readOpenRouterKey({ error: { code: 401 } }, T0)).toEqual({ _tag: "Malformed", reason: "no data object" })
    expect(readOpenRouterKey([1, 2], T0)._tag).toBe("Malformed")
    expect(readOpenRouterKey(answer({ limit: 0, remaining: 0 }), T0)._tag).toBe("Malformed")
    expect(readOpenRouterKey(answer({ limit: "50", remaining: 3 }), T0)._tag).toBe("Malformed")
    expect(readOpenRouterKey(answer({ limit: 50, remaining: -1 }), T0)._tag).toBe("Malformed")
    expect(readOpenRouterKey(answer({ limit: 50 }), T0)).toEqual({ _tag: "Malformed", reason: "free_model_daily_requests has neither remaining nor used" })
    const long = readOpenRouterKey(answer({ limit: 1e300, remaining: 1 }), T0)
    expect(long._tag).toBe("Malformed")
    if (long._tag === "Malformed") expect(long.reason.length).toBeLessThanOrEqual(150)
  })

  it.prop("US-48 whatever the answer, the reading is total and a budget stays within 0..limit with a reset within the next day", [fc.anything(), fc.integer({ min: 0, max: 4e12 })], ([daily, now]) => {
    const r = readOpenRouterKey(answer(daily), now)
    if (r._tag === "Budget") {
      expect(r.budget.remaining).toBeGreaterThanOrEqual(0)
      expect(r.budget.remaining).toBeLessThanOrEqual(r.budget.limit)
      expect(r.budget.resetAt).toBeGreaterThan(now)
      expect(r.budget.resetAt - now).toBeLessThanOrEqual(DAY_MS)
      expect(r.budget.resetAt % DAY_MS).toBe(0)
    }
  })

  it("US-48 the next 00:00 UTC is strictly after now", () => {
    expect(nextUtcMidnight(MIDNIGHT)).toBe(MIDNIGHT + DAY_MS)
    expect(nextUtcMidnight(MIDNIGHT - 1)).toBe(MIDNIGHT)
  })

  it("US-48 the key is opencode's: the config's options.apiKey first, else OPENROUTER_API_KEY; blank values are none", () => {
    const config = { provider: { openrouter: { options: { apiKey: " sk-or-config " } } } }
    expect(apiKeyOf(OPENROUTER, config, { OPENROUTER_API_KEY: "sk-or-env" })).toBe("sk-or-config")
    expect(apiKeyOf(OPENROUTER, { provider: { openrouter: { options: { apiKey: "" } } } }, { OPENROUTER_API_KEY: "sk-or-env" })).toBe("sk-or-env")
    expect(apiKeyOf(OPENROUTER, undefined, { OPENROUTER_API_KEY: "sk-or-env" })).toBe("sk-or-env")
    expect(apiKeyOf(OPENROUTER, { provider: { zen: { options: { apiKey: "k" } } } }, { OPENROUTER_API_KEY: " " })).toBeUndefined()
    expect(apiKeyOf(OPENROUTER, { provider: "bad" }, {})).toBeUndefined()
  })
})

describe("when a budget is read (US-48)", () => {
  const live = (model: string, at = T0) => makeClaim(`p:${model}`, model, "explore", at)

  it("US-48 only a provider with a live claim of this process on a covered slot model is in use; a paid model of it or a provider not in the pool is not", () => {
    expect(endpointsInUse(KEY_ENDPOINTS, SLOTS, [live("openrouter/qwen/qwen3-coder:free")], T0)).toEqual([OPENROUTER])
    expect(endpointsInUse(KEY_ENDPOINTS, SLOTS, [live("openrouter/anthropic/claude-sonnet-4"), live("zen/alpha")], T0)).toEqual([])
    expect(endpointsInUse(KEY_ENDPOINTS, SLOTS, [], T0)).toEqual([])
    // a claim past its TTL is not live
    expect(endpointsInUse(KEY_ENDPOINTS, SLOTS, [live("openrouter/qwen/qwen3-coder:free", T0 - 3_600_000)], T0)).toEqual([])
    // the pool has no openrouter slot: a claim on such a model (a stale one of an earlier pool) reads nothing
    expect(endpointsInUse(KEY_ENDPOINTS, [slot(1, "zen/alpha")], [live("openrouter/qwen/qwen3-coder:free")], T0)).toEqual([])
    expect(coveredModels(OPENROUTER, SLOTS)).toEqual(["openrouter/qwen/qwen3-coder:free", "openrouter/deepseek/deepseek-r1:free"])
  })

  it("US-48 a provider in use is read at once, then not again before a minute has passed", () => {
    const claims = [live("openrouter/deepseek/deepseek-r1:free")]
    const first = dueReads(NO_KEY_MEMORY, KEY_ENDPOINTS, SLOTS, claims, T0)
    expect(first.due).toEqual([OPENROUTER])
    expect(dueReads(first.memory, KEY_ENDPOINTS, SLOTS, claims, T0 + KEY_READ_EVERY_MS - 1).due).toEqual([])
    expect(dueReads(first.memory, KEY_ENDPOINTS, SLOTS, claims, T0 + KEY_READ_EVERY_MS).due).toEqual([OPENROUTER])
    // nothing due: the very memory comes back
    const idle = dueReads(first.memory, KEY_ENDPOINTS, SLOTS, [], T0 + 5 * KEY_READ_EVERY_MS)
    expect(idle.due).toEqual([])
    expect(idle.memory).toBe(first.memory)
  })

  it.prop("US-48 over any run of checks, no provider is read twice within a minute, and none without a covered claim live", [fc.array(fc.tuple(fc.integer({ min: 0, max: 30_000 }), fc.boolean()), { maxLength: 200 })], ([steps]) => {
    let memory: KeyMemory = NO_KEY_MEMORY
    let now = T0
    const reads: Array<number> = []
    for (const [gap, inUse] of steps) {
      now += gap
      const claims = inUse ? [live("openrouter/qwen/qwen3-coder:free", now)] : [live("zen/alpha", now)]
      const d = dueReads(memory, KEY_ENDPOINTS, SLOTS, claims, now)
      memory = d.memory
      if (!inUse) expect(d.due).toEqual([])
      if (d.due.length > 0) reads.push(now)
    }
    for (let i = 1; i < reads.length; i++) expect(reads[i]! - reads[i - 1]!).toBeGreaterThanOrEqual(KEY_READ_EVERY_MS)
  })

  it("US-48 a failure is logged once per kind (a key opencode keeps elsewhere quietly); a read that works again says so once", () => {
    const refused = { kind: "status 401", reason: "HTTP 401: the key was refused" }
    const a = readFailed(NO_KEY_MEMORY, OPENROUTER, refused)
    expect(a.line).toEqual({ level: "warn", message: "openrouter budget not read (HTTP 401: the key was refused); its :free requests today are known only from its answers" })
    const b = readFailed(a.memory, OPENROUTER, refused)
    expect(b.line).toBeUndefined()
    expect(b.memory).toBe(a.memory)
    expect(readFailed(b.memory, OPENROUTER, { kind: "timeout", reason: "no answer within 5000 ms" }).line?.level).toBe("warn")
    expect(readFailed(NO_KEY_MEMORY, OPENROUTER, { kind: NO_KEY, reason: "no API key" }).line?.level).toBe("info")
    const budget = { remaining: 38, limit: 50, resetAt: MIDNIGHT }
    const again = readDone(b.memory, OPENROUTER, budget)
    expect(again.line).toEqual({ level: "info", message: "openrouter budget read again: 38/50 :free requests today, until 00:00Z" })
    expect(readDone(again.memory, OPENROUTER, budget).line.level).toBe("debug")
    expect(readFailed(again.memory, OPENROUTER, refused).line).toBeDefined()
    expect(readDone(NO_KEY_MEMORY, OPENROUTER, undefined).line.message).toBe("openrouter budget read: states no :free requests today for this key")
  })
})

describe("a stated budget in the engine (US-48)", () => {
  const applied = (o: ReturnType<typeof engineStep>): Applied => {
    if (o._tag !== "Applied") throw new Error("needs a snapshot")
    return o
  }
  const booted = () => applied(engineStep(initialEngineState(), { type: "pool", slots: SLOTS, origin: "test", warnings: [] }, T0)).state

  it("US-48 the budget reads back from its headers exactly as stated", () => {
    const budget = { remaining: 7, limit: 50, resetAt: MIDNIGHT }
    expect(parseRateLimitHeaders(budgetHeaders(budget), T0)?.requests).toEqual({ remaining: 7, limit: 50, resetAt: MIDNIGHT })
  })

  it("US-48 each covered slot gets a quota line and record; at the reserve every :free slot cools as quota_low until 00:00 UTC, the paid ones do not", () => {
    const roomy = budgetEvents(OPENROUTER, { remaining: 38, limit: 50, resetAt: MIDNIGHT }, SLOTS, 0.02)
    expect(roomy.map((e) => e.model)).toEqual(["openrouter/qwen/qwen3-coder:free", "openrouter/deepseek/deepseek-r1:free"])
    let state = booted()
    for (const ev of roomy) {
      const out = applied(engineStep(state, ev, T0 + 10))
      expect(out.lines).toEqual([{ at: T0 + 10, type: "quota", model: ev.model, requests: { remaining: 38, limit: 50, resetAt: MIDNIGHT } }])
      expect(out.decisions).toEqual([])
      state = out.state
    }
    expect(state.quotas.get("openrouter/deepseek/deepseek-r1:free")).toMatchObject({ requests: { remaining: 38, limit: 50, resetAt: MIDNIGHT } })

    const cooled: Array<string> = []
    for (const ev of budgetEvents(OPENROUTER, { remaining: 1, limit: 50, resetAt: MIDNIGHT }, SLOTS, 0.02)) {
      expect(engineStep(state, ev, T0 + 20)._tag).toBe("NeedSnapshot")
      const out = applied(engineStep(state, ev, T0 + 20, { peers: [], cooldowns: new Map() }))
      expect(out.decisions).toEqual([{ type: "cool", at: T0 + 20, models: [ev.model], scope: "model", reason: "quota_low", until: MIDNIGHT, strike: 0 }])
      cooled.push(...out.commit.cool.map((c) => c.model))
      state = out.state
    }
    expect(cooled).toEqual(["openrouter/qwen/qwen3-coder:free", "openrouter/deepseek/deepseek-r1:free"])
  })
})
