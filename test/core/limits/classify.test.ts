import { describe, expect, it } from "@effect/vitest"
import { classifyError } from "../../../src/core/limits/classify.js"
import { errorView } from "../../../src/core/limits/errorView.js"

const cls = (text: string, status?: number, model?: string) => classifyError({ text, status, model })?.cls

describe("classification (SPEC §7.1-7.3)", () => {
  it.each([
    // row 1: context_limit
    ["context limit reached", undefined, "context_limit"],
    ["This model's maximum context length is 8192 tokens", undefined, "context_limit"],
    ["context_length_exceeded", 400, "context_limit"],
    ["exceeds the context window", 429, "context_limit"],
    ["Prompt is too long", undefined, "context_limit"],
    ['{"name":"ContextOverflowError","data":{"message":"too big"}}', undefined, "context_limit"],
    // row 2: auth by text
    ["Invalid API key provided", undefined, "auth"],
    ['{"name":"ProviderAuthError","data":{"message":"nope"}}', undefined, "auth"],
    // row 3: unavailable by text
    ["Model not found", undefined, "unavailable"],
    ['{"name":"ProviderModelNotFoundError","data":{}}', undefined, "unavailable"],
    ["The model is unavailable right now", undefined, "unavailable"],
    ["no such model: alpha", undefined, "unavailable"],
    // row 4: quota
    ["Monthly usage limit reached", undefined, "quota"],
    ['{"name":"FreeUsageLimitError"}', undefined, "quota"],
    ["You exceeded your current quota", 429, "quota"],
    ["free tier limit hit", undefined, "quota"],
    ["Free limit exhausted", undefined, "quota"],
    // row 5: rate_limit
    ["limit reached", undefined, "rate_limit"],
    ["Daily limit reached", undefined, "rate_limit"],
    ["rate_limit_exceeded", undefined, "rate_limit"],
    ["RateLimitError", undefined, "rate_limit"],
    ["Too Many Requests", undefined, "rate_limit"],
    ["Request rate increased too quickly", undefined, "rate_limit"],
    ["Slow down", 429, "rate_limit"],
    ["Provider is overloaded", 429, "rate_limit"],
    // row 6: outage
    ["Provider is overloaded", undefined, "outage"],
    ["upstream connect error", undefined, "outage"],
    ["Service temporarily unavailable", undefined, "outage"],
    ["503 Service Unavailable", 503, "outage"],
    ["Bad Gateway", undefined, "outage"],
    ["Gateway Timeout", undefined, "outage"],
    ["boom", 500, "outage"],
    ["boom", 502, "outage"],
    ["boom", 504, "outage"],
    ["boom", 529, "outage"],
    // row 7: auth by status
    ["Unauthorized", 401, "auth"],
    ["Forbidden", 403, "auth"],
    // none
    ["connection reset by peer", undefined, undefined],
    ["tool call malformed", undefined, undefined],
    ["Not Found", 404, undefined]
  ] as const)("US-44 %j (status %s) is %s", (text, status, expected) => {
    expect(cls(text, status)).toBe(expected)
  })

  it("US-44 a 404 is unavailable only when its text names the attributed model's id", () => {
    expect(cls("The model 'alpha' does not exist", 404, "zen/alpha")).toBe("unavailable")
    expect(cls("The model 'ALPHA' does not exist", 404, "zen/alpha")).toBe("unavailable")
    expect(cls("Not Found", 404, "zen/alpha")).toBeUndefined()
    expect(cls("The model 'alpha' does not exist", 404)).toBeUndefined()
    expect(cls("The model 'nvidia/x:free' is gone", 404, "openrouter/nvidia/x:free")).toBe("unavailable")
  })

  it("US-31 the earlier row wins: context limit before limit reached, quota before rate limit, 429 before overloaded", () => {
    expect(cls("context limit reached")).toBe("context_limit")
    expect(cls("usage limit: too many requests")).toBe("quota")
    expect(cls("overloaded", 429)).toBe("rate_limit")
    expect(cls("invalid api key: rate limit", 503)).toBe("auth")
  })

  it("US-31 phrases allow any whitespace, _ or - where the phrase has a space, and ignore case", () => {
    expect(cls("RATE\u00a0LIMIT")).toBe("rate_limit")
    expect(cls("rate--__  limit")).toBe("rate_limit")
    expect(cls("context\tlength")).toBe("context_limit")
    expect(cls("ratelimit")).toBe("rate_limit")
  })

  it("US-31 the JSON-wrapped inner message is what is matched (opencode 1.18.33 in-stream errors)", () => {
    expect(errorView({ text: '{"name":"UnknownError","data":{"message":"{\\"message\\":\\"limit reached\\"}"}}' }).text).toBe("UnknownError\nlimit reached")
    expect(cls('{"name":"UnknownError","data":{"message":"{\\"message\\":\\"limit reached\\"}"}}')).toBe("rate_limit")
    expect(cls('{"name":"UnknownError","data":{"message":"{\\"error\\":{\\"message\\":\\"context limit reached\\"}}"}}')).toBe("context_limit")
    expect(cls('{"name":"UnknownError","data":{"message":"{\\"error\\":\\"Rate limit exceeded\\"}"}}')).toBe("rate_limit")
    expect(cls('{"message":"limit reached"}')).toBe("rate_limit")
  })

  it("US-31 the response body joins the text (its inner message, or its first 2 KB), headers and metadata never do", () => {
    const err = (data: Record<string, unknown>) => JSON.stringify({ name: "APIError", data })
    expect(cls(err({ message: "Bad Request", responseBody: '{"error":{"message":"You exceeded your quota"}}' }), 400)).toBe("quota")
    expect(cls(err({ message: "Bad Request", responseBody: "x".repeat(3000) + "rate limit" }), 400)).toBeUndefined()
    expect(cls(err({ message: "boom", responseHeaders: { "x-ratelimit-remaining": "0" } }), 500)).toBe("outage")
    expect(cls(err({ message: "Not Found", metadata: { url: "https://x/v1/models/alpha" } }), 404, "zen/alpha")).toBeUndefined()
  })

  it("US-31 a JSON body that does not parse is matched as text", () => {
    expect(cls('{"message": "rate limit" ')).toBe("rate_limit")
  })

  it("US-42 provider-wide texts: FreeUsageLimitError, GoUsageLimitError, free usage, free tier limit", () => {
    const scope = (text: string) => classifyError({ text })?.scope
    expect(scope("FreeUsageLimitError")).toBe("provider")
    expect(scope("GoUsageLimitError")).toBe("provider")
    expect(scope("Free usage exceeded, subscribe to Go")).toBe("provider")
    expect(scope("free-tier limit")).toBe("provider")
    expect(scope("Monthly usage limit reached")).toBeUndefined()
  })
})
