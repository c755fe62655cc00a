/** The counters' increments (issue 36): the wait histogram's bucket, summing per counter. */
import { describe, expect, it } from "@effect/vitest"
import { count, observeWait, PERMIT_WAIT_BUCKETS, sumCounts } from "../../../src/core/metrics/counters.js"

describe("US-53 counter increments", () => {
  it("US-53 a wait is stored once, in the first bucket it fits (+Inf past the last), with its sum and count", () => {
    expect(observeWait("heavy", 0.2)).toEqual([count("permit_wait_seconds_bucket", ["heavy", "1"]), count("permit_wait_seconds_sum", ["heavy"], 0.2), count("permit_wait_seconds_count", ["heavy"])])
    expect(observeWait("heavy", 600)[0]!.labels).toEqual(["heavy", "600"])
    expect(observeWait("heavy", 600.5)[0]!.labels).toEqual(["heavy", "1800"])
    expect(observeWait("heavy", PERMIT_WAIT_BUCKETS.at(-1)! + 1)[0]!.labels).toEqual(["heavy", "+Inf"])
    // a wait that cannot be measured counts as none, never a negative sum
    expect(observeWait("heavy", -3)[1]!.by).toBe(0)
    expect(observeWait("heavy", Number.NaN)[1]!.by).toBe(0)
  })

  it("US-53 increments of the same counter and labels are summed; others kept apart, in first-seen order", () => {
    const a = count("routes_total", ["explore", "first"])
    const b = count("routes_total", ["explore", "second"])
    expect(sumCounts([a, b, a, count("routes_total", ["explore", "first"], 3)])).toEqual([{ ...a, by: 5 }, b])
    expect(sumCounts([a])).toEqual([a])
  })
})
