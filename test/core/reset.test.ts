import { describe, expect, it } from "@effect/vitest"
import { parseDuration, resetFromText, statedReset } from "../../src/core/reset.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const window = (text: string, headers?: Record<string, unknown>, next?: number) => statedReset({ text, headers, next, now: NOW })?.ms

describe("stated resets (SPEC §7.6)", () => {
  it.each([
    ["Resets in 35min", 2_100_000],
    ["Resets in 2hr 17min", 8_220_000],
    ["try again in 3m20s", 200_000],
    ["reset in 2 hours", 7_200_000],
    ["retry-in 5 seconds", 5_000],
    ["Retry in 2 minutes", 120_000],
    ["try again in 1.5s", 1_500],
    ["resets in 10 days", 604_800_000],
    ["resets at 15:30 UTC", 12_600_000],
    ["resets at 3pm", 10_800_000],
    ["resets at 11:00", 82_800_000],
    ["resets at 09:00+02:00", 68_400_000],
    ["resets at 2026-12-01T13:00:00Z", 3_600_000],
    ["resets at 1796130000", 3_600_000]
  ] as const)("US-4 body text %j gives %d ms", (text, ms) => {
    expect(window(text)).toBe(ms)
  })

  it("US-4 headers: retry-after 120 s, retry-after-ms beats retry-after, x-ratelimit-reset-* takes the largest", () => {
    expect(window("x", { "retry-after": "120" })).toBe(120_000)
    expect(window("x", { "retry-after-ms": "1500", "retry-after": "2" })).toBe(1_500)
    expect(window("x", { "x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s" })).toBe(360_000)
    expect(window("x", { "x-ratelimit-reset": "1796126460" })).toBe(60_000)
    expect(window("x", { "X-RateLimit-Reset-Tokens": "20ms" })).toBe(20)
    expect(window("x", { "x-ratelimit-reset": 30 })).toBe(30_000)
    expect(window("x", { "x-ratelimit-reset": "2026-12-01T12:01:00Z" })).toBe(60_000)
    expect(window("x", { "Retry-After": 7 })).toBe(7_000)
  })

  it("US-4 an HTTP date in the past is absent; an IMF-fixdate in the future counts; other date forms do not", () => {
    expect(window("x", { "retry-after": "Tue, 01 Dec 2026 11:59:00 GMT" })).toBeUndefined()
    expect(window("x", { "retry-after": "Tue, 01 Dec 2026 12:02:00 GMT" })).toBe(120_000)
    expect(window("x", { "retry-after": "Tuesday, 01-Dec-26 12:02:00 GMT" })).toBeUndefined()
  })

  it("US-4 the body text wins over headers: Resets in 5min with retry-after 120 gives 300 s", () => {
    expect(window("Resets in 5min", { "retry-after": "120" })).toBe(300_000)
    expect(statedReset({ text: "Resets in 5min", headers: { "retry-after": "120" }, now: NOW })?.source).toBe("text")
  })

  it("US-4 a stated reset of 10 days is capped at 7 days", () => {
    expect(window("resets in 10 days")).toBe(604_800_000)
    expect(window("x", { "retry-after": String(30 * 86_400) })).toBe(604_800_000)
  })

  it("US-4 only the earliest match is used; a non-positive body result falls through to the headers", () => {
    expect(window("try again in 5s, or resets in 10min")).toBe(5_000)
    expect(window("resets at 2026-12-01T11:00:00Z; try again in 5s")).toBeUndefined()
    expect(window("resets at 2026-12-01T11:00:00Z; try again in 5s", { "retry-after": "9" })).toBe(9_000)
  })

  it("US-4 durations: space after in/after optional, no word boundary, Go units, decimals, ms", () => {
    expect(window("retry after10s")).toBe(10_000)
    expect(window("tryagain in 5s")).toBeUndefined()
    expect(window("please retry in 1h2m3.5s")).toBe(3_723_500)
    expect(window("retrying in 1500ms")).toBe(1_500)
    expect(window("retry in 2500000us")).toBe(2_500)
    expect(window("retry in 1500000000ns")).toBe(1_500)
    expect(window("reset after 1 day")).toBe(86_400_000)
    expect(parseDuration("1m20s")).toBe(80_000)
  })

  it("US-4 times: am/pm with or without a space, 12am is midnight, zones, invalid hours give nothing", () => {
    expect(window("resets at 3 pm")).toBe(10_800_000)
    expect(window("resets at 12am")).toBe(12 * 3_600_000)
    expect(window("resets at 12pm")).toBe(86_400_000)
    expect(window("resets at 12:00:01")).toBe(1_000)
    expect(window("resets at 13:00 GMT")).toBe(3_600_000)
    expect(window("resets at 13:00Z")).toBe(3_600_000)
    expect(window("resets at 12:00-05:00")).toBe(5 * 3_600_000)
    expect(window("resets at 25:00")).toBeUndefined()
    expect(window("resets at 13pm")).toBeUndefined()
    expect(Number.isNaN(resetFromText("resets at 99:99", NOW))).toBe(true)
  })

  it("US-42 a retry's next counts only when at least 60 s away, and after every other source", () => {
    expect(window("Rate limited", undefined, NOW + 3_000)).toBeUndefined()
    expect(window("Rate limited", undefined, NOW + 4 * 3_600_000)).toBe(4 * 3_600_000)
    expect(window("Rate limited, try again in 5s", undefined, NOW + 4 * 3_600_000)).toBe(5_000)
  })

  it("US-4 a fractional window is rounded up to a whole millisecond", () => {
    expect(window("try again in 1.0005s")).toBe(1_001)
  })
})
