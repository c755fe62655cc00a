import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { heavyOf } from "../../../src/core/permits/heavy.js"
import { capacityOf, parsePermitSettings } from "../../../src/core/permits/settings.js"

const parse = (options: Record<string, unknown> | undefined, env: Record<string, string | undefined> = {}) => parsePermitSettings(options, env)

describe("permit settings: budgets", () => {
  it("US-51 no options: one budget heavy with capacity auto, gating on with the built-in patterns", () => {
    const s = parse(undefined)
    expect(s.permits).toEqual([{ name: "heavy", capacity: "auto", source: "default" }])
    expect(s.warnings).toEqual([])
    expect(s.heavy).not.toBe(false)
    expect(s.heavy && heavyOf("npm test", s.heavy)).toEqual({ budget: "heavy", weight: 1, matched: "npm test" })
  })

  it("US-51 permits: heavy N or auto, other budgets with a number or auto, in the order given", () => {
    expect(parse({ permits: { gpu: 1, heavy: 3, network: "auto" } }).permits).toEqual([
      { name: "heavy", capacity: 3, source: "option" },
      { name: "gpu", capacity: 1, source: "option" },
      { name: "network", capacity: "auto", source: "option" }
    ])
    expect(parse({ permits: { heavy: "auto" } }).permits).toEqual([{ name: "heavy", capacity: "auto", source: "option" }])
    expect(parse({ permits: { heavy: 1024 } }).permits[0]!.capacity).toBe(1024)
  })

  it("US-51 a bad capacity or budget name: one warning each, the entry ignored (heavy falls back to auto)", () => {
    const table: ReadonlyArray<readonly [unknown, string]> = [
      [0, "permits.heavy 0 invalid"],
      [1025, "permits.heavy 1025 invalid"],
      [1.5, "permits.heavy 1.5 invalid"],
      [-2, "permits.heavy -2 invalid"],
      ["3", `permits.heavy "3" invalid`],
      [null, "permits.heavy null invalid"]
    ]
    for (const [value, warning] of table) {
      const s = parse({ permits: { heavy: value } })
      expect(s.permits).toEqual([{ name: "heavy", capacity: "auto", source: "default" }])
      expect(s.warnings).toHaveLength(1)
      expect(s.warnings[0]).toContain(warning)
    }
    const s = parse({ permits: { GPU: 1, "9lives": 2, ["x".repeat(33)]: 1, net: "many", ok_1: 2 } })
    expect(s.permits.map((p) => p.name)).toEqual(["heavy", "ok_1"])
    expect(s.warnings).toHaveLength(4)
    expect(s.warnings.filter((w) => w.includes("budget name"))).toHaveLength(3)
    expect(s.warnings.some((w) => w.includes("permits.net") && w.includes("ignored"))).toBe(true)
    expect(parse({ permits: [2] }).warnings).toEqual([`option permits must be an object like { "heavy": 2 }; using heavy: auto`])
  })

  it("US-51 OCPOOL_PERMITS=N overrides heavy; a bad value is one warning and ignored", () => {
    expect(parse({ permits: { heavy: 4 } }, { OCPOOL_PERMITS: "2" }).permits[0]).toEqual({ name: "heavy", capacity: 2, source: "env" })
    expect(parse(undefined, { OCPOOL_PERMITS: " auto " }).permits[0]).toEqual({ name: "heavy", capacity: "auto", source: "env" })
    expect(parse(undefined, { OCPOOL_PERMITS: "" })).toMatchObject({ permits: [{ source: "default" }], warnings: [] })
    for (const bad of ["0", "two", "1.5", "2000", "-1"]) {
      const s = parse({ permits: { heavy: 4 } }, { OCPOOL_PERMITS: bad })
      expect(s.permits[0]).toEqual({ name: "heavy", capacity: 4, source: "option" })
      expect(s.warnings).toEqual([`OCPOOL_PERMITS ${JSON.stringify(bad)} invalid (a whole number 1-1024 or "auto"); ignored`])
    }
  })

  it("US-51 capacityOf resolves auto from the effective CPUs, and says how", () => {
    const facts = { cpus: 4, online: 8, source: "cgroup v2 cpu.max 400000 100000" }
    expect(capacityOf({ name: "heavy", capacity: "auto", source: "default" }, facts)).toEqual({ capacity: 2, source: "auto: 4 CPUs (cgroup v2 cpu.max 400000 100000), halved → 2" })
    expect(capacityOf({ name: "heavy", capacity: "auto", source: "default" }, { cpus: 1.5, online: 8, source: "x" }).capacity).toBe(1)
    expect(capacityOf({ name: "heavy", capacity: 3, source: "option" }, facts)).toEqual({ capacity: 3, source: "option" })
    expect(capacityOf({ name: "heavy", capacity: 5, source: "env" }, facts)).toEqual({ capacity: 5, source: "OCPOOL_PERMITS" })
  })
})

