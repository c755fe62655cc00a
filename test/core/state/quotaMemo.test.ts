/** The quota write throttle as the engine runs it (issue 12, US-48): which observation becomes a record to write, against this process's last written one. */
import { describe, expect, it } from "@effect/vitest"
import type { QuotaObservation } from "../../../src/core/quota/headers.js"
import { NO_QUOTA_WRITTEN, quotaStep, type QuotaMemo } from "../../../src/core/state/quotaMemo.js"

const NOW = Date.parse("2026-12-01T12:00:00Z")
const requests = (remaining: number): QuotaObservation => ({ requests: { remaining, limit: 100, resetAt: NOW + 600_000 }, tokens: undefined, retryAt: undefined })

describe("quotaStep", () => {
  it("US-48 a busy provider is throttled: the same band within 5 s is not rewritten, a band crossing or 5 s later is", () => {
    let memo: QuotaMemo = NO_QUOTA_WRITTEN
    const written: Array<number | undefined> = []
    for (const [remaining, at] of [[55, 0], [51, 1000], [49, 2000], [45, 6999], [44, 7000]] as const) {
      const step = quotaStep(memo, { model: "m/x", observation: requests(remaining) }, NOW + at)
      written.push(step.write?.requests?.remaining)
      memo = step.memo
    }
    expect(written).toEqual([55, undefined, 49, undefined, 44])
    expect(memo.get("m/x")).toMatchObject({ requests: { remaining: 44 }, seenAt: NOW + 7000 })
  })

  it("US-48 an observation with no figures, or no observation, writes nothing and keeps the memo", () => {
    const none = quotaStep(NO_QUOTA_WRITTEN, { model: "other/y", observation: { requests: undefined, tokens: undefined, retryAt: NOW + 5000 } }, NOW)
    expect(none).toEqual({ write: undefined, memo: NO_QUOTA_WRITTEN })
    expect(quotaStep(NO_QUOTA_WRITTEN, undefined, NOW).memo).toBe(NO_QUOTA_WRITTEN)
  })

  it("US-48 each model is throttled on its own", () => {
    const a = quotaStep(NO_QUOTA_WRITTEN, { model: "a/x", observation: requests(50) }, NOW)
    const b = quotaStep(a.memo, { model: "b/y", observation: requests(50) }, NOW + 10)
    expect(b.write?.model).toBe("b/y")
    expect([...b.memo.keys()]).toEqual(["a/x", "b/y"])
  })
})
