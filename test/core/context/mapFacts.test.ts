/** The map's file facts judged (epic G, US-20): its size, when it was last written, whether a run changed it, the budget. */
import { describe, expect, it } from "@effect/vitest"
import { lastWritten, mapBytes, NO_MAP, overBudget, type MapFacts, type MapFileFacts } from "../../../src/core/context/mapFacts.js"
import { stampOf } from "../../../src/core/context/load.js"
import { mapDiffers } from "../../../src/core/context/refresh.js"

/** Whether a run that saw `before` at its start and `after` at its end changed the map: the stamps it compares. */
const mapChanged = (before: MapFacts, after: MapFacts): boolean => mapDiffers(stampOf(before), stampOf(after))

const f = (name: string, bytes: number, mtimeMs: number): MapFileFacts => ({ name, bytes, mtimeMs })
const manager = (bytes: number, mtimeMs: number): MapFileFacts => ({ name: "manager.md", bytes, mtimeMs, manager: true })
const map = (...files: ReadonlyArray<MapFileFacts>): MapFacts => ({ exists: true, files })

const BASE = map(f("architecture.md", 1000, 100), f("contexts.md", 2000, 300), manager(50_000, 900))

describe("map facts", () => {
  it.each<[string, MapFacts, number, number | undefined]>([
    ["no map directory", NO_MAP, 0, undefined],
    ["an empty map directory", map(), 0, undefined],
    ["only manager.md", map(manager(10, 5)), 0, undefined],
    ["two files and manager.md", BASE, 3000, 300],
    ["all five", map(f("architecture.md", 1, 1), f("contexts.md", 2, 2), f("conventions.md", 3, 3), f("workflows.md", 4, 4), f("decisions.md", 5, 9)), 15, 9]
  ])("US-20 %s: size over the five files only, last written = latest mtime of the five", (_what, facts, bytes, written) => {
    expect(mapBytes(facts)).toBe(bytes)
    expect(lastWritten(facts)).toBe(written)
  })

  it.each<[string, MapFacts, boolean]>([
    ["nothing changed", BASE, false],
    ["manager.md changed only", map(f("architecture.md", 1000, 100), f("contexts.md", 2000, 300), manager(1, 1)), false],
    ["manager.md removed only", map(f("architecture.md", 1000, 100), f("contexts.md", 2000, 300)), false],
    ["a file created", map(...BASE.files, f("decisions.md", 10, 1000)), true],
    ["a file removed", map(f("architecture.md", 1000, 100), manager(50_000, 900)), true],
    ["a size changed", map(f("architecture.md", 1001, 100), f("contexts.md", 2000, 300), manager(50_000, 900)), true],
    ["an mtime changed, same size", map(f("architecture.md", 1000, 101), f("contexts.md", 2000, 300), manager(50_000, 900)), true],
    ["a file replaced by another (same count)", map(f("architecture.md", 1000, 100), f("workflows.md", 2000, 300)), true],
    ["the map directory removed", NO_MAP, true]
  ])("US-20 a run's map stamps differ: %s → %s", (_what, after, changed) => {
    expect(mapChanged(BASE, after)).toBe(changed)
  })

  it("US-20 from no map, any map file created is a change, manager.md alone is not; a map exists only once one of the five files does", () => {
    expect(mapChanged(NO_MAP, map(f("architecture.md", 1, 1)))).toBe(true)
    expect(mapChanged(NO_MAP, map(manager(1, 1)))).toBe(false)
    expect(mapChanged(NO_MAP, NO_MAP)).toBe(false)
    expect(stampOf({ exists: true, files: [manager(1, 1)] }).exists).toBe(false)
    expect(stampOf(map(f("decisions.md", 1, 1))).exists).toBe(true)
  })

  it.each<[number, boolean]>([
    [2999, true],
    [3000, false],
    [3001, false]
  ])("US-20 overBudget with a budget of %i bytes over 3000 bytes of map (manager.md's 50 000 not counted): %s", (max, over) => {
    expect(overBudget(BASE, max)).toBe(over)
  })
})
