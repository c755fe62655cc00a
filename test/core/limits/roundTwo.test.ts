/**
 * Issue 35 items 1–2: Google quota ids decide per-minute, per-day or never-fits; opencode's plan limits
 * cool the plan provider; a gateway's relayed upstream credit error cools only what routes to that
 * upstream; the free-tier entitlement class; a quota's reset stated beyond 7 days is the 7-day cap.
 */
import { describe, expect, it } from "@effect/vitest"
import { ENTITLEMENT_COOLDOWN_MS, STATED_RESET_LONG_MAX_MS, STATED_RESET_MAX_MS } from "../../../src/core/constants.js"
import { statedReset } from "../../../src/core/limits/reset.js"
import { vendorOfModel, vendorOfName } from "../../../src/core/limits/providerFamily.js"
import { applyCool, decideLimit, decideRetry, providerOf, type CooldownTable } from "../../../src/core/pool/cooldown.js"
import type { Slot } from "../../../src/core/pool/pool.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const DAY = 86_400_000
const slot = (model: string, index: number): Slot => ({ model, provider: providerOf(model), weight: 1, index })
const slotsOf = (...models: ReadonlyArray<string>): ReadonlyArray<Slot> => models.map((m, i) => slot(m, i + 1))
const api = (status: number, body: unknown, url: string) =>
  JSON.stringify({ name: "APIError", data: { message: "x", statusCode: status, isRetryable: status === 429, responseHeaders: {}, responseBody: JSON.stringify(body), metadata: { url } } })

const GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent"
const quotaFailure = (ids: ReadonlyArray<string>, message: string, retryDelay?: string) =>
  api(
    429,
    {
      error: {
        code: 429,
        message,
        status: "RESOURCE_EXHAUSTED",
        details: [
          { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: ids.map((quotaId) => ({ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", quotaId })) },
          ...(retryDelay === undefined ? [] : [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }])
        ]
      }
    },
    GEMINI_URL
  )

describe("issue 35: Google quota ids", () => {
  const slots = slotsOf("google/gemini-2.5-pro", "google/gemini-2.5-flash")
  const model = "google/gemini-2.5-pro"

  it("US-4 a per-minute input-token quota id is a rate limit on the model for its RetryInfo delay, not a context limit", () => {
    const d = decideLimit(slots, new Map(), { text: quotaFailure(["GenerateContentInputTokensPerModelPerMinute-FreeTier"], "You exceeded your current quota", "21s"), status: 429, model }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "rate_limit", rule: "quota-id-per-minute", plan: { models: [model], windowMs: 21_000, source: "detail" } })
  })

  it("US-4 a per-day quota id among per-minute ones is a quota until midnight Pacific time, whatever RetryInfo says", () => {
    const text = quotaFailure(["GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"], "You exceeded your current quota", "30s")
    const d = decideLimit(slots, new Map(), { text, status: 429, model }, NOW)
    // 2026-12-01 is PST (UTC−8): the next midnight is 2026-12-02T08:00Z, 20 h after noon UTC
    expect(d).toMatchObject({ _tag: "Cool", cls: "quota", rule: "quota-id-per-day", plan: { models: [model], source: "day", until: Date.parse("2026-12-02T08:00:00Z") } })
  })

  it("US-31 a request stated bigger than the limit itself never fits, per-minute quota id or not", () => {
    const text = quotaFailure(["GenerateContentInputTokensPerModelPerMinute-FreeTier"], "Input tokens per minute: Limit 250000, Used 0, Requested 400000.", "21s")
    expect(decideLimit(slots, new Map(), { text, status: 429, model }, NOW)).toEqual({ _tag: "Ignore", reason: "context_limit" })
    const fits = quotaFailure(["GenerateContentInputTokensPerModelPerMinute-FreeTier"], "Input tokens per minute: Limit 250000, Used 240000, Requested 20000.", "21s")
    expect(decideLimit(slots, new Map(), { text: fits, status: 429, model }, NOW)).toMatchObject({ _tag: "Cool", cls: "rate_limit" })
  })

  it("US-4 without a quota id the words still decide: an input token count that is too long stays a context limit", () => {
    expect(decideLimit(slots, new Map(), { text: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", status: 400, model }, NOW)).toEqual({ _tag: "Ignore", reason: "context_limit" })
  })
})

describe("issue 35: opencode's plan limits stated only by the message", () => {
  const slots = slotsOf("opencode-go/glm-5", "opencode-go/kimi-k2.6", "opencode/big-pickle", "elsewhere/x")

  it("US-42 a monthly limit on an opencode Go model cools every slot of opencode-go, for the 7-day cap when 10 days are stated", () => {
    const d = decideLimit(slots, new Map(), { text: "Monthly usage limit reached. It will reset in 10 days 19 hours.", status: 429, model: "opencode-go/glm-5" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "quota", rule: "opencode-plan-limit", plan: { models: ["opencode-go/glm-5", "opencode-go/kimi-k2.6"], windowMs: STATED_RESET_MAX_MS, source: "text" } })
  })

  it("US-42 the weekly and 5-hour forms, and a retry status that carries only the message, cool the plan provider until the stated reset", () => {
    const weekly = decideLimit(slots, new Map(), { text: "weekly usage limit reached. It will reset in 5 days 10 hours.", status: 429, model: "opencode-go/kimi-k2.6" }, NOW)
    expect(weekly).toMatchObject({ _tag: "Cool", plan: { models: ["opencode-go/glm-5", "opencode-go/kimi-k2.6"], windowMs: (5 * 24 + 10) * 3_600_000 } })
    const retry = decideRetry(slots, new Map(), { message: "5-hour usage limit reached. Resets in 21min.", next: NOW + 2_000, provider: "opencode-go", model: "opencode-go/glm-5", pooled: true }, NOW)
    expect(retry).toMatchObject({ _tag: "Cool", cls: "quota", rule: "opencode-plan-limit", plan: { models: ["opencode-go/glm-5", "opencode-go/kimi-k2.6"], windowMs: 21 * 60_000 } })
  })

  it("US-42 the same words from another provider are not an opencode plan: only the model cools", () => {
    const d = decideLimit(slotsOf("groq/a", "groq/b"), new Map(), { text: "Monthly usage limit reached.", status: 429, model: "groq/a" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", rule: "quota", plan: { models: ["groq/a"] } })
  })
})

describe("issue 35: a gateway relaying its upstream's account error", () => {
  const relayed = (url: string, providerName: string) =>
    api(
      429,
      {
        error: {
          message: "Error from provider: Provider returned error",
          code: 429,
          metadata: {
            raw: JSON.stringify({ error: { message: "Your account org-1 <ak-1> is suspended due to insufficient balance, please recharge your account", type: "exceeded_current_quota_error" } }),
            provider_name: providerName,
            is_byok: true
          }
        }
      },
      url
    )

  it("US-44 on OpenRouter only the models routed to the named upstream cool, by their id's vendor prefix, with the credit windows", () => {
    const slots = slotsOf("openrouter/moonshotai/kimi-k2", "openrouter/anthropic/claude-sonnet-4", "openrouter/moonshotai/kimi-k2.5:free", "openrouter/z-ai/glm-4.6")
    const d = decideLimit(slots, new Map(), { text: relayed("https://openrouter.ai/api/v1/chat/completions", "Moonshot AI"), status: 429, model: "openrouter/moonshotai/kimi-k2" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "quota", credit: true, rule: "gateway-upstream-credit", plan: { models: ["openrouter/moonshotai/kimi-k2", "openrouter/moonshotai/kimi-k2.5:free"], scope: "provider", windowMs: 3_600_000 } })
  })

  it("US-44 on opencode Go (no vendor prefix) the model names decide: kimi-* route to Moonshot, glm-5 does not", () => {
    const slots = slotsOf("opencode-go/kimi-k2.5", "opencode-go/kimi-k2.6", "opencode-go/glm-5")
    const d = decideLimit(slots, new Map(), { text: relayed("https://opencode.ai/zen/go/v1/chat/completions", "Moonshot AI"), status: 429, model: "opencode-go/kimi-k2.6" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", credit: true, plan: { models: ["opencode-go/kimi-k2.5", "opencode-go/kimi-k2.6"] } })
  })

  it("US-44 an upstream the gateway's models cannot be matched to cools the attributed model alone; an upstream rate limit is no credit row", () => {
    const slots = slotsOf("openrouter/qwen/qwen3-coder:free", "openrouter/moonshotai/kimi-k2")
    const d = decideLimit(slots, new Map(), { text: relayed("https://openrouter.ai/api/v1/chat/completions", "Chutes"), status: 429, model: "openrouter/qwen/qwen3-coder:free" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", credit: true, plan: { models: ["openrouter/qwen/qwen3-coder:free"], scope: "model" } })
    const rate = api(429, { error: { message: "Provider returned error", code: 429, metadata: { raw: "qwen/qwen3-coder:free is temporarily rate-limited upstream.", provider_name: "Chutes" } } }, "https://openrouter.ai/api/v1/chat/completions")
    expect(decideLimit(slots, new Map(), { text: rate, status: 429, model: "openrouter/qwen/qwen3-coder:free" }, NOW)).toMatchObject({ _tag: "Cool", credit: false, rule: "rate" })
  })

  it("US-44 a gateway's own credit error (no relayed upstream) still cools the whole gateway provider", () => {
    const slots = slotsOf("openrouter/moonshotai/kimi-k2", "openrouter/anthropic/claude-sonnet-4")
    const own = api(402, { error: { message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits", code: 402 } }, "https://openrouter.ai/api/v1/chat/completions")
    expect(decideLimit(slots, new Map(), { text: own, status: 402, model: "openrouter/moonshotai/kimi-k2" }, NOW)).toMatchObject({ _tag: "Cool", rule: "credit", plan: { models: ["openrouter/moonshotai/kimi-k2", "openrouter/anthropic/claude-sonnet-4"] } })
  })

  it("US-44 upstream names and model ids map to one vendor", () => {
    expect(["Moonshot AI", "moonshotai", "Anthropic", "Google AI Studio", "Z.AI", "z-ai", "xAI", "x-ai", "Alibaba", "Chutes"].map(vendorOfName)).toEqual([
      "moonshot",
      "moonshot",
      "anthropic",
      "google",
      "zai",
      "zai",
      "xai",
      "xai",
      "qwen",
      "chutes"
    ])
    expect(["openrouter/anthropic/claude-sonnet-4", "opencode-go/kimi-k2.6", "opencode/gpt-5.1-codex", "opencode/o3", "opencode/big-pickle", "opencode/ollama-x"].map(vendorOfModel)).toEqual([
      "anthropic",
      "moonshot",
      "openai",
      "openai",
      undefined,
      undefined
    ])
  })
})

describe("issue 35: the free-tier entitlement", () => {
  const slots = slotsOf("opencode/big-pickle", "opencode/muse-spark-1.3-contributor-free", "opencode-go/glm-5")
  const refused = api(403, { type: "error", error: { type: "FreeTierError", message: "Error from provider (Console): OpenCode's free tier can only be used from within OpenCode" } }, "https://opencode.ai/zen/v1/responses")

  it("US-44 cools every slot of the provider flat for an hour with no strike, and again without escalating", () => {
    const first = decideLimit(slots, new Map(), { text: refused, status: 403, model: "opencode/big-pickle" }, NOW)
    expect(first).toMatchObject({ _tag: "Cool", cls: "entitlement", rule: "free-tier-entitlement", plan: { models: ["opencode/big-pickle", "opencode/muse-spark-1.3-contributor-free"], reason: "entitlement", strike: 0, windowMs: ENTITLEMENT_COOLDOWN_MS, source: "flat" } })
    if (first._tag !== "Cool") return
    const table: CooldownTable = applyCool(new Map(), first.plan, NOW)
    const later = NOW + ENTITLEMENT_COOLDOWN_MS + 60_000
    const again = decideLimit(slots, table, { text: refused, status: 403, model: "opencode/big-pickle" }, later)
    expect(again).toMatchObject({ _tag: "Cool", plan: { strike: 0, windowMs: ENTITLEMENT_COOLDOWN_MS } })
  })

  it("US-42 behind a pooled retry status the refusal cools the provider too", () => {
    const d = decideRetry(slots, new Map(), { message: "Error from provider (Console): OpenCode's free tier can only be used from within OpenCode", next: NOW + 2_000, model: "opencode/big-pickle", pooled: true, status: 403 }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "entitlement", plan: { models: ["opencode/big-pickle", "opencode/muse-spark-1.3-contributor-free"] } })
  })
})

describe("issue 35: a quota's reset stated beyond 7 days", () => {
  it("US-4 a quota's body text or body field beyond 7 days (up to 31) is the 7-day cap with what was stated; without `long`, absent as before", () => {
    expect(statedReset({ text: "It will reset in 10 days 19 hours.", now: NOW, long: true })).toEqual({ ms: STATED_RESET_MAX_MS, source: "text", statedMs: (10 * 24 + 19) * 3_600_000 })
    expect(statedReset({ text: "x", resetsInMs: 20 * DAY, now: NOW, long: true })).toEqual({ ms: STATED_RESET_MAX_MS, source: "body", statedMs: 20 * DAY })
    expect(statedReset({ text: "It will reset in 10 days 19 hours.", now: NOW })).toBeUndefined()
    expect(statedReset({ text: "resets in 32 days", now: NOW, long: true })).toBeUndefined()
    expect(statedReset({ text: "x", now: NOW, long: true, headers: { "retry-after": String(10 * 86_400) } })).toBeUndefined()
    expect(STATED_RESET_LONG_MAX_MS).toBe(31 * DAY)
  })

  it("US-4 a rate limit stating 10 days is still garbage: the strike backoff (issue 18)", () => {
    const d = decideLimit(slotsOf("zen/a"), new Map(), { text: "Rate limit exceeded, resets in 10 days", model: "zen/a" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "rate_limit", plan: { windowMs: 60_000, source: "backoff" } })
  })
})
