/** Fail-open on the pool lock (SPEC §5.3): every time is counted; a warning at most once a minute. */
import { describe, expect, it } from "@effect/vitest"
import { FAIL_OPEN_WARN_EVERY_MS, FAIL_OPEN_WARNING, failOpen, NO_FAIL_OPENS, type FailOpenMemory } from "../../../src/core/lock/failOpen.js"

const T0 = Date.parse("2026-12-01T12:00:00Z")

/** The warnings a run of fail-opens at `times` gives (true: warned), and the memory after them. */
const run = (times: ReadonlyArray<number>): { warned: Array<boolean>; memory: FailOpenMemory } => {
  let memory = NO_FAIL_OPENS
  const warned = times.map((now) => {
    const r = failOpen(memory, now)
    memory = r.memory
    return r.warning !== undefined
  })
  return { warned, memory }
}

describe("pool lock fail-open", () => {
  it("US-40 the warning interval is one minute, and the warning says routing goes on without the lock", () => {
    expect(FAIL_OPEN_WARN_EVERY_MS).toBe(60_000)
    expect(failOpen(NO_FAIL_OPENS, T0)).toEqual({ memory: { count: 1, warnedAt: T0 }, warning: FAIL_OPEN_WARNING })
    expect(FAIL_OPEN_WARNING).toBe("pool lock busy; routing without it")
  })

  it.each<[string, ReadonlyArray<number>, ReadonlyArray<boolean>]>([
    ["the first fail-open warns, whenever it is", [0], [true]],
    ["within the minute: one warning", [T0, T0 + 1, T0 + 30_000, T0 + 59_999], [true, false, false, false]],
    ["exactly a minute later: warns again", [T0, T0 + 60_000], [true, true]],
    ["the minute counts from the last warning, not the last fail-open", [T0, T0 + 50_000, T0 + 100_000, T0 + 159_999, T0 + 160_000], [true, false, true, false, true]],
    ["a clock stepped back does not warn until a minute after the last warning", [T0, T0 - 10_000, T0 + 59_999, T0 + 60_000], [true, false, false, true]]
  ])("US-40 %s", (_name, times, warned) => {
    expect(run(times).warned).toEqual(warned)
  })

  it("US-40 every fail-open is counted, warned or not", () => {
    expect(run([T0, T0 + 1, T0 + 2, T0 + 60_000]).memory).toEqual({ count: 4, warnedAt: T0 + 60_000 })
  })
})
