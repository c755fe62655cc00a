import { describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { resolvePool } from "../../src/core/source.js"
import { gatherSources } from "../../src/layers/pool/PoolConfigFile.js"

const tmp = () => mkdtempSync(join(tmpdir(), "ocpool-source-"))

describe("pool source chain (SPEC §3.1)", () => {
  it("US-7 the first usable source wins; each unusable one warns and falls through", () => {
    const r = resolvePool(
      [
        { kind: "object", origin: "plugin options", value: { slots: [] } },
        { kind: "unreadable", origin: "/x/pool.txt", reason: "EACCES", missing: false },
        { kind: "file", origin: "/cfg/pool.txt", text: "nope\n" },
        { kind: "file", origin: "presets/free-tier.json", text: '{"slots":[{"model":"zen/a","weight":2}]}' }
      ],
      4
    )
    expect(r.origin).toBe("presets/free-tier.json")
    expect(r.slots.map((s) => s.model)).toEqual(["zen/a"])
    expect(r.warnings.filter((w) => w.includes("falling through"))).toHaveLength(3)
  })

  it("US-7 an absent config-dir file is silent; with nothing usable the built-in fallback routes", () => {
    const r = resolvePool([{ kind: "unreadable", origin: "/cfg/pool.txt", reason: "ENOENT", missing: true }], 4)
    expect(r.origin).toBe("built-in")
    expect(r.warnings).toEqual([])
    expect(r.slots.length).toBeGreaterThan(0)
  })

  it("US-7 pool.txt wins over pool.json with one warning; an explicit modelsFile comes before the config dir", () => {
    const config = tmp()
    const dir = join(config, "opencode-pool")
    mkdirSync(dir)
    writeFileSync(join(dir, "pool.txt"), "go/txt\n")
    writeFileSync(join(dir, "pool.json"), '{"slots":[{"model":"go/json"}]}')
    const project = tmp()
    writeFileSync(join(project, "mine.txt"), "zen/mine 2\n")
    const env = { ...process.env, XDG_CONFIG_HOME: config }
    const withFile = gatherSources({ models: undefined, modelsFile: "mine.txt", maxSlots: 4, directory: project }, env)
    expect(resolvePool(withFile.sources, 4).origin).toBe(join(project, "mine.txt"))
    const plain = gatherSources({ models: undefined, modelsFile: undefined, maxSlots: 4, directory: project }, env)
    expect(plain.notes).toEqual([`both ${join(dir, "pool.txt")} and ${join(dir, "pool.json")} exist; ${join(dir, "pool.json")} is ignored`])
    expect(resolvePool(plain.sources, 4).slots.map((s) => s.model)).toEqual(["go/txt"])
    const missing = gatherSources({ models: undefined, modelsFile: "absent.txt", maxSlots: 4, directory: project }, env)
    expect(resolvePool(missing.sources, 4).warnings.some((w) => w.includes("absent.txt") && w.includes("no such file or directory"))).toBe(true)
  })
})
