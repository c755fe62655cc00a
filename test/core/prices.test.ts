import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { readFileSync } from "node:fs"
import { costOf, costsMoney, formatUsd, lookupPrice, parseCatalog, parsePriceSnapshot, pricedSlotWarnings, priceOf } from "../../src/core/prices.js"
import { parsePoolText, type Slot } from "../../src/core/pool/pool.js"

const slots = (text: string): ReadonlyArray<Slot> => {
  const r = parsePoolText(text, 8)
  if (r._tag !== "Usable") throw new Error(r.reason)
  return r.slots
}
const table = parsePriceSnapshot({
  models: {
    "paid/model": { input: 3, output: 15, cache_read: 0.3 },
    "free/model": { input: 0, output: 0 },
    "broken/model": { input: "3", output: 15 }
  }
})!

describe("prices (US-23, US-3)", () => {
  it("US-23 a slot the snapshot prices above zero gets one advisory naming the model; free and absent slots get none", () => {
    const out = pricedSlotWarnings(slots("free/model\npaid/model\nother/model\npaid/model 2\n"), table)
    expect(out).toEqual([
      { model: "paid/model", line: "slot model paid/model costs money (USD per 1M tokens: input 3, output 15); the pool is meant for free models" }
    ])
  })

  it("US-23 a model already warned about is not warned about again", () => {
    expect(pricedSlotWarnings(slots("paid/model\n"), table, new Set(["paid/model"]))).toEqual([])
  })

  it("US-23 a snapshot that is not one parses to nothing; an entry without numeric input and output is skipped", () => {
    expect(parsePriceSnapshot([])).toBeUndefined()
    expect(parsePriceSnapshot({ models: 3 })).toBeUndefined()
    expect(table.has("broken/model")).toBe(false)
    expect(priceOf({ input: -1, output: 2 })).toBeUndefined()
  })

  it("US-23 the shipped presets/prices.json parses, and the bundled free pool has no priced slot", () => {
    const shipped = parsePriceSnapshot(JSON.parse(readFileSync(new URL("../../presets/prices.json", import.meta.url), "utf8")))!
    expect(shipped.size).toBeGreaterThan(1000)
    expect(shipped.get("opencode/big-pickle")).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })
    const preset = JSON.parse(readFileSync(new URL("../../presets/free-tier.json", import.meta.url), "utf8")) as { slots: Array<{ model: string }> }
    expect(pricedSlotWarnings(slots(preset.slots.map((s) => s.model).join("\n")), shipped)).toEqual([])
  })

  it("US-3 the catalog form (models.dev, OPENCODE_MODELS_PATH) prices provider/model; the first table that knows a model wins", () => {
    const catalog = parseCatalog({ fakeA: { models: { "pool-a": { cost: { input: 1, output: 2, cache_read: 0.5, cache_write: 4 } } } }, odd: 3 })!
    expect(catalog.get("fakeA/pool-a")).toEqual({ input: 1, output: 2, cacheRead: 0.5, cacheWrite: 4 })
    expect(lookupPrice([catalog, table], "paid/model")).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 0 })
    expect(lookupPrice([catalog, table], "nobody/knows")).toBeUndefined()
  })

  it("US-3 a model priced at zero costs $0.00 (free is a price, not unknown)", () => {
    const free = table.get("free/model")!
    expect(costsMoney(free)).toBe(false)
    expect(formatUsd(costOf(free, { input: 1e6, output: 1e6, reasoning: 0, cacheRead: 0, cacheWrite: 0 }))).toBe("$0.00")
  })

  it("US-3 cost is opencode's arithmetic: per 1M tokens, reasoning at the output rate, cache at the cache rates", () => {
    const p = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
    expect(costOf(p, { input: 1_000_000, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })).toBeCloseTo(3)
    expect(costOf(p, { input: 0, output: 500_000, reasoning: 500_000, cacheRead: 0, cacheWrite: 0 })).toBeCloseTo(15)
    expect(costOf(p, { input: 0, output: 0, reasoning: 0, cacheRead: 1_000_000, cacheWrite: 1_000_000 })).toBeCloseTo(4.05)
    expect(formatUsd(0.004)).toBe("$0.0040")
    expect(formatUsd(12.345)).toBe("$12.35")
  })

  it.prop("US-3 cost is additive over token counts and never negative", [fc.nat(1e7), fc.nat(1e7), fc.nat(1e7), fc.nat(1e7)], ([a, b, c, d]) => {
    const p = { input: 1.5, output: 6, cacheRead: 0.15, cacheWrite: 1.875 }
    const t1 = { input: a, output: b, reasoning: 0, cacheRead: c, cacheWrite: d }
    const t2 = { input: b, output: a, reasoning: c, cacheRead: 0, cacheWrite: 0 }
    const sum = { input: a + b, output: b + a, reasoning: c, cacheRead: c, cacheWrite: d }
    expect(costOf(p, sum)).toBeCloseTo(costOf(p, t1) + costOf(p, t2), 6)
    expect(costOf(p, t1)).toBeGreaterThanOrEqual(0)
  })
})
