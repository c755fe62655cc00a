/**
 * `ocpool doctor`'s `models` check, the pure part (issue 33, item 12): each slot's provider and model
 * against opencode's model catalog and the user's config providers, and each provider's credentials.
 * `test/fixtures/models-catalog.json` is an excerpt of the catalog opencode 1.18.33 bundles (ids,
 * names, `env`, costs; the bundled preset's two OpenRouter models as whole entries), nothing added:
 * `qwen/qwen3-coder:free` is not in it, while the paid `qwen/qwen3-coder` is.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { editDistance } from "../../../src/core/editDistance.js"
import {
  authProvidersOf,
  checkSlotModels,
  closest,
  configProvidersOf,
  mergeConfigProviders,
  parseModelCatalog,
  type ConfigProvider,
  type ModelCatalog,
  type ModelCheckFacts
} from "../../../src/core/setup/modelCheck.js"
import type { Slot } from "../../../src/core/pool/pool.js"
import { BUILT_IN_SLOTS } from "../../../src/core/preset.js"

const catalog: ModelCatalog = parseModelCatalog(JSON.parse(readFileSync(new URL("../../fixtures/models-catalog.json", import.meta.url), "utf8")))!

const slots = (...models: ReadonlyArray<string>): ReadonlyArray<Slot> =>
  models.map((model, i) => ({ index: i + 1, model, provider: model.slice(0, model.indexOf("/")), weight: 1 }))

const facts = (over: Partial<ModelCheckFacts> = {}): ModelCheckFacts => ({
  catalog: { _tag: "Catalog", catalog, path: "/c/models.json" },
  configProviders: new Map(),
  authProviders: new Set(),
  setEnv: new Set(["OPENROUTER_API_KEY"]),
  ...over
})

const config = (text: string): ReadonlyMap<string, ConfigProvider> => configProvidersOf(text)!

describe("doctor's models check (issue 33, item 12)", () => {
  it("US-46 the bundled preset's free slots with an OpenRouter key: one ok, no key needed for opencode's free models", () => {
    const out = checkSlotModels(slots("opencode/big-pickle", "opencode/grok-code", "openrouter/qwen/qwen3.8-27b:free"), facts())
    expect(out).toEqual([{ status: "ok", detail: "3 slot models known to opencode (catalog /c/models.json); every provider has credentials or needs none" }])
  })

  it("US-46 every slot of the bundled preset is a model of opencode 1.18.33's catalog: free, with tool calling; only the OpenRouter key is asked for", () => {
    const preset = JSON.parse(readFileSync(new URL("../../../presets/free-tier.json", import.meta.url), "utf8")) as { slots: Array<{ model: string; weight: number }> }
    expect(preset.slots).toEqual(BUILT_IN_SLOTS)
    const models = preset.slots.map((s) => s.model)
    expect(checkSlotModels(slots(...models), facts())).toEqual([
      { status: "ok", detail: `${models.length} slot models known to opencode (catalog /c/models.json); every provider has credentials or needs none` }
    ])
    // without any key, no slot is an unknown model: the one finding is OpenRouter's missing key
    expect(checkSlotModels(slots(...models), facts({ setEnv: new Set() }))).toEqual([
      {
        status: "warn",
        detail:
          "openrouter (slots 3, 4): no credentials: none of OPENROUTER_API_KEY is set and opencode has no key for it (opencode auth login, or provider.openrouter.options.apiKey); opencode loads no openrouter model without one"
      }
    ])
    // what the catalog says of each: free, tool calling (a subagent greps and edits through tools), a long context
    const raw = JSON.parse(readFileSync(new URL("../../fixtures/models-catalog.json", import.meta.url), "utf8")) as Record<string, { models: Record<string, Record<string, unknown>> }>
    for (const model of models.filter((m) => m.startsWith("openrouter/"))) {
      const entry = raw.openrouter!.models[model.slice("openrouter/".length)]!
      expect(entry.cost).toEqual({ input: 0, output: 0 })
      expect(entry.tool_call).toBe(true)
      expect((entry.limit as { context: number }).context).toBeGreaterThanOrEqual(128_000)
    }
  })

  it("US-46 a typo'd model of a known provider warns with the closest free model as a suggestion", () => {
    const out = checkSlotModels(slots("opencode/big-pickle", "openrouter/laguna-s-21:free"), facts())
    expect(out).toEqual([
      {
        status: "warn",
        detail: "openrouter/laguna-s-21:free (slot 2): unknown model: openrouter has no model laguna-s-21:free in opencode's model catalog (did you mean openrouter/poolside/laguna-s-2.1:free?)"
      }
    ])
  })

  it("US-46 a model that says it is free is never matched with a paid one; nothing close is no suggestion", () => {
    // opencode 1.18.33 lists the paid qwen/qwen3-coder, within reach of a suggestion, and no qwen/qwen3-coder:free
    expect(catalog.get("openrouter")!.models.has("qwen/qwen3-coder")).toBe(true)
    const [w] = checkSlotModels(slots("openrouter/qwen/qwen3-coder:free"), facts())
    expect(w!.status).toBe("warn")
    expect(w!.detail).toContain("has no model qwen/qwen3-coder:free")
    expect(w!.detail).not.toContain("did you mean")
    // a paid id typo'd is matched with the paid model
    expect(checkSlotModels(slots("openrouter/qwen/qwen3-codre"), facts())[0]!.detail).toContain("(did you mean openrouter/qwen/qwen3-coder?)")
  })

  it("US-46 an unknown provider warns once for its slots, with the closest provider id", () => {
    const out = checkSlotModels(slots("openroutr/a", "openroutr/b", "opencode/big-pickle"), facts())
    expect(out).toEqual([
      {
        status: "warn",
        detail: "openroutr/a, openroutr/b (slots 1, 2): unknown provider openroutr: not in opencode's model catalog nor under provider in an opencode config (did you mean openrouter?)"
      }
    ])
  })

  it("US-46 a provider without credentials warns, naming only its env vars; auth.json, a config apiKey or {env:NAME} set count", () => {
    const none = facts({ setEnv: new Set(["PATH"]) })
    expect(checkSlotModels(slots("opencode/big-pickle", "openrouter/qwen/qwen3.8-27b:free", "openrouter/z-ai/glm-4.5-air"), none)).toEqual([
      {
        status: "warn",
        detail:
          "openrouter (slots 2, 3): no credentials: none of OPENROUTER_API_KEY is set and opencode has no key for it (opencode auth login, or provider.openrouter.options.apiKey); opencode loads no openrouter model without one"
      }
    ])
    const two = slots("openrouter/qwen/qwen3.8-27b:free")
    expect(checkSlotModels(two, { ...none, authProviders: authProvidersOf({ openrouter: { type: "api", key: "sk-x" } }) })[0]!.status).toBe("ok")
    expect(checkSlotModels(two, { ...none, configProviders: config(`{"provider":{"openrouter":{"options":{"apiKey":"sk-x"}}}}`) })[0]!.status).toBe("ok")
    const viaEnv = config(`{"provider":{"openrouter":{"options":{"apiKey":"{env:MY_OR_KEY}"}}}}`)
    expect(checkSlotModels(two, { ...none, configProviders: viaEnv })[0]!.status).toBe("warn")
    expect(checkSlotModels(two, { ...none, configProviders: viaEnv, setEnv: new Set(["MY_OR_KEY"]) })[0]!.status).toBe("ok")
  })

  it("US-46 opencode's own provider needs a key only for a model whose input cost is not 0; an unreadable auth.json is named", () => {
    const none = facts({ setEnv: new Set(), authProblem: "permission denied" })
    expect(checkSlotModels(slots("opencode/big-pickle", "opencode/glm-5-free"), none)[0]!.status).toBe("ok")
    expect(checkSlotModels(slots("opencode/big-pickle", "opencode/claude-haiku-4-5"), none)).toEqual([
      {
        status: "warn",
        detail:
          "opencode (slot 2): no credentials: none of OPENCODE_API_KEY is set and opencode has no key for it (opencode auth login, or provider.opencode.options.apiKey); opencode loads no paid opencode model without one; auth.json not read: permission denied"
      }
    ])
  })

  it("US-46 a provider of the user's config: known without a catalog entry, its listed models known, credentials not judged", () => {
    const local = config(`// mine
      { "provider": { "lan": { "npm": "@ai-sdk/openai-compatible", "models": { "coder-7b": {}, }, }, "anything": {} } }`)
    expect(checkSlotModels(slots("lan/coder-7b", "anything/whatever"), facts({ configProviders: local }))[0]!.status).toBe("ok")
    expect(checkSlotModels(slots("lan/codr-7b"), facts({ configProviders: local }))).toEqual([
      { status: "warn", detail: "lan/codr-7b (slot 1): unknown model: lan has no model codr-7b in your opencode config (did you mean lan/coder-7b?)" }
    ])
    // a catalog provider's models extended by the config
    const extra = config(`{"provider":{"openrouter":{"models":{"me/private:free":{}}}}}`)
    expect(checkSlotModels(slots("openrouter/me/private:free"), facts({ configProviders: extra }))[0]!.status).toBe("ok")
    expect(checkSlotModels(slots("openrouter/me/privat:free"), facts({ configProviders: extra }))[0]!.detail).toContain(
      "in opencode's model catalog nor your opencode config (did you mean openrouter/me/private:free?)"
    )
  })

  it("US-46 configs merge as opencode merges them: models add up, a later apiKey wins; an invalid config gives nothing", () => {
    const merged = mergeConfigProviders([config(`{"provider":{"x":{"models":{"a":{}}}}}`), config(`{"provider":{"x":{"models":{"b":{}},"options":{"apiKey":"k"}}}}`)])
    expect([...merged.get("x")!.models!]).toEqual(["a", "b"])
    expect(merged.get("x")!.apiKey).toEqual({ literal: true, env: [] })
    expect(configProvidersOf(`{"provider": {`)).toBeUndefined()
    expect(configProvidersOf(`{"plugin": []}`)!.size).toBe(0)
  })

  it("US-46 without a usable catalog the check says it could not run, once, as a warning", () => {
    const out = checkSlotModels(slots("openrouter/qwen3-codr:free", "nope/x"), facts({ catalog: { _tag: "Unavailable", reason: "no model catalog at /c/models.json" } }))
    expect(out).toEqual([{ status: "warn", detail: "slot models not checked: no model catalog at /c/models.json" }])
    expect(parseModelCatalog({ models: [] })).toBeUndefined()
    expect(parseModelCatalog([1, 2])).toBeUndefined()
  })

  it("US-46 auth.json: only the ids of entries opencode reads, never a value", () => {
    expect([...authProvidersOf({ a: { type: "api", key: "s" }, b: { type: "oauth" }, c: { type: "other" }, d: "x" })]).toEqual(["a", "b"])
    expect(authProvidersOf(null).size).toBe(0)
  })

  it("US-46 edit distance counts a swap once and stops past its bound; case is ignored", () => {
    expect(editDistance("big-pickel", "big-pickle", 3)).toBe(1)
    expect(editDistance("abc", "abcdefgh", 2)).toBe(3)
    expect(closest("Big-Pickle", ["big-pickle", "grok-code"])).toBe("big-pickle")
    expect(closest("qwen3-coder", ["qwen/qwen3-coder", "qwen/qwen3-coder-plus"])).toBe("qwen/qwen3-coder")
    expect(closest("zzz", ["big-pickle"])).toBeUndefined()
  })
})
