/** Which quota record a process writes for one response (issue 12, US-48): the observation's record, throttled against its last write. */
import { describe, expect, it } from "@effect/vitest"
import type { QuotaObservation } from "../../../src/core/quota/headers.js"
import { QUOTA_REWRITE_MS, type QuotaRecord } from "../../../src/core/quota/record.js"
import { quotaToWrite } from "../../../src/core/quota/write.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const RESET = NOW + 600_000
const requests = (remaining: number, limit = 100, resetAt: number | undefined = RESET): QuotaObservation => ({ requests: { remaining, limit, resetAt }, tokens: undefined, retryAt: undefined })
const written = (remaining: number, seenAt = NOW, model = "m/x"): QuotaRecord => ({ model, requests: { remaining, limit: 100, resetAt: RESET }, seenAt })

describe("the quota write of one response", () => {
  it.each<[string, QuotaRecord | undefined, QuotaObservation, number, QuotaRecord | undefined]>([
    ["nothing written yet: the record", undefined, requests(55), NOW, written(55)],
    ["a bare retry-after says nothing about quota: none", undefined, { requests: undefined, tokens: undefined, retryAt: NOW + 5_000 }, NOW, undefined],
    ["the same band within 5 s: throttled", written(55), requests(51), NOW + 1_000, undefined],
    ["a band crossed within 5 s: written", written(55), requests(49), NOW + 1_000, written(49, NOW + 1_000)],
    ["remaining reaches 0 within 5 s: written", written(5), requests(0), NOW + 1_000, written(0, NOW + 1_000)],
    ["the same band just under 5 s later: throttled", written(55), requests(51), NOW + QUOTA_REWRITE_MS - 1, undefined],
    ["the same band 5 s later: written", written(55), requests(51), NOW + QUOTA_REWRITE_MS, written(51, NOW + QUOTA_REWRITE_MS)],
    ["the reset moved by more than 1 s: written", written(55), requests(55, 100, RESET + 1_001), NOW + 1_000, { model: "m/x", requests: { remaining: 55, limit: 100, resetAt: RESET + 1_001 }, seenAt: NOW + 1_000 }],
    ["the reset moved by 1 s: throttled", written(55), requests(55, 100, RESET + 1_000), NOW + 1_000, undefined],
    ["a clock stepped back: written", written(55), requests(55), NOW - 1, written(55, NOW - 1)],
    ["the last write was another model's: written", written(55, NOW, "other/y"), requests(55), NOW + 1, written(55, NOW + 1)]
  ])("US-48 %s", (_name, last, observation, now, expected) => {
    expect(quotaToWrite(last, "m/x", observation, now)).toEqual(expected)
  })
})
