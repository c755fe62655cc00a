import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { injectConfig } from "../../src/core/inject.js"
import { parseSettings } from "../../src/core/options.js"
import { parsePoolText, validateEntries, type Slot } from "../../src/core/pool/pool.js"
import { BUILT_IN_SLOTS } from "../../src/core/preset.js"

const slots = (text: string, max = 4): ReadonlyArray<Slot> => {
  const r = parsePoolText(text, max)
  if (r._tag !== "Usable") throw new Error(r.reason)
  return r.slots
}
const POOL = slots("zen/alpha 2\ngo/gamma 1\n")
type Agents = Record<string, Record<string, unknown> | null>

describe("config injection (SPEC §4)", () => {
  it("US-15 a config with only the plugin line gets the three bases, their variants and the delegating build and plan", () => {
    const { config, info } = injectConfig({ plugin: ["opencode-pool"] }, POOL, "presets/free-tier.json")
    const agents = config.agent as Agents
    // `general` carries only the context map's edit rules (SPEC §13)
    expect(Object.keys(agents).sort()).toEqual(["build", "context", "context-1", "context-2", "explore", "explore-1", "explore-2", "general", "implement", "implement-1", "implement-2", "plan"])
    expect(Object.keys(injectConfig({ plugin: ["opencode-pool"] }, POOL, "x", { contextMap: false }).config.agent as Agents).sort()).toEqual(
      ["build", "context", "context-1", "context-2", "explore", "explore-1", "explore-2", "implement", "implement-1", "implement-2", "plan"]
    )
    expect(agents["explore-2"]).toMatchObject({ hidden: true, mode: "subagent", model: "go/gamma" })
    expect(agents["explore"]).toMatchObject({ mode: "subagent" })
    expect(agents["explore"]!.model).toBeUndefined()
    expect(info).toBe("bound 2 slots from presets/free-tier.json: 1=zen/alpha w2, 2=go/gamma w1")
  })

  it("US-2 a user config pinning explore-1 to another model gets slot 1's model and one warning naming both", () => {
    const { config, warnings } = injectConfig({ agent: { "explore-1": { model: "other/model", prompt: "mine" } } }, POOL, "x")
    expect((config.agent as Agents)["explore-1"]).toEqual({ model: "zen/alpha", prompt: "mine" })
    expect(warnings).toEqual(["agent explore-1 pins model other/model; the pool binds it to slot 1's zen/alpha"])
  })

  it("US-2 two boots that differ only in their pool bind their own slot-1 model and inject identical prompts", () => {
    const a = injectConfig({}, slots("zen/alpha"), "a").config.agent as Agents
    const b = injectConfig({}, slots("go/gamma"), "b").config.agent as Agents
    expect(a["explore-1"]!.model).toBe("zen/alpha")
    expect(b["explore-1"]!.model).toBe("go/gamma")
    for (const name of ["explore", "implement", "context"]) expect(a[name]!.prompt).toBe(b[name]!.prompt)
  })

  it("US-7 a whitelist gets the slot's model id appended once, however often the hook runs; a block without one is unchanged", () => {
    const pool = slots("openrouter/nvidia/x:free\nzen/alpha")
    const input = { provider: { openrouter: { whitelist: ["a"] }, zen: { options: { apiKey: "k" } } } }
    const once = injectConfig(input, pool, "x").config
    const twice = injectConfig(once, pool, "x").config
    expect((twice.provider as Record<string, { whitelist?: Array<string> }>).openrouter!.whitelist).toEqual(["a", "nvidia/x:free"])
    expect((twice.provider as Record<string, unknown>).zen).toEqual({ options: { apiKey: "k" } })
    expect(input.provider.openrouter.whitelist).toEqual(["a"])
  })

  it("US-7 a blacklist holding a slot's id warns", () => {
    expect(injectConfig({ provider: { zen: { blacklist: ["alpha"] } } }, POOL, "x").warnings).toEqual(["provider zen blacklists alpha, which slot 1 uses"])
  })

  it("US-7 six valid slots under the default cap define explore-1..4 and no explore-5", () => {
    const agents = injectConfig({}, slots("a/1\na/2\na/3\na/4\na/5\na/6"), "x").config.agent as Agents
    expect(agents["explore-4"]).toBeDefined()
    expect(agents["explore-5"]).toBeUndefined()
  })

  it("US-7 maxSlots 6 with 6 slots defines explore-6", () => {
    const six = slots("a/1\na/2\na/3\na/4\na/5\na/6", 6)
    expect((injectConfig({}, six, "x").config.agent as Agents)["explore-6"]).toMatchObject({ model: "a/6" })
  })

  it("US-16 a user's explore (own prompt and permissions) stays deep-equal and implement is still added; its variants copy it", () => {
    const mine = { mode: "subagent", prompt: "my explore", permission: { bash: "deny" } }
    const { config } = injectConfig({ agent: { explore: structuredClone(mine) } }, POOL, "x")
    const agents = config.agent as Agents
    expect(agents.explore).toEqual(mine)
    expect(agents.implement).toBeDefined()
    expect(agents["explore-1"]).toMatchObject({ prompt: "my explore", permission: { bash: "deny" }, hidden: true, model: "zen/alpha" })
  })

  it("US-16 unrelated keys survive a JSON round trip unchanged; a null agent stays null", () => {
    const input = {
      theme: "dark",
      mcp: { x: { type: "local", command: ["a"] } },
      permission: { edit: "ask" },
      keybind: { leader: "ctrl+x" },
      instructions: ["AGENTS.md"],
      agent: { mine: { prompt: "p" }, context: null }
    }
    const out = JSON.parse(JSON.stringify(injectConfig(structuredClone(input), POOL, "x").config)) as typeof input
    for (const key of ["theme", "mcp", "permission", "keybind", "instructions"] as const) expect(out[key]).toEqual(input[key])
    expect(out.agent.mine).toEqual({ prompt: "p" })
    expect(out.agent.context).toBeNull()
  })

  it("US-16 running the hook twice, or in two fresh boots, gives identical configs", () => {
    const input = { agent: { explore: { prompt: "x" } }, provider: { zen: { whitelist: [] } } }
    const first = injectConfig(structuredClone(input), POOL, "x").config
    const again = injectConfig(first, POOL, "x").config
    const fresh = injectConfig(structuredClone(input), POOL, "x").config
    expect(again).toEqual(first)
    expect(fresh).toEqual(first)
  })

  it("US-17 options {}, {enabled:true} and {enabled:\"false\"} give identical configs (only the literal false disables)", () => {
    const configs = [{}, { enabled: true }, { enabled: "false" }].map((o) => {
      const { settings } = parseSettings(o, {})
      expect(settings.enabled).toBe(true)
      return injectConfig({}, POOL, "x").config
    })
    expect(configs[1]).toEqual(configs[0])
    expect(configs[2]).toEqual(configs[0])
    expect(parseSettings({ enabled: false }, {}).settings.enabled).toBe(false)
    expect(parseSettings({}, { OCPOOL_DISABLE: " ON " }).settings.enabled).toBe(false)
    expect(parseSettings({}, { OCPOOL_DISABLE: "0" }).settings.enabled).toBe(true)
  })

  it("US-15 the compiled-in fallback equals the bundled preset, which lists at most 4 models on at least two providers", () => {
    const preset = JSON.parse(readFileSync(new URL("../../presets/free-tier.json", import.meta.url), "utf8")) as { slots: Array<{ model: string; weight: number }> }
    expect(BUILT_IN_SLOTS).toEqual(preset.slots)
    const v = validateEntries(preset.slots, 4)
    expect(v._tag === "Usable" && v.slots.length).toBeLessThanOrEqual(4)
    expect(new Set(preset.slots.map((s) => s.model.split("/")[0])).size).toBeGreaterThanOrEqual(2)
  })

  it("US-15 the manifest: @opencode-ai/plugin is a peer dependency only, ocpool is declared, tests are not shipped", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
      bin: Record<string, string>
      files: Array<string>
    }
    expect(pkg.peerDependencies["@opencode-ai/plugin"]).toBeDefined()
    expect(pkg.dependencies["@opencode-ai/plugin"]).toBeUndefined()
    expect(pkg.bin.ocpool).toBe("bin/ocpool.js")
    expect(pkg.files.some((f) => f.startsWith("test"))).toBe(false)
  })

  it("US-7 option maxSlots 12 warns naming the option and keeps the default", () => {
    const { settings, warnings } = parseSettings({ maxSlots: 12, reapMs: "fast" }, {})
    expect(settings.maxSlots).toBe(4)
    expect(warnings.filter((w) => w.includes("maxSlots"))).toHaveLength(1)
    expect(warnings.some((w) => w.includes("reapMs"))).toBe(true)
    expect(settings.reapMs).toBe(30_000)
  })
})
