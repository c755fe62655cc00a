/** Quota sensing (issue 12): rate-limit headers of one provider response as a quota observation. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { STATED_RESET_MAX_MS } from "../../../src/core/constants.js"
import { parseRateLimitHeaders, parseResetValue } from "../../../src/core/quota/headers.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const parse = (headers: Record<string, string | ReadonlyArray<string>>) => parseRateLimitHeaders(headers, NOW)

describe("reset values", () => {
  it.each([
    ["1s", 1_000],
    ["6m0s", 360_000],
    ["20ms", 20],
    ["1h2m3.5s", 3_723_500],
    ["30", 30_000],
    ["1.5", 1_500],
    ["1796126460", 60_000],
    ["1796126460000", 60_000],
    ["2026-12-01T12:01:00Z", 60_000],
    ["2026-12-01T12:01:00.250Z", 60_250],
    ["2026-12-01T12:01:00", 60_000],
    ["2026-12-01T13:01:00+01:00", 60_000],
    ["Tue, 01 Dec 2026 12:02:00 GMT", 120_000],
    ["1ns", 1],
    ["7 days", STATED_RESET_MAX_MS],
    ["168h", STATED_RESET_MAX_MS],
    ["604800", STATED_RESET_MAX_MS],
    ["1796731200", STATED_RESET_MAX_MS],
    ["1796731200000", STATED_RESET_MAX_MS],
    ["2026-12-08T12:00:00Z", STATED_RESET_MAX_MS],
    ["Tue, 08 Dec 2026 12:00:00 GMT", STATED_RESET_MAX_MS],
    [`${" ".repeat(1_020)}30`, 30_000]
  ] as const)("US-48 %j resets %d ms from now", (value, ms) => {
    expect(parseResetValue(value, NOW)).toBe(NOW + ms)
  })

  it.each(["", " ", "abc", "-5", "NaN", "Infinity", "1e400", "9".repeat(400), "0", "0s", "1796126400", "1796126399000", "2026-12-01T11:00:00Z", "Tue, 01 Dec 2026 11:59:00 GMT", "5 parsecs"])(
    "US-48 %j is no reset (unreadable, zero or past)",
    (value) => {
      expect(parseResetValue(value, NOW)).toBeUndefined()
    }
  )
})

describe("garbage reset values (issue 18)", () => {
  it.each([
    ["10 days", "10 days"],
    ["10d", "10d"],
    ["168h1s (7 days and 1 s)", "168h1s"],
    ["604801 s", "604801"],
    ["epoch seconds 7 days and 1 s out", "1796731201"],
    ["epoch ms 7 days and 1 s out", "1796731201000"],
    ["RFC 3339 7 days and 1 s out", "2026-12-08T12:00:01Z"],
    ["an HTTP date 7 days and 1 s out", "Tue, 08 Dec 2026 12:00:01 GMT"],
    ["99999999999 (epoch seconds, year 5138)", "99999999999"],
    ["99999999999999 (epoch ms, year 5138)", "99999999999999"],
    ["year 9999", "9999-12-31T23:59:59Z"],
    ["an HTTP date in year 9999", "Fri, 31 Dec 9999 23:59:59 GMT"],
    ["year 275760 (beyond the date range)", "275760-09-13T00:00:00Z"],
    ['"1h" × 20000', "1h".repeat(20_000)],
    ["a number only after the first 1,024 characters", `${" ".repeat(1_024)}30`]
  ])("US-48 %s is no reset (absent, not capped at 7 days)", (_name, value) => {
    expect(parseResetValue(value, NOW)).toBeUndefined()
  })

  it("US-48 a garbage reset, retry-after or retry-after-ms is absent; a dimension keeps its figures", () => {
    expect(parse({ "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "99999999999" })?.requests).toEqual({ remaining: 0, limit: undefined, resetAt: undefined })
    expect(parse({ "retry-after": String(30 * 86_400) })).toBeUndefined()
    expect(parse({ "retry-after-ms": "99999999999999", "retry-after": "2" })?.retryAt).toBe(NOW + 2_000)
    // a repeated reset takes its first usable value: the garbage one is skipped
    expect(parse({ "x-ratelimit-remaining": "1", "x-ratelimit-reset": ["99999999999", "30"] })?.requests?.resetAt).toBe(NOW + 30_000)
  })

  it("US-48 counts beyond 2^53 − 1 are garbage: ignored like any bad value", () => {
    expect(parse({ "x-ratelimit-remaining-requests": "9".repeat(300) })).toBeUndefined()
    expect(parse({ "x-ratelimit-remaining-requests": "5", "x-ratelimit-limit-requests": "9007199254740992" })?.requests).toEqual({ remaining: 5, limit: undefined, resetAt: undefined })
    expect(parse({ "x-ratelimit-remaining-requests": "9007199254740991" })?.requests?.remaining).toBe(9_007_199_254_740_991)
  })
})

describe("long header values (issue 18)", () => {
  const MiB = 1 << 20
  const names = ["x-ratelimit-remaining-requests", "x-ratelimit-limit-requests", "x-ratelimit-reset-requests", "ratelimit", "retry-after", "retry-after-ms"]

  it("US-48 every rate-limit header value is read from its first 1,024 characters: a figure only after them is absent", () => {
    const late = (v: string) => `${" ".repeat(1_024)}${v}`
    expect(parse({ "x-ratelimit-remaining-requests": late("5") })).toBeUndefined()
    expect(parse({ "x-ratelimit-remaining-requests": "5", "x-ratelimit-limit-requests": late("10") })?.requests?.limit).toBeUndefined()
    expect(parse({ "x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": late("30") })?.requests?.resetAt).toBeUndefined()
    expect(parse({ ratelimit: `${"x".repeat(1_024)},remaining=5` })).toBeUndefined()
    expect(parse({ "retry-after": late("30") })).toBeUndefined()
    expect(parse({ "retry-after-ms": late("30") })).toBeUndefined()
    // and the first 1,024 are read
    expect(parse({ ratelimit: `${"x".repeat(1_000)},remaining=5` })?.requests?.remaining).toBe(5)
  })

  it("US-48 a 1 MiB value (whole, comma-separated, or repeated) gives what its first KiB gives", () => {
    const values = [`5${" ".repeat(MiB)}`, "5,".repeat(MiB / 2), "a,".repeat(MiB / 2), "1h".repeat(MiB / 2), "remaining=5;".repeat(MiB / 12), "1".repeat(MiB)]
    for (const v of values) {
      const all: Record<string, string> = {}
      const cut: Record<string, string> = {}
      for (const n of names) {
        all[n] = v
        cut[n] = v.slice(0, 1_024)
      }
      expect(parse(all)).toEqual(parse(cut))
    }
  })
})

describe("rate-limit headers", () => {
  it("US-48 OpenAI: requests and tokens with Go-style durations", () => {
    expect(
      parse({
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-limit-tokens": "150000",
        "x-ratelimit-remaining-tokens": "149984",
        "x-ratelimit-reset-tokens": "6m0s"
      })
    ).toEqual({
      requests: { remaining: 59, limit: 60, resetAt: NOW + 1_000 },
      tokens: { remaining: 149_984, limit: 150_000, resetAt: NOW + 360_000 },
      retryAt: undefined
    })
    expect(parse({ "x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "20ms" })?.tokens).toEqual({ remaining: 10, limit: undefined, resetAt: NOW + 20 })
  })

  it("US-48 Anthropic: RFC 3339 resets; tokens is the tightest of tokens, input and output tokens", () => {
    const observed = parse({
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "49",
      "anthropic-ratelimit-requests-reset": "2026-12-01T12:00:01Z",
      "anthropic-ratelimit-tokens-limit": "100000",
      "anthropic-ratelimit-tokens-remaining": "90000",
      "anthropic-ratelimit-tokens-reset": "2026-12-01T12:00:30Z",
      "anthropic-ratelimit-input-tokens-limit": "80000",
      "anthropic-ratelimit-input-tokens-remaining": "8000",
      "anthropic-ratelimit-input-tokens-reset": "2026-12-01T12:00:45Z",
      "anthropic-ratelimit-output-tokens-limit": "16000",
      "anthropic-ratelimit-output-tokens-remaining": "4000",
      "anthropic-ratelimit-output-tokens-reset": "2026-12-01T12:00:20Z"
    })
    expect(observed?.requests).toEqual({ remaining: 49, limit: 50, resetAt: NOW + 1_000 })
    expect(observed?.tokens).toEqual({ remaining: 8_000, limit: 80_000, resetAt: NOW + 45_000 })
  })

  it("US-48 the tightest tokens dimension is the smallest remaining when a limit is unknown", () => {
    const tokens = parse({
      "anthropic-ratelimit-tokens-limit": "100000",
      "anthropic-ratelimit-tokens-remaining": "500",
      "anthropic-ratelimit-output-tokens-remaining": "900"
    })?.tokens
    expect(tokens).toEqual({ remaining: 500, limit: 100_000, resetAt: undefined })
  })

  it("US-48 singular x-ratelimit-* (epoch seconds, OpenRouter epoch ms, plain seconds) count requests", () => {
    expect(parse({ "x-ratelimit-limit": "20", "x-ratelimit-remaining": "3", "x-ratelimit-reset": "1796126460" })?.requests).toEqual({ remaining: 3, limit: 20, resetAt: NOW + 60_000 })
    expect(parse({ "X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1796126430000" })?.requests).toEqual({ remaining: 0, limit: 20, resetAt: NOW + 30_000 })
    expect(parse({ "x-ratelimit-remaining": "7", "x-ratelimit-reset": "45" })?.requests).toEqual({ remaining: 7, limit: undefined, resetAt: NOW + 45_000 })
  })

  it("US-48 IETF draft: ratelimit-* delta seconds, the structured ratelimit field, ratelimit-policy ignored", () => {
    const expected = { requests: { remaining: 50, limit: 100, resetAt: NOW + 30_000 }, tokens: undefined, retryAt: undefined }
    expect(parse({ "RateLimit-Limit": "100", "RateLimit-Remaining": "50", "RateLimit-Reset": "30", "RateLimit-Policy": "100;w=60" })).toEqual(expected)
    expect(parse({ ratelimit: "limit=100, remaining=50, reset=30", "ratelimit-policy": "100;w=60;burst=1000" })).toEqual(expected)
    expect(parse({ RateLimit: '"default";r=50;t=30', "RateLimit-Policy": '"default";q=100;w=60' })?.requests).toEqual({ remaining: 50, limit: undefined, resetAt: NOW + 30_000 })
    expect(parse({ "ratelimit-policy": "100;w=60" })).toBeUndefined()
  })

  it("US-48 retry-after: seconds, an HTTP date, retry-after-ms before retry-after; alone it is an observation", () => {
    expect(parse({ "retry-after": "120" })).toEqual({ requests: undefined, tokens: undefined, retryAt: NOW + 120_000 })
    expect(parse({ "Retry-After": "Tue, 01 Dec 2026 12:02:00 GMT" })?.retryAt).toBe(NOW + 120_000)
    expect(parse({ "retry-after-ms": "1500", "retry-after": "2" })?.retryAt).toBe(NOW + 1_500)
    expect(parse({ "retry-after-ms": "abc", "retry-after": "2" })?.retryAt).toBe(NOW + 2_000)
    expect(parse({ "retry-after": "Tue, 01 Dec 2026 11:59:00 GMT" })).toBeUndefined()
    expect(parse({ "retry-after": String(7 * 86_400) })?.retryAt).toBe(NOW + STATED_RESET_MAX_MS)
  })

  it("US-48 names are case-insensitive; a Headers object and an iterable of pairs work", () => {
    const expected = { remaining: 5, limit: 10, resetAt: NOW + 1_000 }
    expect(parse({ "X-RATELIMIT-REMAINING-REQUESTS": "5", "X-Ratelimit-Limit-Requests": "10", "x-RateLimit-reset-REQUESTS": "1s" })?.requests).toEqual(expected)
    const headers = new Headers({ "X-RateLimit-Remaining-Requests": "5", "X-RateLimit-Limit-Requests": "10", "X-RateLimit-Reset-Requests": "1s", "Retry-After": "Tue, 01 Dec 2026 12:02:00 GMT" })
    expect(parseRateLimitHeaders(headers, NOW)).toEqual({ requests: expected, tokens: undefined, retryAt: NOW + 120_000 })
    expect(parseRateLimitHeaders(headers.entries(), NOW)?.requests).toEqual(expected)
    expect(parseRateLimitHeaders(new Map([["x-ratelimit-remaining-requests", "5"]]), NOW)?.requests?.remaining).toBe(5)
  })

  it("US-48 a repeated header takes its first usable value: an array, repeated pairs, or a Headers-joined list", () => {
    expect(parse({ "x-ratelimit-remaining-requests": ["abc", "12", "13"] })?.requests?.remaining).toBe(12)
    expect(parseRateLimitHeaders([["x-ratelimit-remaining", "-1"], ["X-RateLimit-Remaining", "4"]], NOW)?.requests?.remaining).toBe(4)
    const joined = new Headers([["x-ratelimit-remaining", "abc"], ["x-ratelimit-remaining", "8"]])
    expect(parseRateLimitHeaders(joined, NOW)?.requests?.remaining).toBe(8)
  })

  it.each(["abc", "-5", "NaN", "1e400", "", "Infinity", "9".repeat(400)])("US-48 a bad value %j is ignored", (bad) => {
    expect(parse({ "x-ratelimit-remaining-requests": bad, "retry-after": bad, "retry-after-ms": bad })).toBeUndefined()
    expect(parse({ "x-ratelimit-remaining-requests": "5", "x-ratelimit-limit-requests": bad, "x-ratelimit-reset-requests": bad })?.requests).toEqual({ remaining: 5, limit: undefined, resetAt: undefined })
  })

  it("US-48 a limit of 0 is ignored; a zero or past reset is absent", () => {
    expect(parse({ "x-ratelimit-remaining-tokens": "0", "x-ratelimit-limit-tokens": "0", "x-ratelimit-reset-tokens": "0s" })?.tokens).toEqual({ remaining: 0, limit: undefined, resetAt: undefined })
    expect(parse({ "anthropic-ratelimit-tokens-remaining": "1", "anthropic-ratelimit-tokens-reset": "2026-12-01T11:00:00Z" })?.tokens?.resetAt).toBeUndefined()
  })

  it("US-48 no rate-limit header (or only a limit or a reset) gives undefined", () => {
    expect(parse({})).toBeUndefined()
    expect(parse({ "content-type": "application/json", "x-request-id": "req_1" })).toBeUndefined()
    expect(parse({ "x-ratelimit-limit-requests": "60", "x-ratelimit-reset-requests": "1s" })).toBeUndefined()
    expect(parseRateLimitHeaders({ "x-ratelimit-remaining": undefined }, NOW)).toBeUndefined()
    expect(parseRateLimitHeaders(new Headers(), NOW)).toBeUndefined()
  })

  const NAMES = [
    "x-ratelimit-remaining-requests", "x-ratelimit-limit-requests", "x-ratelimit-reset-requests",
    "x-ratelimit-remaining-tokens", "x-ratelimit-limit-tokens", "x-ratelimit-reset-tokens",
    "x-ratelimit-remaining", "x-ratelimit-limit", "x-ratelimit-reset",
    "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-tokens-reset", "anthropic-ratelimit-output-tokens-remaining",
    "ratelimit-remaining", "ratelimit-reset", "ratelimit", "ratelimit-policy", "retry-after", "retry-after-ms"
  ]
  const valueArb = fc.oneof(
    fc.string(),
    fc.stringMatching(/^-?\d{1,20}(\.\d{1,3})?(e\d{1,3})?(ms|s|m|h|d)?$/),
    fc.constantFrom("NaN", "Infinity", "1e400", "6m0s", "1h2m3.5s", "limit=1, remaining=-2, reset=1e999", "Tue, 01 Dec 2026 12:02:00 GMT"),
    fc.integer({ min: -1e14, max: 1e14 }).map(String),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
  )
  const recordArb = fc.dictionary(fc.oneof(fc.constantFrom(...NAMES), fc.constantFrom(...NAMES).map((n) => n.toUpperCase()), fc.string()), valueArb)
  const nowArb = fc.integer({ min: 0, max: 4_102_444_800_000 })

  const dimensionsOf = (o: ReturnType<typeof parseRateLimitHeaders>) => [o?.requests, o?.tokens].filter((d) => d !== undefined)

  it.prop("US-48 never throws on arbitrary string records; remaining is finite and non-negative, a limit positive", [recordArb, nowArb], ([record, now]) => {
    for (const d of dimensionsOf(parseRateLimitHeaders(record, now))) {
      expect(Number.isFinite(d.remaining) && d.remaining >= 0).toBe(true)
      if (d.limit !== undefined) expect(Number.isFinite(d.limit) && d.limit > 0).toBe(true)
    }
  })

  it.prop("US-48 every resetAt and retryAt is undefined or within (now, now + 7 days]", [recordArb, nowArb], ([record, now]) => {
    const o = parseRateLimitHeaders(record, now)
    for (const at of [o?.retryAt, ...dimensionsOf(o).map((d) => d.resetAt)]) {
      if (at !== undefined) expect(at > now && at <= now + STATED_RESET_MAX_MS).toBe(true)
    }
  })

  it.prop("US-48 parseResetValue never throws and stays within (now, now + 7 days]", [valueArb, nowArb], ([value, now]) => {
    const at = parseResetValue(value, now)
    if (at !== undefined) expect(at > now && at <= now + STATED_RESET_MAX_MS).toBe(true)
  })
})
