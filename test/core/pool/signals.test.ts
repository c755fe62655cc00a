import { describe, expect, it } from "@effect/vitest"
import { type CooldownTable, decideLimit, decideRetry } from "../../../src/core/pool/cooldown.js"
import type { Slot } from "../../../src/core/pool/pool.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const slots: ReadonlyArray<Slot> = [
  { index: 1, model: "zen/alpha", provider: "zen", weight: 2 },
  { index: 2, model: "go/gamma", provider: "go", weight: 1 },
  { index: 3, model: "zen/beta", provider: "zen", weight: 1 }
]
const empty: CooldownTable = new Map()

describe("attribution, scope and the retry-loop breaker (SPEC §7.4, §7.7)", () => {
  it("US-31 a limit naming provider zen cools every zen slot in slot order, and no other provider", () => {
    const d = decideLimit(slots, empty, { text: "Rate limit exceeded", model: "zen/alpha", provider: "zen" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", plan: { models: ["zen/alpha", "zen/beta"], scope: "provider", reason: "rate_limit" } })
  })

  it("US-44 401, 403, invalid api key and ProviderAuthError on a zen model cool every zen slot for 15 min", () => {
    for (const [text, status] of [["x", 401], ["x", 403], ["Invalid API key", undefined], ['{"name":"ProviderAuthError","data":{}}', undefined]] as const) {
      const d = decideLimit(slots, empty, { text, status, model: "zen/beta" }, NOW)
      expect(d).toMatchObject({ _tag: "Cool", cls: "auth", plan: { models: ["zen/alpha", "zen/beta"], scope: "provider", strike: 0, until: NOW + 900_000 } })
    }
  })

  it("US-44 unavailable always cools the model alone for 6 h, even when a provider is named", () => {
    const d = decideLimit(slots, empty, { text: "Model not found", model: "zen/alpha", provider: "zen" }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", plan: { models: ["zen/alpha"], scope: "model", reason: "unavailable", strike: 0, until: NOW + 21_600_000 } })
  })

  it("US-44 a 404 'Not Found' cools nothing", () => {
    expect(decideLimit(slots, empty, { text: "Not Found", status: 404, model: "zen/alpha" }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
  })

  it("US-31 a context limit is ignored as context_limit; a signal with no model and no provider is not attributable", () => {
    expect(decideLimit(slots, empty, { text: "context limit reached", model: "zen/alpha" }, NOW)).toEqual({ _tag: "Ignore", reason: "context_limit" })
    expect(decideLimit(slots, empty, { text: "Rate limit exceeded" }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
    expect(decideLimit(slots, empty, { text: "Rate limit exceeded", provider: "nowhere" }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
  })

  it("US-7 a model that is not in the pool is still recorded (model scope)", () => {
    expect(decideLimit(slots, empty, { text: "Rate limit exceeded", model: "paid/gpt" }, NOW)).toMatchObject({ _tag: "Cool", plan: { models: ["paid/gpt"] } })
  })

  it("US-42 'Free usage exceeded, subscribe to Go' with next 3 s away cools the session's provider as quota, strike backoff", () => {
    const d = decideRetry(slots, empty, { message: "Free usage exceeded, subscribe to Go https://opencode.ai/go", next: NOW + 3_000, model: "zen/alpha", pooled: true }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", plan: { models: ["zen/alpha", "zen/beta"], scope: "provider", reason: "quota", strike: 1, until: NOW + 60_000 } })
  })

  it("US-42 'Rate limited' with next 3 s away cools the model for the strike window", () => {
    const d = decideRetry(slots, empty, { message: "Rate limited", next: NOW + 3_000, model: "go/gamma", pooled: true }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", plan: { models: ["go/gamma"], reason: "rate_limit", until: NOW + 60_000 } })
  })

  it("US-42 'Internal Server Error' with next 4 h away cools as rate_limit until next", () => {
    const d = decideRetry(slots, empty, { message: "Internal Server Error", next: NOW + 4 * 3_600_000, model: "go/gamma", pooled: true }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", cls: "rate_limit", plan: { models: ["go/gamma"], until: NOW + 4 * 3_600_000, strike: 1 } })
  })

  it("US-42 step 4 uses next even when the text states another reset", () => {
    const d = decideRetry(slots, empty, { message: "upstream error, try again in 5s", next: NOW + 120_000, model: "go/gamma", pooled: true }, NOW)
    expect(d).toMatchObject({ _tag: "Cool", plan: { until: NOW + 120_000 } })
  })

  it("US-42 'Service Unavailable' with next 5 s away is left alone", () => {
    expect(decideRetry(slots, empty, { message: "Service Unavailable", next: NOW + 5_000, model: "go/gamma", pooled: true }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
  })

  it("US-42 a non-pooled session: nothing without a provider; with action.provider zen the zen slots cool", () => {
    expect(decideRetry(slots, empty, { message: "Rate limited", next: NOW + 3_000, pooled: false }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
    expect(decideRetry(slots, empty, { message: "context limit reached", next: NOW + 3_000, provider: "zen", pooled: false }, NOW)).toEqual({ _tag: "Ignore", reason: "not_a_limit" })
    expect(decideRetry(slots, empty, { message: "Rate limited", next: NOW + 3_000, provider: "zen", pooled: false }, NOW)).toMatchObject({
      _tag: "Cool",
      plan: { models: ["zen/alpha", "zen/beta"], scope: "provider" }
    })
    expect(decideRetry(slots, empty, { message: "Rate limited", next: NOW + 90_000, provider: "zen", pooled: false }, NOW)).toMatchObject({ _tag: "Cool", plan: { until: NOW + 90_000 } })
  })

  it("US-42 the breaker also trips on unavailable and auth retries, and ignores context limits", () => {
    expect(decideRetry(slots, empty, { message: "model not found", next: NOW + 1_000, model: "go/gamma", pooled: true }, NOW)).toMatchObject({ cls: "unavailable" })
    expect(decideRetry(slots, empty, { message: "invalid api key", next: NOW + 1_000, model: "go/gamma", pooled: true }, NOW)).toMatchObject({ cls: "auth" })
    expect(decideRetry(slots, empty, { message: "context length exceeded", next: NOW + 999_000, model: "go/gamma", pooled: true }, NOW)).toEqual({ _tag: "Ignore", reason: "context_limit" })
  })
})
