/** `ocpool cost` flags (US-3): durations, groupings and models, or one line naming the problem. */
import { describe, expect, it } from "@effect/vitest"
import { parseBy, parseModel, parseSince } from "../../../src/core/cost/flags.js"

describe("cost flags", () => {
  it.each([
    ["30m", 1_800_000],
    ["24h", 86_400_000],
    ["7d", 604_800_000],
    ["2w", 1_209_600_000],
    ["1.5h", 5_400_000]
  ] as const)("US-3 --since %s is %i ms", (text, ms) => {
    expect(parseSince(text)).toEqual({ _tag: "Value", value: { text, ms } })
  })

  it("US-3 --since defaults to 7d, and 'all' is every message", () => {
    expect(parseSince(undefined)).toEqual({ _tag: "Value", value: { text: "7d", ms: 604_800_000 } })
    expect(parseSince("all")).toEqual({ _tag: "Value", value: { text: "all", ms: undefined } })
  })

  it.each(["", "7", "d", "-1d", "0d", "7 days", "7D", "1e3d", "x".repeat(100), "7d\u001b[2J"])("US-3 --since %j is refused with one line", (text) => {
    const r = parseSince(text)
    expect(r._tag).toBe("Problem")
    if (r._tag === "Problem") {
      expect(r.message).toMatch(/^--since must be a duration such as 30m, 24h, 7d or 2w \(above zero\), or 'all', got '/)
      expect(r.message).not.toMatch(/[\n\u001b]/)
    }
  })

  it("US-3 --since beyond 100 years is refused", () => {
    expect(parseSince("36501d")).toEqual({ _tag: "Problem", message: "--since must be at most 36500d, got '36501d'" })
    expect(parseSince("36500d")._tag).toBe("Value")
  })

  it("US-3 --by takes agent, model, session or day, default agent", () => {
    for (const by of ["agent", "model", "session", "day"]) expect(parseBy(by)).toEqual({ _tag: "Value", value: by })
    expect(parseBy(undefined)).toEqual({ _tag: "Value", value: "agent" })
    expect(parseBy("week")).toEqual({ _tag: "Problem", message: "--by must be one of agent, model, session, day, got 'week'" })
  })

  it("US-3 --baseline-model must be provider/model", () => {
    expect(parseModel("baseline-model", "anthropic/claude-sonnet-4-5")).toEqual({ _tag: "Value", value: "anthropic/claude-sonnet-4-5" })
    expect(parseModel("baseline-model", "openrouter/meta/llama-3")).toEqual({ _tag: "Value", value: "openrouter/meta/llama-3" })
    expect(parseModel("baseline-model", undefined)).toEqual({ _tag: "Value", value: undefined })
    for (const bad of ["claude", "/m", "p/", "p /m", ""]) expect(parseModel("baseline-model", bad)).toEqual({ _tag: "Problem", message: `--baseline-model must be provider/model, got '${bad}'` })
  })
})
