import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { type CooldownTable, decideLimit, decideRetry } from "../../../src/core/pool/cooldown.js"
import type { Slot } from "../../../src/core/pool/pool.js"
import { parseDuration, resetFromHeaders, resetFromText, statedReset } from "../../../src/core/limits/reset.js"

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

  it("US-4 a stated reset of 10 days is absent, not capped: the strike backoff applies", () => {
    expect(window("resets in 10 days")).toBeUndefined()
    expect(window("x", { "retry-after": String(30 * 86_400) })).toBeUndefined()
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

/** Issue 18 item 9: a reset that is not representable, or further than 7 days away, is absent in every form. */
describe("garbage resets are absent (issue 18)", () => {
  const DAY = 86_400_000
  const WEEK = 7 * DAY
  const slots: ReadonlyArray<Slot> = [{ index: 1, model: "zen/alpha", provider: "zen", weight: 1 }]
  const empty: CooldownTable = new Map()
  const epochS = (ms: number) => String((NOW + ms) / 1_000)
  const iso = (ms: number) => new Date(NOW + ms).toISOString()
  const http = (ms: number) => new Date(NOW + ms).toUTCString()

  const garbageTexts: ReadonlyArray<string> = [
    "Rate limit exceeded, resets in 10 days",
    `Rate limit exceeded, retry in ${"1h".repeat(20_000)}`,
    "Rate limit exceeded, try again in 99999999999s",
    `Rate limit exceeded, try again in ${"9".repeat(400)}s`,
    "Rate limit exceeded, resets at 9999-12-31T23:59:59Z",
    "Rate limit exceeded, resets at 9999999999",
    "Rate limit exceeded, resets at 2027-01-01T00:00:00Z"
  ]
  it.each(garbageTexts.map((t) => [t.length > 80 ? `${t.slice(0, 60)}… (${t.length} chars)` : t, t]))(
    "US-4 body text %j: no stated reset, the limit cools for the strike window (60 s)",
    (_name, text) => {
      expect(window(text)).toBeUndefined()
      expect(decideLimit(slots, empty, { text, model: "zen/alpha" }, NOW)).toMatchObject({ _tag: "Cool", plan: { strike: 1, windowMs: 60_000, source: "backoff", until: NOW + 60_000 } })
    }
  )

  const garbageHeaders: ReadonlyArray<Record<string, unknown>> = [
    { "retry-after-ms": "99999999999999" },
    { "retry-after-ms": 1e300 },
    { "retry-after": "99999999999" },
    { "retry-after": String(30 * 86_400) },
    { "retry-after": "Fri, 31 Dec 9999 23:59:59 GMT" },
    { "retry-after": "9".repeat(400) },
    { "x-ratelimit-reset": "99999999999" },
    { "x-ratelimit-reset": "99999999999999" },
    { "x-ratelimit-reset": 1e300 },
    { "x-ratelimit-reset": "9999-12-31T23:59:59Z" },
    { "x-ratelimit-reset": "275760-09-13T00:00:00Z" },
    { "x-ratelimit-reset-tokens": "240h" },
    { "x-ratelimit-reset-tokens": "10d" },
    { "x-ratelimit-reset-tokens": "1h".repeat(20_000) },
    { "x-ratelimit-reset-requests": "9".repeat(400) }
  ]
  it.each(garbageHeaders.map((h) => [JSON.stringify(h).slice(0, 80), h]))("US-4 headers %s: no stated reset, the strike window applies", (_name, headers) => {
    expect(window("Rate limit exceeded", headers)).toBeUndefined()
    expect(decideLimit(slots, empty, { text: "Rate limit exceeded", headers, model: "zen/alpha" }, NOW)).toMatchObject({ _tag: "Cool", plan: { windowMs: 60_000, source: "backoff" } })
  })

  it("US-4 exactly 7 days is kept in every form; 7 days and 1 s is absent", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown> | undefined, string, Record<string, unknown> | undefined]> = [
      ["resets in 7 days", undefined, "resets in 7 days 1s", undefined],
      ["retry in 168h", undefined, "retry in 168h0m1s", undefined],
      [`resets at ${iso(WEEK)}`, undefined, `resets at ${iso(WEEK + 1_000)}`, undefined],
      [`resets at ${epochS(WEEK)}`, undefined, `resets at ${epochS(WEEK + 1_000)}`, undefined],
      ["x", { "retry-after-ms": String(WEEK) }, "x", { "retry-after-ms": String(WEEK + 1_000) }],
      ["x", { "retry-after": String(WEEK / 1_000) }, "x", { "retry-after": String(WEEK / 1_000 + 1) }],
      ["x", { "retry-after": http(WEEK) }, "x", { "retry-after": http(WEEK + 1_000) }],
      ["x", { "x-ratelimit-reset": epochS(WEEK) }, "x", { "x-ratelimit-reset": epochS(WEEK + 1_000) }],
      ["x", { "x-ratelimit-reset": String(WEEK / 1_000) }, "x", { "x-ratelimit-reset": String(WEEK / 1_000 + 1) }],
      ["x", { "x-ratelimit-reset": iso(WEEK) }, "x", { "x-ratelimit-reset": iso(WEEK + 1_000) }],
      ["x", { "x-ratelimit-reset-tokens": "168h" }, "x", { "x-ratelimit-reset-tokens": "168h1s" }]
    ]
    for (const [keptText, keptHeaders, goneText, goneHeaders] of cases) {
      expect(window(keptText, keptHeaders)).toBe(WEEK)
      expect(window(goneText, goneHeaders)).toBeUndefined()
    }
    // a fraction of a millisecond over is over (windows are rounded up to a whole ms)
    expect(window("x", { "retry-after-ms": String(WEEK + 0.5) })).toBeUndefined()
  })

  it("US-42 a retry's next more than 7 days away is no stated reset; the breaker then cools for the strike window", () => {
    expect(window("Rate limited", undefined, NOW + WEEK)).toBe(WEEK)
    expect(window("Rate limited", undefined, NOW + WEEK + 1_000)).toBeUndefined()
    const limited = decideRetry(slots, empty, { message: "Rate limited", next: NOW + 3_000 * DAY, model: "zen/alpha", pooled: true }, NOW)
    expect(limited).toMatchObject({ _tag: "Cool", cls: "rate_limit", plan: { windowMs: 60_000, source: "backoff" } })
    const breaker = decideRetry(slots, empty, { message: "Internal Server Error", next: NOW + WEEK + 1_000, model: "zen/alpha", pooled: true }, NOW)
    expect(breaker).toMatchObject({ _tag: "Cool", cls: "rate_limit", plan: { windowMs: 60_000, source: "backoff", until: NOW + 60_000 } })
    const week = decideRetry(slots, empty, { message: "Internal Server Error", next: NOW + WEEK, model: "zen/alpha", pooled: true }, NOW)
    expect(week).toMatchObject({ _tag: "Cool", plan: { windowMs: WEEK, source: "retry" } })
  })

  it("US-4 a garbage reset in one source falls through to the next, as a past one does; garbage x-ratelimit-reset* values are not the largest", () => {
    expect(statedReset({ text: "resets in 10 days", headers: { "retry-after": "120" }, now: NOW })).toEqual({ ms: 120_000, source: "header" })
    expect(window("x", { "retry-after-ms": "99999999999999", "retry-after": "2" })).toBe(2_000)
    expect(window("x", { "retry-after": "99999999999", "x-ratelimit-reset-tokens": "6m0s" })).toBe(360_000)
    expect(window("x", { "x-ratelimit-reset-requests": "99999999999", "x-ratelimit-reset-tokens": "6m0s" })).toBe(360_000)
  })

  it("US-4 a header value is read from its first 1,024 characters: a number only after them is absent", () => {
    for (const name of ["retry-after-ms", "retry-after", "x-ratelimit-reset", "x-ratelimit-reset-tokens"]) {
      expect(window("x", { [name]: `${" ".repeat(1_024)}30` })).toBeUndefined()
      expect(window("x", { [name]: `${" ".repeat(1_020)}30` })).toBeGreaterThan(0)
    }
    expect(window("x", { "x-ratelimit-reset-tokens": `${"0s".repeat(512)}5s` })).toBeUndefined()
  })

  it("US-4 a 1 MiB header value gives what its first KiB gives", () => {
    const MiB = 1 << 20
    const values = [`30${" ".repeat(MiB)}`, "1s".repeat(MiB / 2), "1".repeat(MiB), `5s${"0s".repeat(MiB / 2)}`, `${"0s".repeat(MiB / 2)}5s`, "Tue, 01 Dec 2026 12:02:00 GMT".padEnd(MiB, " ")]
    for (const v of values) {
      for (const name of ["retry-after-ms", "retry-after", "x-ratelimit-reset-tokens"]) {
        expect(resetFromHeaders({ [name]: v }, NOW)).toEqual(resetFromHeaders({ [name]: v.slice(0, 1_024) }, NOW))
      }
    }
    expect(window("x", { "x-ratelimit-reset-tokens": "1s".repeat(MiB / 2) })).toBe(512_000)
  })

  it.prop("US-4 any header value gives what its first 1,024 characters give", [fc.string({ minLength: 1_000, maxLength: 1_100 }), fc.constantFrom("retry-after", "retry-after-ms", "x-ratelimit-reset")], ([v, name]) => {
    expect(resetFromHeaders({ [name]: v }, NOW)).toEqual(resetFromHeaders({ [name]: v.slice(0, 1_024) }, NOW))
  })

  it("US-4 body text: a reset is found anywhere in the text, and a duration is read from the first 1,024 characters after its phrase", () => {
    expect(window(`${"x".repeat(100_000)} try again in 5s`)).toBe(5_000)
    // 512 components of 1 s fit in 1,024 characters; the rest is not read
    expect(window(`retry in ${"1s".repeat(600)}`)).toBe(512_000)
    expect(window(`retry in ${"1s".repeat(1 << 19)}`)).toBe(512_000)
    expect(window(`retry in ${"1".repeat(2_000)}s`)).toBeUndefined()
  })
})
