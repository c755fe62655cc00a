/** Quota records (issue 12, US-48): file name, encoding, tolerant decoding, staleness and the write throttle. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { cooldownFileName } from "../../../src/core/pool/cooldownFile.js"
import type { QuotaObservation } from "../../../src/core/quota/headers.js"
import {
  decodeQuota,
  encodeQuota,
  isStale,
  QUOTA_FILE,
  quotaFileName,
  recordOf,
  shouldWrite,
  type QuotaRecord
} from "../../../src/core/quota/record.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const WEEK = 7 * 86_400_000
const obs = (o: Partial<QuotaObservation>): QuotaObservation => ({ requests: undefined, tokens: undefined, retryAt: undefined, ...o })
const rec = (requests: QuotaRecord["requests"], seenAt = NOW, tokens?: QuotaRecord["tokens"]): QuotaRecord => ({
  model: "fakeB/pool-b",
  ...(requests !== undefined ? { requests } : {}),
  ...(tokens !== undefined ? { tokens } : {}),
  seenAt
})

const figuresArb = fc.record(
  { remaining: fc.nat(1e9), limit: fc.integer({ min: 1, max: 1e9 }), resetAt: fc.integer({ min: 0, max: 4e12 }) },
  { requiredKeys: ["remaining"] }
)
const recordArb = fc
  .record({ model: fc.string({ minLength: 1 }), requests: fc.option(figuresArb, { nil: undefined }), tokens: fc.option(figuresArb, { nil: undefined }), seenAt: fc.integer({ min: 0, max: 4e12 }) })
  .filter((r) => r.requests !== undefined || r.tokens !== undefined)
  .map((r): QuotaRecord => ({ model: r.model, seenAt: r.seenAt, ...(r.requests ? { requests: r.requests } : {}), ...(r.tokens ? { tokens: r.tokens } : {}) }))

describe("quota record files", () => {
  it.each(["opencode/big-pickle", "zen/alpha", "a b/ü:*", "x"])("US-48 %j is named as its cooldown file is, under quota.", (model) => {
    expect(quotaFileName(model)).toBe(cooldownFileName(model).replace(/^cooldown\./, "quota."))
    expect(QUOTA_FILE.test(quotaFileName(model))).toBe(true)
  })

  it("US-48 quotaFileName escapes the slash", () => {
    expect(quotaFileName("opencode/big-pickle")).toBe("quota.opencode_2fbig-pickle.json")
  })

  it.each([
    ["not JSON", "{"],
    ["an array", "[1]"],
    ["no model", JSON.stringify({ seenAt: NOW, requests: { remaining: 1 } })],
    ["no seenAt", JSON.stringify({ model: "m", requests: { remaining: 1 } })],
    ["a seenAt beyond the date range", JSON.stringify({ model: "m", seenAt: 9e15, requests: { remaining: 1 } })],
    ["neither dimension", JSON.stringify({ model: "m", seenAt: NOW })],
    ["a negative remaining", JSON.stringify({ model: "m", seenAt: NOW, requests: { remaining: -1 } })],
    ["a string remaining", JSON.stringify({ model: "m", seenAt: NOW, tokens: { remaining: "5" } })],
    ["a remaining beyond 2^53 − 1", JSON.stringify({ model: "m", seenAt: NOW, tokens: { remaining: 1.5e308, limit: 1.6e308 } })],
    ["empty", ""]
  ])("US-48 a file with %s decodes as undefined", (_name, text) => {
    expect(decodeQuota(text)).toBeUndefined()
  })

  it("US-48 a bad limit or reset reads as absent, a bad dimension as missing, unknown fields are ignored", () => {
    const text = JSON.stringify({ version: 9, extra: true, model: "m", seenAt: NOW, requests: { remaining: 3, limit: 0, resetAt: "soon" }, tokens: [1] })
    expect(decodeQuota(text)).toEqual({ model: "m", requests: { remaining: 3 }, seenAt: NOW })
  })

  it("US-48 a limit of 0, below 0 or beyond 2^53 − 1 reads as absent", () => {
    for (const limit of [0, -1, 9_007_199_254_740_992, 1e308]) {
      expect(decodeQuota(JSON.stringify({ model: "m", seenAt: NOW, requests: { remaining: 3, limit } }))).toEqual({ model: "m", requests: { remaining: 3 }, seenAt: NOW })
    }
  })

  it.prop("US-48 every record reads back as written", [recordArb], ([r]) => {
    expect(decodeQuota(encodeQuota(r))).toEqual(r)
  })

  it.prop("US-48 decoding never throws, whatever the text", [fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v)))], ([text]) => {
    const r = decodeQuota(text)
    expect(r === undefined || (typeof r.model === "string" && (r.requests !== undefined || r.tokens !== undefined))).toBe(true)
  })
})

describe("recordOf", () => {
  it("US-48 keeps both dimensions and stamps seenAt", () => {
    const o = obs({ requests: { remaining: 3, limit: 100, resetAt: NOW + 60_000 }, tokens: { remaining: 9000, limit: 10_000, resetAt: undefined } })
    expect(recordOf("m/x", o, NOW)).toEqual({ model: "m/x", requests: { remaining: 3, limit: 100, resetAt: NOW + 60_000 }, tokens: { remaining: 9000, limit: 10_000 }, seenAt: NOW })
  })

  it("US-48 an exhausted dimension without a reset resets at retry-after; one with remaining left does not", () => {
    const o = obs({ requests: { remaining: 0, limit: 100, resetAt: undefined }, tokens: { remaining: 5, limit: undefined, resetAt: undefined }, retryAt: NOW + 30_000 })
    expect(recordOf("m", o, NOW)).toEqual({ model: "m", requests: { remaining: 0, limit: 100, resetAt: NOW + 30_000 }, tokens: { remaining: 5 }, seenAt: NOW })
  })

  it("US-48 a bare retry-after or an empty observation is no record; a negative remaining reads as 0", () => {
    expect(recordOf("m", obs({ retryAt: NOW + 1000 }), NOW)).toBeUndefined()
    expect(recordOf("m", obs({}), NOW)).toBeUndefined()
    expect(recordOf("m", obs({ requests: { remaining: -4, limit: undefined, resetAt: undefined } }), NOW)?.requests).toEqual({ remaining: 0 })
  })
})

describe("isStale", () => {
  it.each([
    ["a reset still ahead", rec({ remaining: 3, resetAt: NOW + 1 }, NOW - 3_600_000), false],
    ["a reset just reached", rec({ remaining: 3, resetAt: NOW }), true],
    ["requests reset passed, tokens reset ahead", rec({ remaining: 0, resetAt: NOW - 1 }, NOW - 5000, { remaining: 1, resetAt: NOW + 1000 }), false],
    ["both resets passed", rec({ remaining: 0, resetAt: NOW - 1 }, NOW - 5000, { remaining: 1, resetAt: NOW - 2 }), true],
    ["no reset, seen 10 minutes ago", rec({ remaining: 3 }, NOW - 600_000), false],
    ["no reset, seen 10 minutes and 1 ms ago", rec({ remaining: 3 }, NOW - 600_001), true],
    // issue 18: a record no reading could have produced is stale at once
    ["seen 1 ms in the future", rec({ remaining: 3, resetAt: NOW + 60_000 }, NOW + 1), true],
    ["no reset, seen an hour in the future", rec({ remaining: 3 }, NOW + 3_600_000), true],
    ["a reset exactly 7 days after it was seen", rec({ remaining: 3, resetAt: NOW - 1000 + WEEK }, NOW - 1000), false],
    ["a reset 7 days and 1 ms after it was seen", rec({ remaining: 3, resetAt: NOW - 1000 + WEEK + 1 }, NOW - 1000), true],
    ["a reset at the end of the date range", rec({ remaining: 3, limit: 100, resetAt: 8.64e15 }, NOW - 1000), true],
    ["tokens reset far out, requests reset ahead", rec({ remaining: 0, resetAt: NOW + 1000 }, NOW - 5000, { remaining: 1, resetAt: NOW + 400 * 86_400_000 }), true]
  ] as const)("US-48 %s: stale %s", (_name, r, stale) => {
    expect(isStale(r, NOW)).toBe(stale)
  })

  it("US-48 a record from a file with a reset thousands of years out or seen in the future decodes, and is stale at once", () => {
    const far = decodeQuota(JSON.stringify({ model: "m", seenAt: NOW - 1000, requests: { remaining: 3, limit: 100, resetAt: 8.64e15 } }))
    expect(far).toBeDefined()
    expect(isStale(far!, NOW)).toBe(true)
    const future = decodeQuota(JSON.stringify({ model: "m", seenAt: NOW + 86_400_000, tokens: { remaining: 3 } }))
    expect(isStale(future!, NOW)).toBe(true)
  })

  it.prop("US-48 every record made from an observation read at seenAt is fresh at seenAt", [fc.integer({ min: 1, max: WEEK }), fc.nat(1e9)], ([ms, remaining]) => {
    const r = recordOf("m", obs({ requests: { remaining, limit: undefined, resetAt: NOW + ms } }), NOW)!
    expect(isStale(r, NOW)).toBe(false)
  })
})

describe("shouldWrite", () => {
  const prev = rec({ remaining: 55, limit: 100, resetAt: NOW + 60_000 }, NOW)
  it.each([
    ["no previous record", undefined, prev, true],
    ["the same figures 1 s later", prev, rec({ remaining: 55, limit: 100, resetAt: NOW + 60_000 }, NOW + 1000), false],
    ["one request fewer in the same band", prev, rec({ remaining: 50, limit: 100, resetAt: NOW + 60_000 }, NOW + 1000), false],
    ["a band boundary crossed (55 → 49 of 100)", prev, rec({ remaining: 49, limit: 100, resetAt: NOW + 60_000 }, NOW + 1000), true],
    ["a band crossed upwards (a refill)", prev, rec({ remaining: 100, limit: 100, resetAt: NOW + 60_000 }, NOW + 1000), true],
    ["remaining reaching 0 without a limit", rec({ remaining: 2 }), rec({ remaining: 0 }, NOW + 100), true],
    ["remaining falling but not to 0 without a limit", rec({ remaining: 9 }), rec({ remaining: 2 }, NOW + 100), false],
    ["the reset moved by 1 s", prev, rec({ remaining: 55, limit: 100, resetAt: NOW + 61_000 }, NOW + 1000), false],
    ["the reset moved by more than 1 s", prev, rec({ remaining: 55, limit: 100, resetAt: NOW + 61_001 }, NOW + 1000), true],
    ["the reset vanished", prev, rec({ remaining: 55, limit: 100 }, NOW + 1000), true],
    ["a tokens dimension appeared", prev, rec({ remaining: 55, limit: 100, resetAt: NOW + 60_000 }, NOW + 1000, { remaining: 5 }), true],
    ["the previous write 4999 ms old", prev, rec({ remaining: 54, limit: 100, resetAt: NOW + 60_000 }, NOW + 4999), false],
    ["the previous write 5 s old", prev, rec({ remaining: 54, limit: 100, resetAt: NOW + 60_000 }, NOW + 5000), true],
    ["the clock stepped back", prev, rec({ remaining: 54, limit: 100, resetAt: NOW + 60_000 }, NOW - 1), true]
  ] as const)("US-48 %s: write %s", (_name, previous, next, write) => {
    expect(shouldWrite(previous, next)).toBe(write)
  })

  const limit = 1000
  const stepArb = fc.record({ dt: fc.integer({ min: 0, max: 2000 }), used: fc.integer({ min: 0, max: 30 }) })

  it.prop("US-48 a steady stream writes at least every 5 s and at most once per 5 s plus once per band and at 0", [fc.array(stepArb, { minLength: 1, maxLength: 300 })], ([steps]) => {
    let last: QuotaRecord | undefined
    let t = NOW
    let remaining = limit
    let writes = 0
    const bands = new Set<number>()
    for (const { dt, used } of steps) {
      t += dt
      remaining = Math.max(0, remaining - used)
      bands.add(Math.floor((remaining * 10) / limit))
      const next = rec({ remaining, limit, resetAt: NOW + 3_600_000 }, t)
      if (shouldWrite(last, next)) {
        last = next
        writes++
      }
      // never a written record more than 5 s behind
      expect(t - last!.seenAt).toBeLessThan(5000)
    }
    expect(writes).toBeLessThanOrEqual(1 + Math.floor((t - NOW) / 5000) + bands.size + 1)
  })

  it.prop("US-48 the first record is always written, the same record again is not", [recordArb], ([r]) => {
    expect(shouldWrite(undefined, r)).toBe(true)
    expect(shouldWrite(r, r)).toBe(false)
    expect(shouldWrite(r, { ...r, seenAt: r.seenAt + 5000 })).toBe(true)
  })
})
