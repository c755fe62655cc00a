import { describe, expect, it } from "@effect/vitest"
import { describeSlots, parsePoolText, resolveMaxSlots, validateEntries } from "../../../src/core/pool/pool.js"

const usable = (r: ReturnType<typeof parsePoolText>) => {
  if (r._tag !== "Usable") throw new Error(`unusable: ${r.reason}`)
  return r
}

describe("pool files (SPEC §3.2-3.3)", () => {
  it("US-7 flat form: comments, blank lines, optional weight, extra text warned", () => {
    const r = usable(parsePoolText("# my pool\n\nzen/alpha 3  # main\n  go/gamma\nzen/beta 2 extra words\n"))
    expect(r.slots.map((s) => [s.index, s.model, s.provider, s.weight])).toEqual([
      [1, "zen/alpha", "zen", 3],
      [2, "go/gamma", "go", 1],
      [3, "zen/beta", "zen", 2]
    ])
    expect(r.warnings).toEqual(["line 5: extra text ignored"])
  })

  it("US-7 JSON form: $comment ignored, numeric strings, tier alias warned once per value", () => {
    const r = usable(
      parsePoolText(
        JSON.stringify({
          $comment: ["anything"],
          slots: [
            { model: " zen/alpha ", weight: "2.5" },
            { model: "go/gamma", tier: "primary" },
            { model: "go/delta", tier: "primary" },
            { model: "zen/beta", tier: "overflow" }
          ]
        })
      )
    )
    expect(r.slots.map((s) => [s.model, s.weight])).toEqual([
      ["zen/alpha", 2.5],
      ["go/gamma", 2],
      ["go/delta", 2],
      ["zen/beta", 1]
    ])
    expect(r.warnings).toHaveLength(2)
  })

  it("US-7 a paid model and a model id with further slashes are accepted; the provider is the text before the first slash", () => {
    const r = usable(parsePoolText("openai/gpt-5 1\nopenrouter/nvidia/x:free 1"))
    expect(r.slots.map((s) => [s.provider, s.model])).toEqual([
      ["openai", "openai/gpt-5"],
      ["openrouter", "openrouter/nvidia/x:free"]
    ])
  })

  it("US-7 6 valid slots with the default cap: two warnings name the cap 4 and the dropped models", () => {
    const r = usable(parsePoolText("a/1\na/2\na/3\na/4\na/5\na/6"))
    expect(r.slots).toHaveLength(4)
    expect(r.warnings).toEqual(["pool capped at 4 slots: dropped a/5", "pool capped at 4 slots: dropped a/6"])
  })

  it("US-7 maxSlots 6 keeps 6 slots; maxSlots 12 warns naming the option and keeps 4", () => {
    expect(usable(parsePoolText("a/1\na/2\na/3\na/4\na/5\na/6", 6)).slots).toHaveLength(6)
    const bad = resolveMaxSlots(12)
    expect(bad.maxSlots).toBe(4)
    expect(bad.warning).toContain("maxSlots")
    expect(resolveMaxSlots(1.5).maxSlots).toBe(4)
    expect(resolveMaxSlots(8)).toEqual({ maxSlots: 8 })
  })

  it("US-7 duplicates, bad weights and provider-less models: exactly 3 warnings, slots p/good-1 and q/good-2 (weight 1)", () => {
    const r = validateEntries(
      [{ model: "p/good-1" }, { model: "p/good-1" }, { model: "q/good-2", weight: "heavy" }, { model: "no-provider" }],
      4
    )
    expect(r._tag).toBe("Usable")
    if (r._tag !== "Usable") return
    expect(r.slots.map((s) => [s.model, s.weight])).toEqual([
      ["p/good-1", 1],
      ["q/good-2", 1]
    ])
    expect(r.warnings).toHaveLength(3)
    expect(r.warnings).toContain('slot 2 (q/good-2): weight heavy invalid, using 1')
  })

  it("US-7 weights outside (0,100] and odd numeric strings are invalid and become 1", () => {
    for (const w of [0, -1, 101, Number.POSITIVE_INFINITY, "1e3", "0x10", "", "2 ", " 2"]) {
      const r = validateEntries([{ model: "a/b", weight: w }], 4)
      if (r._tag !== "Usable") throw new Error("unusable")
      const expected = w === "2 " || w === " 2" ? 2 : 1
      expect(r.slots[0]!.weight).toBe(expected)
    }
    const exp = validateEntries([{ model: "a/b", weight: "1e1" }], 4)
    expect(exp._tag === "Usable" && exp.slots[0]!.weight).toBe(10)
  })

  it("US-7 unusable sources: invalid JSON, no slots array, empty slots, nothing valid", () => {
    expect(parsePoolText("{ nope")._tag).toBe("Unusable")
    expect(parsePoolText('{"slots": {}}')._tag).toBe("Unusable")
    expect(parsePoolText('{"slots": []}')._tag).toBe("Unusable")
    expect(parsePoolText("no-provider\n/x\ny/")._tag).toBe("Unusable")
    expect(parsePoolText("# only a comment\n")._tag).toBe("Unusable")
  })

  it("US-2 the log form of a slot table", () => {
    expect(describeSlots(usable(parsePoolText("zen/alpha 3\ngo/gamma")).slots)).toBe("1=zen/alpha w3, 2=go/gamma w1")
  })
})
