/**
 * Issue 19: one example per row of the classification table (src/core/limits/limitRules.ts), the stated-reset
 * sources and their precedence (docs/CLASSIFICATION.md), the provider families and their time zones.
 */
import { describe, expect, it } from "@effect/vitest"
import { classifyError } from "../../../src/core/limits/classify.js"
import { errorView } from "../../../src/core/limits/errorView.js"
import { LIMIT_RULES } from "../../../src/core/limits/limitRules.js"
import type { Slot } from "../../../src/core/pool/pool.js"
import { familyOf, nextMidnight, zoneOffsetMs } from "../../../src/core/limits/providerFamily.js"
import { statedReset } from "../../../src/core/limits/reset.js"
import { decideLimit, providerOf } from "../../../src/core/pool/cooldown.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const api = (status: number, body: unknown, url = "https://example.test/v1/chat/completions", headers: Record<string, string> = {}) =>
  JSON.stringify({
    name: "APIError",
    data: { message: "x", statusCode: status, isRetryable: status === 429, responseHeaders: headers, responseBody: typeof body === "string" ? body : JSON.stringify(body), metadata: { url } }
  })

/** [row id, text, status, model, expected class] — one example that lands on each row. */
const ROWS: ReadonlyArray<readonly [string, string, number | undefined, string | undefined, string]> = [
  ["quota-id-per-day", api(429, { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded", details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", quotaId: "GenerateContentInputTokensPerModelPerMinute-FreeTier" }, { quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }] }] } }), 429, undefined, "quota"],
  ["quota-id-per-minute", api(429, { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded", details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", quotaId: "GenerateContentInputTokensPerModelPerMinute-FreeTier" }] }] } }), 429, undefined, "rate_limit"],
  ["context", "This model's maximum context length is 8192 tokens", 400, undefined, "context_limit"],
  ["never-fits", "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.", 429, undefined, "context_limit"],
  ["over-budget", "Rate limit reached on tokens per minute (TPM): Limit 7000, Used 0, Requested ~12903. Please try again in 50.6s.", 429, undefined, "context_limit"],
  ["too-large-status", "Payload rejected", 413, undefined, "context_limit"],
  ["unauthorized", "Request blocked by upstream provider", 401, undefined, "auth"],
  ["model-access", "You don't have access to the model with the specified model ID.", 403, undefined, "unavailable"],
  ["bad-credentials", "API key not valid. Please pass a valid API key.", 400, undefined, "auth"],
  ["withdrawn", "The model `qwen-qwq-32b` has been decommissioned and is no longer supported.", 400, undefined, "unavailable"],
  ["free-tier-entitlement", api(403, { type: "error", error: { type: "FreeTierError", message: "Error from provider (Console): OpenCode's free tier can only be used from within OpenCode" } }, "https://opencode.ai/zen/v1/responses"), 403, "opencode/big-pickle", "entitlement"],
  ["openrouter-free-per-day", api(429, { error: { message: "Rate limit exceeded: free-models-per-day.", code: 429 } }, "https://openrouter.ai/api/v1/chat/completions"), 429, "openrouter/a:free", "quota"],
  ["openrouter-free-per-min", api(429, { error: { message: "Rate limit exceeded: free-models-per-min.", code: 429 } }, "https://openrouter.ai/api/v1/chat/completions"), 429, "openrouter/a:free", "rate_limit"],
  ["provider-wide-quota", api(429, { type: "error", error: { type: "FreeUsageLimitError", message: "Rate limit exceeded. Please try again later." } }), 429, undefined, "quota"],
  ["opencode-plan-limit", "Monthly usage limit reached. It will reset in 10 days 19 hours.", 429, "opencode-go/glm-5", "quota"],
  ["plan-window", "You've reached your weekly (7-day) usage limit.", 403, undefined, "quota"],
  ["zai-plan-quota", api(429, { error: { code: "1308", message: "Usage limit reached for 5 hour." } }, "https://api.z.ai/api/coding/paas/v4/chat/completions"), 429, undefined, "quota"],
  ["gateway-upstream-credit", api(429, { error: { message: "Provider returned error", code: 429, metadata: { raw: JSON.stringify({ error: { message: "Your account is suspended due to insufficient balance", type: "exceeded_current_quota_error" } }), provider_name: "Moonshot AI", is_byok: true } } }, "https://openrouter.ai/api/v1/chat/completions"), 429, "openrouter/moonshotai/kimi-k2", "quota"],
  ["zai-credit", api(429, { error: { code: "1113", message: "余额不足或无可用资源包,请充值。" } }, "https://open.bigmodel.cn/api/paas/v4/chat/completions"), 429, undefined, "quota"],
  ["credit", "Your credit balance is too low to access the Anthropic API.", 400, undefined, "quota"],
  ["payment-required", "Payment Required", 402, undefined, "quota"],
  ["gemini-per-day", api(429, { error: { code: 429, message: "Quota exceeded for metric: generativelanguage.googleapis.com/generate_requests_per_model_per_day", status: "RESOURCE_EXHAUSTED" } }, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"), 429, "google/gemini-2.5-pro", "quota"],
  ["per-day", "Rate limit reached for gpt-4o-mini on requests per day (RPD): Limit 200, Used 200, Requested 1.", 429, undefined, "quota"],
  ["per-minute", "Requests per minute limit exceeded - too many requests sent.", 429, undefined, "rate_limit"],
  ["quota", "You exceeded your current quota", undefined, undefined, "quota"],
  ["organization-rate", "request reached organization max RPM: 3, please try again after 1 seconds", 429, undefined, "rate_limit"],
  ["rate", "Too Many Requests", undefined, undefined, "rate_limit"],
  ["rate-status", "Slow down", 429, undefined, "rate_limit"],
  ["outage", "Provider is overloaded", undefined, undefined, "outage"],
  ["outage-status", "boom", 503, undefined, "outage"],
  ["forbidden", "Forbidden", 403, undefined, "auth"],
  ["not-found-model", "The model 'alpha' does not exist", 404, "zen/alpha", "unavailable"]
]

describe("issue 19: the classification table", () => {
  it("US-44 every row of the table has an example here, in table order", () => {
    expect(ROWS.map(([id]) => id)).toEqual(LIMIT_RULES.map((r) => r.id))
  })

  it.each(ROWS)("US-44 row %s: %j (status %s) is its class", (id, text, status, model, cls) => {
    const v = classifyError({ text, status, model })
    expect(v?.rule).toBe(id)
    expect(v?.cls).toBe(cls)
  })

  it("US-44 field values decide as well as phrases: error.type, error.code, error.status, ErrorInfo reason, a Bedrock __type", () => {
    expect(classifyError({ text: api(400, { error: { type: "invalid_request_error", code: "model_decommissioned", message: "gone" } }), status: 400 })?.cls).toBe("unavailable")
    expect(classifyError({ text: api(400, { error: { code: 400, message: "bad", status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }] } }), status: 400 })?.cls).toBe("auth")
    expect(classifyError({ text: api(403, { __type: "UnrecognizedClientException", message: "The security token is bad" }), status: 403 })?.cls).toBe("auth")
    expect(classifyError({ text: api(429, { error: { type: "insufficient_quota", message: "You exceeded your current quota" } }), status: 429 })?.credit).toBe(true)
  })

  it("US-44 a 401 is auth whatever words follow; bad credentials in a 400 body are auth too", () => {
    expect(classifyError({ text: "Request blocked by upstream provider", status: 401 })?.cls).toBe("auth")
    expect(classifyError({ text: "rate limit exceeded", status: 401 })?.cls).toBe("auth")
    expect(classifyError({ text: api(400, { code: "Client specified an invalid argument", error: "Incorrect%20API%20key%20provided:%20ba***na." }), status: 400 })?.cls).toBe("auth")
  })

  it("US-31 a request that can never fit is not a rate limit, a request under the budget is", () => {
    expect(classifyError({ text: "Rate limit reached on tokens per minute (TPM): Limit 7000, Used 6900, Requested 300. Please try again in 2s.", status: 429 })?.cls).toBe("rate_limit")
    expect(classifyError({ text: "The long context beta is not yet available for this subscription.", status: 400 })?.cls).toBe("context_limit")
  })
})

