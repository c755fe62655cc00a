/** The cost report's usage records (US-3): decoded with effect/Schema; what cannot be read is counted, never summed; days outside the date range are `unknown`. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { dayKey, dayOrder, decodeUsage, DAY_NUMBER_MAX, UNKNOWN_DAY } from "../../../src/core/cost/rows.js"

/** A readable record as the database aggregates it: names as JSON text, sums as numbers. */
const record = (more: Record<string, unknown> = {}): Record<string, unknown> => ({
  ok: 1,
  session_id: "ses_a",
  agent: '"explore-1"',
  provider: '"fakeA"',
  model: '"pool-a"',
  day: null,
  calls: 2,
  input: 100,
  output: 10,
  reasoning: 1,
  cache_read: 50,
  cache_write: 5,
  cost: 0.25,
  ...more
})

describe("cost usage records", () => {
  it("US-3 a readable record becomes a row: names unquoted (escapes too), sums kept exactly", () => {
    const scan = decodeUsage([record(), record({ agent: '"explore\\u002d1"', provider: '"fake\\"A"', day: 20_000 })], true)
    expect(scan.unreadable).toBe(0)
    expect(scan.rows).toEqual([
      { sessionId: "ses_a", agent: "explore-1", model: "fakeA/pool-a", day: UNKNOWN_DAY, calls: 2, tokens: { input: 100, output: 10, reasoning: 1, cacheRead: 50, cacheWrite: 5 }, cost: 0.25 },
      { sessionId: "ses_a", agent: "explore-1", model: 'fake"A/pool-a', day: "2024-10-04", calls: 2, tokens: { input: 100, output: 10, reasoning: 1, cacheRead: 50, cacheWrite: 5 }, cost: 0.25 }
    ])
    // without --by day the day is empty
    expect(decodeUsage([record({ day: 20_000 })], false).rows[0]!.day).toBe("")
  })

  it("US-3 unreadable groups and records that do not decode count their calls and add nothing", () => {
    const bad: ReadonlyArray<Record<string, unknown>> = [
      record({ ok: 0, calls: 3, agent: null, input: 1e300 }),
      record({ agent: "5" }), // a JSON number, not a string
      record({ model: "not json" }),
      record({ session_id: Buffer.from("ses") }),
      record({ cost: -1 }),
      record({ input: Number.POSITIVE_INFINITY }),
      record({ day: 1.5 }),
      record({ day: DAY_NUMBER_MAX + 1 })
    ]
    const scan = decodeUsage([record(), ...bad, null, 42], true)
    expect(scan.rows).toHaveLength(1)
    expect(scan.unreadable).toBe(3 + 2 * (bad.length - 1) + 2)
  })

  it("US-3 days: YYYY-MM-DD in UTC, extended years at the ends of the date range, unknown for a time that is not a date", () => {
    expect(dayKey(0)).toBe("1970-01-01")
    expect(dayKey(-1)).toBe("1969-12-31")
    expect(dayKey(DAY_NUMBER_MAX)).toBe("+275760-09-13")
    expect(dayKey(-DAY_NUMBER_MAX)).toBe("-271821-04-20")
    expect(dayKey(null)).toBe("unknown")
  })

  it.prop("US-3 days sort in date order, unknown after every date", [fc.array(fc.oneof(fc.integer({ min: -DAY_NUMBER_MAX, max: DAY_NUMBER_MAX }), fc.constant(null)), { maxLength: 20 })], ([days]) => {
    const sorted = days.map(dayKey).sort(dayOrder)
    const expected = [...days].sort((a, b) => (a === null ? 1 : b === null ? -1 : a - b)).map(dayKey)
    expect(sorted).toEqual(expected)
  })
})
