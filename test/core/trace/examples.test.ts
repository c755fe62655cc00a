import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { formatDecision } from "../../../src/core/trace/format.js"
import { replayText } from "../../../src/core/trace/replay.js"
import { pool, T0, trace } from "../../helpers.js"

const here = (dir: string) => new URL(`../../fixtures/${dir}/`, import.meta.url)
const pairs = (dir: string) =>
  readdirSync(here(dir))
    .filter((f) => f.endsWith(".jsonl") && !f.endsWith(".decisions.jsonl"))
    .map((f) => ({
      name: f,
      input: readFileSync(new URL(f, here(dir)), "utf8"),
      expected: readFileSync(new URL(f.replace(/\.jsonl$/, ".decisions.jsonl"), here(dir)), "utf8")
    }))

const output = (text: string) => {
  const r = replayText(text)
  expect(r.error).toBeUndefined()
  return r.decisions.map((d) => `${formatDecision(d)}\n`).join("")
}

describe("replay of the worked examples and recorded traces", () => {
  const examples = pairs("trace-md")
  it("US-45 all six TRACE.md §5 examples are present, and the permit example of issue 21", () => {
    expect(examples.map((e) => e.name).sort()).toEqual(
      ["context-limit.jsonl", "outage-then-limit.jsonl", "permits.jsonl", "provider-wide.jsonl", "release-reopens.jsonl", "retry-after.jsonl", "two-pass.jsonl"]
    )
  })

  for (const ex of examples) {
    it(`US-45 TRACE.md example ${ex.name} replays byte for byte`, () => {
      expect(output(ex.input)).toBe(ex.expected)
    })
  }

  for (const rec of pairs("traces")) {
    it(`US-45 recorded trace ${rec.name} reproduces its checked-in decisions`, () => {
      expect(output(rec.input)).toBe(rec.expected)
    })
  }

  it("US-45 replaying one trace twice gives identical output", () => {
    for (const ex of [...examples, ...pairs("traces")]) expect(output(ex.input)).toBe(output(ex.input))
  })
})

describe("invalid traces (TRACE.md §1, §6)", () => {
  const P = pool(T0, ["zen/a", 1])
  const bad = (text: string) => replayText(text).error

  it("US-45 a decreasing at on line 7 names line 7", () => {
    const body = [P, ...[1, 2, 3, 4, 5].map((i) => ({ at: T0 + i * 10, type: "status" })), { at: T0 + 5, type: "status" }]
    expect(bad(trace(...body))).toEqual({ line: 7, message: `"at" decreased: ${T0 + 5} after ${T0 + 50}` })
  })

  it("US-45 a spawn or status before any pool line is rejected naming the line; other types are fine there", () => {
    expect(bad(trace({ at: T0, type: "spawn", claim: "c", base: "explore" }))).toMatchObject({ line: 1, message: "spawn before the first pool line" })
    expect(bad(trace({ at: T0, type: "sweep" }, { at: T0, type: "activity", session: "s" }, { at: T0, type: "status" }))).toMatchObject({ line: 3 })
    expect(bad(trace({ at: T0, type: "limit", text: "x" }, { at: T0, type: "release", claim: "c" }, { at: T0, type: "bind", claim: "c", session: "s" }))).toBeUndefined()
  })

  it("US-45 invalid JSON, an unknown type, a missing field and a wrongly typed field each name their line", () => {
    expect(bad(`${JSON.stringify(P)}\n{nope\n`)).toMatchObject({ line: 2, message: expect.stringContaining("invalid JSON") })
    expect(bad(trace(P, { at: T0, type: "teleport" }))).toMatchObject({ line: 2, message: 'unknown type "teleport"' })
    expect(bad(trace(P, { at: T0, type: "spawn", base: "explore" }))).toMatchObject({ line: 2, message: 'missing required field "claim"' })
    expect(bad(trace(P, { at: T0, type: "release", claim: 7 }))).toMatchObject({ line: 2, message: 'field "claim" must be a string' })
    expect(bad(trace(P, { at: T0, type: "limit", text: "x", status: "429" }))).toMatchObject({ line: 2, message: 'field "status" must be a number' })
    expect(bad(trace(P, { at: T0, type: "release", claim: "c", ok: "yes" }))).toMatchObject({ line: 2, message: 'field "ok" must be a boolean' })
    expect(bad(trace(P, { at: T0, type: "sweep", abort: "maybe" }))).toMatchObject({ line: 2, message: 'field "abort" must be "ok", "fail" or "pending"' })
    expect(bad(trace(P, { at: T0 + 0.5, type: "status" }))).toMatchObject({ line: 2, message: expect.stringContaining('"at"') })
    expect(bad(trace(P, { type: "status" }))).toMatchObject({ line: 2, message: 'missing required field "at"' })
    expect(bad(trace({ at: T0, type: "pool", slots: "zen/a" }))).toMatchObject({ line: 1, message: 'field "slots" must be an array' })
    expect(bad(trace({ at: T0, type: "pool", slots: [{ model: "nope" }] }))).toMatchObject({ line: 1, message: expect.stringContaining("keeps no slot") })
  })

  it("US-45 blank and whitespace-only lines are skipped but counted in line numbers; unknown fields are ignored", () => {
    const r = replayText(`${JSON.stringify(P)}\n\n   \t\n${JSON.stringify({ at: T0, type: "status", extra: { any: 1 } })}\n{bad\n`)
    expect(r.decisions).toHaveLength(1)
    expect(r.error?.line).toBe(5)
  })

  it("US-45 pool lines: trimmed models, numeric-string weights, maxSlots on its own line only, warnings reported", () => {
    const r = replayText(
      trace(
        { at: T0, type: "pool", maxSlots: 2, slots: [{ model: " zen/a ", weight: "2" }, { model: "zen/b" }, { model: "zen/c" }] },
        { at: T0, type: "status" },
        { at: T0, type: "pool", slots: [{ model: "zen/a" }, { model: "zen/b" }, { model: "zen/c" }], maxSlots: 99 },
        { at: T0, type: "status" }
      )
    )
    expect(r.error).toBeUndefined()
    const [first, second] = r.decisions
    expect(first).toMatchObject({ type: "status", slots: [{ model: "zen/a", weight: 2 }, { model: "zen/b" }] })
    expect(second).toMatchObject({ type: "status" })
    expect(second?.type === "status" && second.slots.length).toBe(3)
    expect(r.warnings).toEqual(["pool capped at 2 slots: dropped zen/c", 'option maxSlots 99 invalid (an integer 1-8), using 4'])
  })

  it("US-45 --pool slots are applied at the first line's at, before it; a later pool line replaces them", () => {
    const r = replayText(trace({ at: T0, type: "spawn", claim: "c", base: "explore" }, pool(T0 + 1, ["go/x", 1]), { at: T0 + 2, type: "status" }), {
      pool: [{ index: 1, model: "zen/p", provider: "zen", weight: 1 }]
    })
    expect(r.error).toBeUndefined()
    expect(r.decisions[0]).toMatchObject({ type: "route", model: "zen/p" })
    expect(r.decisions[1]).toMatchObject({ type: "status", slots: [{ model: "go/x", load: 0 }] })
  })
})
