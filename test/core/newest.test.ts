/** The bounded memories' one rule (src/core/newest.ts): newest last, the oldest forgotten first, the input untouched. */
import { describe, expect, it } from "@effect/vitest"
import { withNewest } from "../../src/core/newest.js"

describe("withNewest", () => {
  it("US-50 a set key becomes the newest; past the bound the oldest go; the map given is never changed", () => {
    const start = new Map([["a", 1], ["b", 2], ["c", 3]])
    expect([...withNewest(start, "d", 4, 3)]).toEqual([["b", 2], ["c", 3], ["d", 4]])
    expect([...withNewest(start, "a", 9, 3)]).toEqual([["b", 2], ["c", 3], ["a", 9]])
    expect([...withNewest(start, "e", 5, 1)]).toEqual([["e", 5]])
    expect([...start]).toEqual([["a", 1], ["b", 2], ["c", 3]])
  })
})
