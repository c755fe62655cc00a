import { describe, expect, it } from "@effect/vitest"
import { waitedLine } from "../../../src/core/permits/waited.js"
import { spokenDuration } from "../../../src/core/time.js"

describe("the waited line (issue 21)", () => {
  it("US-51 names the wait, the budget and how many commands ran before, as the issue writes it", () => {
    expect(waitedLine("heavy", 42_000, 2)).toBe("[opencode-pool] waited 42 s for a heavy-work permit; 2 commands ran before it")
    expect(waitedLine("heavy", 1_400, 1)).toBe("[opencode-pool] waited 1 s for a heavy-work permit; 1 command ran before it")
    expect(waitedLine("gpu", 65_000, 0)).toBe("[opencode-pool] waited 1 min 5 s for a gpu permit; 0 commands ran before it")
  })

  it("US-51 durations: milliseconds under a second, whole minutes, and nothing odd for bad input", () => {
    expect(spokenDuration(850)).toBe("850 ms")
    expect(spokenDuration(120_000)).toBe("2 min")
    expect(spokenDuration(-5)).toBe("0 s")
    expect(spokenDuration(Number.NaN)).toBe("0 s")
  })
})
