/** The delegation policy and the price advisory inside the plugin (US-1, US-23). */
import { describe, expect, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { parsePriceSnapshot, type PriceTable } from "../../src/core/prices.js"
import { PriceSnapshotMemory } from "../../src/layers/cost/PriceSnapshotMemory.js"
import { readPriceSnapshot } from "../../src/layers/cost/PriceSnapshotFile.js"
import { bootsPerTest, settle, spawn, tmp, type Booted } from "./boot.js"

const FREE_POOL = { slots: [{ model: "zen/alpha", weight: 1 }, { model: "go/gamma", weight: 1 }, { model: "zen/beta", weight: 1 }] }
const PRICES = parsePriceSnapshot({ models: { "zen/alpha": { input: 0, output: 0 }, "go/gamma": { input: 0.5, output: 2 }, "zen/beta": { input: 0, output: 0, cache_read: 0 } } })!

const boots = bootsPerTest()
const start = (options: Record<string, unknown>, table: PriceTable | undefined | "bundled") =>
  boots.start(options, ["ok"], {}, 0, undefined, ["ok"], table === "bundled" ? {} : { prices: PriceSnapshotMemory(table) })

type Agents = Record<string, { model?: string; permission?: unknown } | null>
const configure = async (b: Booted, config: Record<string, unknown> = {}) => {
  await b.hooks.config!(config as never)
  await settle(b)
  return config.agent as Agents
}
const costWarnings = (b: Booted) => b.logs.filter((l) => l.level === "warn" && l.message.includes("costs money")).map((l) => l.message)

describe("delegation policy in the plugin (US-1)", () => {
  it("US-1 with a pool of free models, 12 spawns alternating explore and implement each run on a variant whose model is a slot model", async () => {
    const b = await start({ models: FREE_POOL }, PRICES)
    const agents = await configure(b)
    expect(agents["build"]?.permission).toBeDefined()
    const slotModels = FREE_POOL.slots.map((s) => s.model)
    const routed: Array<string> = []
    for (let i = 0; i < 12; i++) routed.push(await spawn(b, "ses_root", `call_${i}`, i % 2 === 0 ? "explore" : "implement"))
    expect(routed.every((v, i) => v.startsWith(i % 2 === 0 ? "explore-" : "implement-"))).toBe(true)
    for (const variant of routed) expect(slotModels).toContain(agents[variant]?.model)
  })

  it("US-1 the option delegate:false leaves build and plan to opencode", async () => {
    const b = await start({ models: FREE_POOL, delegate: false, contextMap: false }, PRICES)
    const agents = await configure(b)
    expect(agents["build"]).toBeUndefined()
    expect(agents["plan"]).toBeUndefined()
    expect(agents["explore-1"]?.model).toBe("zen/alpha")
    // with the context map on, opencode's build gets only the map's edit rules (SPEC §13): no prompt, no read or task rules
    const mapped = await configure(await start({ models: FREE_POOL, delegate: false }, PRICES))
    expect(Object.keys(mapped["build"] ?? {})).toEqual(["permission"])
    expect(Object.keys((mapped["build"] as { permission: object }).permission)).toEqual(["edit"])
    expect(mapped["plan"]).toBeUndefined()
  })
})

describe("price advisory (US-23)", () => {
  it("US-23 a slot the snapshot prices above zero: two config hook runs log exactly one warning, naming the model", async () => {
    const b = await start({ models: FREE_POOL }, PRICES)
    await configure(b)
    await configure(b)
    expect(costWarnings(b)).toEqual(["slot model go/gamma costs money (USD per 1M tokens: input 0.5, output 2); the pool is meant for free models"])
  })

  it("US-23 slots absent from the snapshot or priced at zero: no cost warning at boot", async () => {
    const b = await start({ models: { slots: [{ model: "zen/alpha" }, { model: "nobody/knows" }, { model: "zen/beta" }] } }, PRICES)
    await configure(b)
    expect(costWarnings(b)).toEqual([])
  })

  it("US-23 no readable snapshot: no warning, no error, and routing works", async () => {
    const dir = tmp("ocpool-prices-")
    const garbage = join(dir, "prices.json")
    writeFileSync(garbage, "{ not json")
    expect(readPriceSnapshot(garbage)).toBeUndefined()
    expect(readPriceSnapshot(join(dir, "missing.json"))).toBeUndefined()
    expect(readPriceSnapshot(dir)).toBeUndefined()
    const b = await start({ models: FREE_POOL }, readPriceSnapshot(garbage))
    await configure(b)
    expect(b.logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([])
    expect(await spawn(b, "ses_root", "call_1")).toBe("explore-1")
  })

  it("US-23 the live layer reads the bundled presets/prices.json: the shipped free pool draws no warning, a paid model one", async () => {
    const free = await start({}, "bundled")
    await configure(free)
    expect(costWarnings(free)).toEqual([])
    expect(free.logs.filter((l) => l.level === "error")).toEqual([])
    const paid = await start({ models: { slots: [{ model: "opencode/big-pickle" }, { model: "openrouter/z-ai/glm-4.5-air" }] } }, "bundled")
    await configure(paid)
    expect(costWarnings(paid)).toEqual([expect.stringMatching(/^slot model openrouter\/z-ai\/glm-4.5-air costs money/)])
  })

  it("US-23 with a priced slot the routes are the same as without the advisory", async () => {
    const withAdvice = await start({ models: FREE_POOL }, PRICES)
    const without = await start({ models: FREE_POOL }, undefined)
    const routes = async (b: Booted) => {
      await configure(b)
      const out: Array<string> = []
      for (let i = 0; i < 9; i++) out.push(await spawn(b, `ses_${i % 2}`, `call_${i}`, i % 3 === 0 ? "implement" : "explore"))
      return out
    }
    const a = await routes(withAdvice)
    expect(costWarnings(withAdvice)).toHaveLength(1)
    expect(await routes(without)).toEqual(a)
  })
})