describe("permit settings: heavyCommands", () => {
  it("US-51 heavyCommands: false turns gating off; true or absent keeps the built-ins", () => {
    expect(parse({ heavyCommands: false }).heavy).toBe(false)
    expect(parse({ heavyCommands: true })).toMatchObject({ heavy: { patterns: [], ignore: [] }, warnings: [] })
    const s = parse({ heavyCommands: "yes" })
    expect(s.heavy).toEqual({ patterns: [], ignore: [] })
    expect(s.warnings).toHaveLength(1)
  })

  it("US-51 valid patterns and ignores are compiled in order with their weight and budget", () => {
    const s = parse({
      permits: { gpu: 1 },
      heavyCommands: { patterns: [{ regex: "^train\\.py", weight: 2, budget: "gpu" }, { regex: "^./e2e" }], ignore: ["^make help"] }
    })
    expect(s.warnings).toEqual([])
    const rules = s.heavy
    if (rules === false) throw new Error("gating off")
    expect(rules.patterns.map((p) => [p.regex.source, p.weight, p.budget])).toEqual([
      ["^train\\.py", 2, "gpu"],
      ["^.\\/e2e", 1, "heavy"]
    ])
    expect(heavyOf("python x; train.py --epochs 3", rules)).toEqual({ budget: "gpu", weight: 2, matched: "train.py --epochs 3" })
    expect(heavyOf("make help", rules)).toBeUndefined()
  })

  it("US-51 each bad entry: exactly one warning naming it, and it is skipped", () => {
    const s = parse({
      permits: { gpu: 1 },
      heavyCommands: {
        patterns: [
          { regex: "^ok" },
          "make",
          { regex: "(unclosed", weight: 0, budget: "nope" },
          { regex: "^w", weight: 1.5 },
          { regex: "^b", budget: "nope" },
          { regex: "x".repeat(501) },
          { regex: "" },
          { regex: "^fine", weight: 3, budget: "gpu" }
        ],
        ignore: ["^ok", "[", 7]
      }
    })
    expect(s.warnings).toHaveLength(8)
    const at = (prefix: string) => s.warnings.filter((w) => w.startsWith(prefix))
    expect(at("heavyCommands.patterns[1]:")).toHaveLength(1)
    expect(at("heavyCommands.patterns[2].regex:")).toHaveLength(1)
    expect(at("heavyCommands.patterns[2]")).toHaveLength(1)
    expect(at("heavyCommands.patterns[3].weight:")).toHaveLength(1)
    expect(at("heavyCommands.patterns[4].budget:")[0]).toContain("heavy, gpu")
    expect(at("heavyCommands.patterns[5].regex:")[0]).toContain("longer than 500")
    expect(at("heavyCommands.patterns[6].regex:")).toHaveLength(1)
    expect(at("heavyCommands.ignore[1]:")).toHaveLength(1)
    expect(at("heavyCommands.ignore[2]:")).toHaveLength(1)
    const rules = s.heavy
    if (rules === false) throw new Error("gating off")
    expect(rules.patterns.map((p) => p.regex.source)).toEqual(["^ok", "^fine"])
    expect(rules.ignore.map((r) => r.source)).toEqual(["^ok"])
    // 500 characters is still accepted
    expect(parse({ heavyCommands: { patterns: [{ regex: "x".repeat(500) }] } }).warnings).toEqual([])
  })

  it("US-51 unknown keys: one warning each, the rest still read", () => {
    const s = parse({ heavyCommands: { patterns: [{ regex: "^a", wieght: 2, note: "x" }], ignroe: [], extra: 1 } })
    expect(s.warnings).toEqual([
      "heavyCommands.ignroe: unknown key (patterns, ignore); ignored",
      "heavyCommands.extra: unknown key (patterns, ignore); ignored",
      "heavyCommands.patterns[0].wieght: unknown key (regex, weight, budget); ignored",
      "heavyCommands.patterns[0].note: unknown key (regex, weight, budget); ignored"
    ])
    expect(s.heavy && s.heavy.patterns).toHaveLength(1)
    expect(parse({ heavyCommands: { patterns: "make" } }).warnings).toHaveLength(1)
    expect(parse({ heavyCommands: { ignore: "make" } }).warnings).toHaveLength(1)
  })

  it.prop(
    "US-51 any option values and env: budgets with heavy first, each capacity auto or 1-1024, never a throw",
    [fc.anything(), fc.anything(), fc.option(fc.string(), { nil: undefined })],
    ([permits, heavyCommands, env]) => {
      const s = parse({ permits, heavyCommands }, { OCPOOL_PERMITS: env })
      expect(s.permits[0]!.name).toBe("heavy")
      for (const p of s.permits) expect(p.capacity === "auto" || (Number.isInteger(p.capacity) && p.capacity >= 1 && p.capacity <= 1024)).toBe(true)
      expect(new Set(s.permits.map((p) => p.name)).size).toBe(s.permits.length)
    }
  )
})