const slot = (model: string, index: number): Slot => ({ model, provider: providerOf(model), weight: 1, index })
const SLOTS = [slot("zen/a", 1), slot("zen/b", 2), slot("openrouter/x:free", 3), slot("openrouter/y:free", 4), slot("openrouter/paid", 5), slot("go/c", 6)]
const cool = (text: string, status?: number, model?: string, headers?: Record<string, string>, now = NOW) => decideLimit(SLOTS, new Map(), { text, status, model, headers }, now)

describe("issue 19: scopes", () => {
  it("US-42 a FreeUsageLimitError in error.type cools every slot of its provider", () => {
    const d = cool(api(429, { type: "error", error: { type: "FreeUsageLimitError", message: "Rate limit exceeded. Please try again later." } }), 429, "zen/a")
    expect(d._tag === "Cool" && d.plan.models).toEqual(["zen/a", "zen/b"])
  })

  it("US-42 OpenRouter's free-models-per-day cools the free slots (not the paid one) until 00:00 UTC", () => {
    const d = cool(api(429, { error: { message: "Rate limit exceeded: free-models-per-day.", code: 429 } }, "https://openrouter.ai/api/v1/chat/completions"), 429, "openrouter/x:free")
    expect(d._tag === "Cool" && d.plan.models).toEqual(["openrouter/x:free", "openrouter/y:free"])
    expect(d._tag === "Cool" && d.plan.until).toBe(Date.parse("2026-12-02T00:00:00Z"))
  })

  it("US-42 OpenRouter's X-RateLimit-Reset in epoch ms inside error.metadata.headers times the cooldown", () => {
    const body = { error: { message: "Rate limit exceeded: free-models-per-min.", code: 429, metadata: { headers: { "X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(NOW + 42_000) } } } }
    const d = cool(api(429, body, "https://openrouter.ai/api/v1/chat/completions"), 429, "openrouter/x:free")
    expect(d._tag === "Cool" && d.plan.windowMs).toBe(42_000)
    expect(d._tag === "Cool" && d.plan.source).toBe("header")
  })

  it("US-44 an empty balance cools the provider for an hour, then longer, and says it is credit", () => {
    const text = api(402, { error: { message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits", code: 402 } }, "https://openrouter.ai/api/v1/chat/completions")
    const d = cool(text, 402, "openrouter/paid")
    expect(d._tag === "Cool" && [d.cls, d.credit, d.plan.models, d.plan.windowMs]).toEqual(["quota", true, ["openrouter/x:free", "openrouter/y:free", "openrouter/paid"], 3_600_000])
  })

  it("US-44 per-model access refusals and withdrawn models cool only that model", () => {
    const d = cool("You don't have access to the model with the specified model ID.", 403, "zen/a")
    expect(d._tag === "Cool" && [d.cls, d.plan.models]).toEqual(["unavailable", ["zen/a"]])
  })
})

describe("issue 19: every stated reset", () => {
  const reset = (input: Partial<Parameters<typeof statedReset>[0]>) => statedReset({ text: "", now: NOW, ...input })

  it("US-4 a RetryInfo retryDelay, a body's resets_in_seconds and resets_at are read", () => {
    const gemini = errorView({ text: api(429, { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "x", details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "26s" }] } }) })
    expect(gemini.retryDelayMs).toBe(26_000)
    expect(reset({ retryDelayMs: 26_000 })).toEqual({ ms: 26_000, source: "detail" })
    const codex = errorView({ text: api(429, { error: { type: "usage_limit_reached", message: "The usage limit has been reached", resets_in_seconds: 13872 } }) })
    expect(codex.resetsInMs).toBe(13_872_000)
    expect(reset({ resetsAt: Math.floor(NOW / 1000) + 600 })).toEqual({ ms: 600_000, source: "body" })
    expect(reset({ resetsAt: "2026-12-01T12:30:00Z" })).toEqual({ ms: 1_800_000, source: "body" })
  })

  it("US-4 epoch seconds and epoch milliseconds are told apart by magnitude", () => {
    expect(reset({ headers: { "x-ratelimit-reset": String(NOW / 1000 + 60) } })?.ms).toBe(60_000)
    expect(reset({ headers: { "x-ratelimit-reset": String(NOW + 60_000) } })?.ms).toBe(60_000)
  })

  it("US-4 Anthropic's RFC 3339 reset headers and a ChatGPT plan's x-codex headers are read", () => {
    expect(reset({ headers: { "anthropic-ratelimit-requests-reset": "2026-12-01T12:05:00Z" } })).toEqual({ ms: 300_000, source: "header" })
    const codex = { "x-codex-primary-used-percent": "100", "x-codex-primary-reset-after-seconds": "3600", "x-codex-secondary-used-percent": "40", "x-codex-secondary-reset-after-seconds": "500000" }
    expect(reset({ headers: codex })?.ms).toBe(3_600_000)
  })

  it("US-4 precedence: detail, body fields, body text, retry-after-ms, retry-after, reset headers, the retry's next", () => {
    const all = { retryDelayMs: 5_000, resetsInMs: 6_000, text: "try again in 7s", headers: { "retry-after-ms": "8000", "retry-after": "9", "x-ratelimit-reset": "10" }, next: NOW + 120_000 }
    expect(reset(all)).toEqual({ ms: 5_000, source: "detail" })
    expect(reset({ ...all, retryDelayMs: undefined })).toEqual({ ms: 6_000, source: "body" })
    expect(reset({ ...all, retryDelayMs: undefined, resetsInMs: undefined })).toEqual({ ms: 7_000, source: "text" })
    expect(reset({ ...all, retryDelayMs: undefined, resetsInMs: undefined, text: "" })).toEqual({ ms: 8_000, source: "header" })
    expect(reset({ headers: { "x-ratelimit-reset": "10" }, next: NOW + 120_000 })).toEqual({ ms: 10_000, source: "header" })
    expect(reset({ next: NOW + 120_000 })).toEqual({ ms: 120_000, source: "retry" })
  })

  it("US-4 a zone-less wall-clock reset is read in the provider's zone (Z.ai: UTC+8), else UTC", () => {
    expect(reset({ text: "Your limit will reset at 2026-12-01 22:00:00", zone: "+08:00" })?.ms).toBe(7_200_000)
    expect(reset({ text: "Your limit will reset at 2026-12-01 22:00:00" })?.ms).toBe(36_000_000)
    expect(reset({ text: "您的限额将在 2026-12-01 21:00:00 重置。", zone: "+08:00" })?.ms).toBe(3_600_000)
    const d = cool(api(429, "Weekly/Monthly Limit Exhausted. Your limit will reset at 2026-12-01 22:00:00", "https://api.z.ai/api/coding/paas/v4/chat/completions"), 429, "zen/a")
    expect(d._tag === "Cool" && d.plan.windowMs).toBe(7_200_000)
  })

  it("US-4 a per-day quota lasts until the day's end in its zone, even when a shorter delay is stated", () => {
    expect(reset({ retryDelayMs: 23_000, dayEnd: "America/Los_Angeles" })).toEqual({ ms: Date.parse("2026-12-02T08:00:00Z") - NOW, source: "day" })
    expect(reset({ dayEnd: "UTC" })).toEqual({ ms: 12 * 3_600_000, source: "day" })
  })
})

describe("issue 19: families and zones", () => {
  it("US-44 the request URL's host names the family; without one, the provider id", () => {
    expect(familyOf("openrouter.ai", "whatever")).toBe("openrouter")
    expect(familyOf("us-east5-aiplatform.googleapis.com", undefined)).toBe("vertex")
    expect(familyOf("myres.openai.azure.com", undefined)).toBe("azure")
    expect(familyOf(undefined, "zai-coding-plan")).toBe("zai")
    expect(familyOf("127.0.0.1", "groq")).toBe("groq")
    expect(familyOf(undefined, "fake")).toBeUndefined()
  })

  it("US-4 Pacific time follows daylight saving; midnight is the next one strictly after now", () => {
    expect(zoneOffsetMs("America/Los_Angeles", Date.parse("2026-07-01T00:00:00Z"))).toBe(-7 * 3_600_000)
    expect(zoneOffsetMs("America/Los_Angeles", Date.parse("2026-12-01T00:00:00Z"))).toBe(-8 * 3_600_000)
    expect(nextMidnight("America/Los_Angeles", Date.parse("2026-03-08T07:59:00Z"))).toBe(Date.parse("2026-03-08T08:00:00Z"))
    // across the spring change: 01:00 PST on the day, the next midnight is 00:00 PDT
    expect(nextMidnight("America/Los_Angeles", Date.parse("2026-03-08T09:00:00Z"))).toBe(Date.parse("2026-03-09T07:00:00Z"))
    expect(nextMidnight("America/Los_Angeles", Date.parse("2026-11-01T12:00:00Z"))).toBe(Date.parse("2026-11-02T08:00:00Z"))
    expect(nextMidnight("UTC", Date.parse("2026-12-02T00:00:00Z"))).toBe(Date.parse("2026-12-03T00:00:00Z"))
    expect(nextMidnight("+08:00", NOW)).toBe(Date.parse("2026-12-01T16:00:00Z"))
  })
})
