/**
 * The one home of time as text (issue 34 item 4): each distinct form the project writes, side by side,
 * so that two forms that differ (rounded up, down or to the nearest second; compact or spoken) stay
 * apart on purpose.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ageText,
  clockSeconds,
  clockTime,
  clockTimeFrom,
  elapsed,
  formatDuration,
  isoTime,
  isoTimeOr,
  minutesOrSeconds,
  remaining,
  remainingChangesIn,
  spanText,
  spokenDuration,
  tenthSeconds,
  tickLabel,
  uptime,
  wholeSeconds
} from "../../src/core/time.js"

const T = Date.UTC(2026, 0, 2, 15, 30, 45, 123)

describe("time as text (core/time.ts)", () => {
  it("US-6 instants: ISO, the number when no date can show it, HH:MMZ, HH:MM:SS, the date a day ahead", () => {
    expect(isoTime(T)).toBe("2026-01-02T15:30:45.123Z")
    expect(isoTimeOr(T)).toBe("2026-01-02T15:30:45.123Z")
    expect(isoTimeOr(9e15)).toBe("9000000000000000")
    expect(isoTimeOr(Number.NaN)).toBe("NaN")
    expect(clockTime(T)).toBe("15:30Z")
    expect(clockSeconds(T)).toBe("15:30:45")
    expect(clockTimeFrom(T, T - 1000)).toBe("15:30Z")
    expect(clockTimeFrom(T, T - 86_400_000)).toBe("2026-01-02 15:30Z")
  })

  it("US-45 axis labels follow the step: a date, HH:MM, HH:MM:SS, milliseconds; the number off the date range", () => {
    expect([86_400_000, 60_000, 1000, 100].map((step) => tickLabel(T, step))).toEqual(["2026-01-02", "15:30", "15:30:45", "15:30:45.123"])
    expect(tickLabel(9e15, 1000)).toBe("9000000000000000")
  })

  it("US-6 the compact durations differ only in rounding (up, nearest, down) and in their largest unit", () => {
    const ms = 3_599_500
    expect([remaining(ms), elapsed(ms), formatDuration(ms), ageText(ms), uptime(ms)]).toEqual(["1h00m", "1h00m", "59m59s", "59m59s", "59m"])
    expect([remaining(61_200), elapsed(61_200), formatDuration(61_200)]).toEqual(["1m02s", "1m01s", "1m01s"])
    expect([remaining(-5), formatDuration(-5), formatDuration(850.4), ageText(-5)]).toEqual(["0s", "0s", "850ms", "0s"])
    expect(ageText(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d04h")
    expect(formatDuration(3 * 86_400_000)).toBe("72h00m")
    expect([wholeSeconds(1500), tenthSeconds(1549), minutesOrSeconds(600_000), minutesOrSeconds(90_000)]).toEqual(["2s", "1.5s", "10m", "90s"])
  })

  it("US-51 the spoken forms: a waited permit and a span on the timeline page", () => {
    expect([spokenDuration(850), spokenDuration(42_000), spokenDuration(65_000), spokenDuration(120_000), spokenDuration(-1)]).toEqual(["850 ms", "42 s", "1 min 5 s", "2 min", "0 s"])
    expect([spanText(850), spanText(1234), spanText(12_345), spanText(120_000), spanText(3_605_000), spanText(3 * 86_400_000)]).toEqual([
      "850 ms",
      "1.23 s",
      "12.3 s",
      "2 min 0 s",
      "1 h 0 min 5 s",
      "3 d 0 h 0 min 0 s"
    ])
  })

  it("US-6 a countdown's next change: the next second, the next minute past an hour, none once it reads 0s", () => {
    expect(remainingChangesIn(4_500)).toBe(500)
    expect(remaining(4_500)).toBe("5s")
    expect(remaining(4_500 - 500)).toBe("4s")
    expect(remainingChangesIn(3_630_000)).toBe(31_000)
    expect(remainingChangesIn(0)).toBeUndefined()
    expect(remainingChangesIn(Number.POSITIVE_INFINITY)).toBeUndefined()
  })
})
