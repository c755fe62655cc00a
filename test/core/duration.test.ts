/** `ocpool run --wait/--timeout DUR`: a number with a unit, in milliseconds, or a one-line reason. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { DURATION_MAX_MS, parseDuration } from "../../src/core/duration.js"
import { formatDuration } from "../../src/core/time.js"

describe("parseDuration", () => {
  it("US-51 each unit, decimals and zero", () => {
    expect(parseDuration("500ms")).toBe(500)
    expect(parseDuration("30s")).toBe(30_000)
    expect(parseDuration("10m")).toBe(600_000)
    expect(parseDuration("1h")).toBe(3_600_000)
    expect(parseDuration("1.5s")).toBe(1500)
    expect(parseDuration(".5m")).toBe(30_000)
    expect(parseDuration("0s")).toBe(0)
    expect(parseDuration("0.4ms")).toBe(0)
    expect(parseDuration("168h")).toBe(DURATION_MAX_MS)
  })

  it("US-51 no unit, a negative, empty, an unknown unit, spaces and overflow are errors with a one-line reason", () => {
    const reason = (text: string) => {
      const r = parseDuration(text)
      if (typeof r === "number") throw new Error(`${text} parsed as ${r}`)
      expect(r.error).not.toContain("\n")
      return r.error
    }
    expect(reason("30")).toMatch(/^no unit/)
    expect(reason("-1s")).toMatch(/^negative/)
    expect(reason("")).toMatch(/^empty/)
    expect(reason("5d")).toMatch(/^not a duration/)
    expect(reason(" 5s")).toMatch(/^not a duration/)
    expect(reason("5 s")).toMatch(/^not a duration/)
    expect(reason("1e3s")).toMatch(/^not a duration/)
    expect(reason("169h")).toMatch(/^too long/)
    expect(reason("99999999999999999999999h")).toMatch(/^too long/)
    expect(reason("1".repeat(100) + "s")).toMatch(/^not a duration/)
  })

  it.prop("US-51 any string: a whole number of ms in [0, 7 days] or an error, never a throw", [fc.oneof(fc.string(), fc.stringMatching(/^-?\d{0,12}(\.\d{0,4})?(ms|s|m|h|d)?$/))], ([text]) => {
    const r = parseDuration(text)
    if (typeof r === "number") {
      expect(Number.isInteger(r)).toBe(true)
      expect(r).toBeGreaterThanOrEqual(0)
      expect(r).toBeLessThanOrEqual(DURATION_MAX_MS)
    } else {
      expect(typeof r.error).toBe("string")
      expect(r.error.length).toBeGreaterThan(0)
    }
  })

  it("US-51 formatDuration: ms under a second, then s, m+s, h+m", () => {
    expect(formatDuration(850)).toBe("850ms")
    expect(formatDuration(42_000)).toBe("42s")
    expect(formatDuration(185_000)).toBe("3m05s")
    expect(formatDuration(7_800_000)).toBe("2h10m")
  })
})
