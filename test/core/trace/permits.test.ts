/** Permit lines in spawn traces (issue 21, TRACE-FORMAT.md "Permit lines"): decoding, replay, output. */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { explainDecision, formatDecision } from "../../../src/core/trace/format.js"
import { decodeLine, InputError } from "../../../src/core/trace/input.js"
import { PERMIT_ENTRIES_MAX, PERMIT_STRING_MAX } from "../../../src/core/trace/permitInput.js"
import { replayText } from "../../../src/core/trace/replay.js"
import { pool, T0, trace } from "../../helpers.js"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/trace-md/${name}`, import.meta.url), "utf8")

const holder = { host: "box", pid: 4101, startToken: "92101", session: "ses_a", via: "plugin" }
const entry = (id: string, seq: number, over: Record<string, unknown> = {}) => ({
  id,
  token: `t-${id}`,
  budget: "heavy",
  weight: 1,
  reason: "npm test",
  holder,
  seq,
  requestedAt: T0,
  gone: false,
  ...over
})
const line = (over: Record<string, unknown> = {}) => ({ at: T0, type: "permit", op: { op: "settle" }, capacities: { heavy: 2 }, entries: [], ...over })

const error = (l: Record<string, unknown>): string => {
  const r = decodeLine(JSON.stringify(l))
  return r instanceof InputError ? r.message : "decoded"
}

describe("permit lines: the worked example", () => {
  it("US-51 permits.jsonl (budget 2, weights 1 and 2, a head-of-line block, a release, a gone holder) replays to its checked-in decisions", () => {
    const r = replayText(fixture("permits.jsonl"))
    expect(r.error).toBeUndefined()
    expect(r.decisions.map((d) => `${formatDecision(d)}\n`).join("")).toBe(fixture("permits.decisions.jsonl"))
    // the head-of-line block: p-3 (weight 1) would fit beside p-1 but waits behind p-2 (weight 2)
    expect(r.decisions.filter((d) => d.type === "permit" && d.act === "grant").map((d) => d.id)).toEqual(["p-1", "p-2", "p-3"])
  })

  it("US-51 every permit decision explains itself in one line naming its id", () => {
    const r = replayText(fixture("permits.jsonl"))
    for (const d of r.decisions) {
      const text = explainDecision(d)
      expect(text).not.toMatch(/\n/)
      expect(d.type === "permit" && text.startsWith(`permit ${d.id}: `)).toBe(true)
    }
    expect(r.decisions.map(explainDecision)).toContain("permit p-2: granted 2 units of heavy after waiting 4s; 1 request was ahead of it.")
  })
})

describe("permit lines: replay", () => {
  it("US-51 a permit line leaves the pool state as it was: the same spawns route the same with or without permit lines between them", () => {
    const spawns = [pool(T0, ["zen/a", 1], ["go/b", 1]), { at: T0 + 1, type: "spawn", claim: "c1", base: "explore" }, { at: T0 + 3, type: "spawn", claim: "c2", base: "explore" }, { at: T0 + 4, type: "status" }]
    const plain = replayText(trace(...spawns))
    const mixed = replayText(trace(spawns[0]!, spawns[1]!, line({ at: T0 + 2, op: { op: "request", entry: { ...entry("p", 0), seq: undefined, gone: undefined } } }), spawns[2]!, spawns[3]!))
    expect(mixed.error).toBeUndefined()
    const routes = (ds: typeof plain.decisions) => ds.filter((d) => d.type !== "permit").map(formatDecision)
    expect(routes(mixed.decisions)).toEqual(routes(plain.decisions))
    expect(mixed.decisions.filter((d) => d.type === "permit").map(formatDecision)).toEqual([
      `{"at":${T0 + 2},"type":"permit","act":"grant","id":"p","budget":"heavy","weight":1,"waitedMs":2,"before":0}`
    ])
  })

  it("US-51 a permit line needs no pool line, and its at must not decrease", () => {
    expect(replayText(trace(line())).error).toBeUndefined()
    expect(replayText(trace(line({ at: T0 + 5 }), line())).error).toEqual({ line: 2, message: `"at" decreased: ${T0} after ${T0 + 5}` })
  })

  it("US-51 each op kind decodes and replays: poll, release, cancel, rebind, free, settle", () => {
    const held = entry("a", 1, { grantedAt: T0, ahead: 0 })
    const queued = entry("b", 2, { seenAt: T0, pausedAt: T0 + 40_000 })
    const entries = [held, queued]
    const ops = [
      { op: "poll", id: "b", token: "t-b" },
      { op: "release", id: "a", token: "t-a" },
      { op: "cancel", id: "b", token: "t-b", cause: "aborted" },
      { op: "rebind", id: "a", token: "t-a", group: { pgid: 77, startToken: null } },
      { op: "free", id: "a", force: true },
      { op: "settle" }
    ]
    const got = ops.map((op) => replayText(trace(line({ at: T0 + 50_000, op, entries, capacities: { heavy: 1 } }))).decisions.map((d) => (d.type === "permit" ? d.act : d.type)))
    // b is paused: freeing a's unit grants nothing until b's client polls again
    expect(got).toEqual([["resume"], ["release"], ["cancel"], [], ["release"], []])
  })
})

describe("permit lines: decoding names every field", () => {
  it("US-51 missing or wrongly typed top-level fields are named", () => {
    expect(error(line({ op: undefined }))).toBe('missing required field "op"')
    expect(error(line({ op: { op: "steal" } }))).toBe('field "op.op" must be one of "request", "poll", "release", "cancel", "rebind", "free", "settle"')
    expect(error(line({ capacities: [] }))).toBe('field "capacities" must be an object')
    expect(error(line({ capacities: { heavy: 0 } }))).toBe('field "capacities.heavy" must be an integer ≥ 1')
    expect(error(line({ capacities: { heavy: 1.5 } }))).toBe('field "capacities.heavy" must be an integer ≥ 1')
    expect(error(line({ entries: undefined }))).toBe('missing required field "entries"')
    expect(error(line({ entries: {} }))).toBe('field "entries" must be an array')
  })

  it("US-51 op fields are named with their path", () => {
    expect(error(line({ op: { op: "poll", token: "t" } }))).toBe('missing required field "op.id"')
    expect(error(line({ op: { op: "release", id: "a", token: 5 } }))).toBe('field "op.token" must be a string')
    expect(error(line({ op: { op: "cancel", id: "a", token: "t", cause: "holder gone" } }))).toBe('field "op.cause" must be one of "aborted", "timeout", "wait", "error", "dispose"')
    expect(error(line({ op: { op: "rebind", id: "a", token: "t", group: { pgid: -1 } } }))).toBe('field "op.group.pgid" must be an integer ≥ 1')
    expect(error(line({ op: { op: "free", id: "a", force: "yes" } }))).toBe('field "op.force" must be a boolean')
    expect(error(line({ op: { op: "request", entry: { ...entry("a", 1), weight: "2" } } }))).toBe('field "op.entry.weight" must be a number')
    expect(error(line({ op: { op: "request", entry: { ...entry("a", 1), holder: { ...holder, via: "cron" } } } }))).toBe('field "op.entry.holder.via" must be one of "plugin", "run", "mcp"')
    expect(error(line({ op: { op: "request", entry: { ...entry("a", 1), requestedAt: 1e20 } } }))).toMatch(/^field "op.entry.requestedAt" must be within/)
  })

  it("US-51 entry fields are named with their index", () => {
    const bad = (over: Record<string, unknown>) => error(line({ entries: [entry("a", 1), entry("b", 2, over)] }))
    expect(bad({ seq: null })).toBe('field "entries[1].seq" must be a number')
    expect(bad({ gone: "no" })).toBe('field "entries[1].gone" must be a boolean')
    expect(bad({ grantedAt: "then" })).toBe('field "entries[1].grantedAt" must be a number')
    expect(bad({ ahead: -1 })).toBe('field "entries[1].ahead" must be an integer ≥ 0')
    expect(bad({ holder: { ...holder, pid: 0 } })).toBe('field "entries[1].holder.pid" must be an integer ≥ 1')
    expect(bad({ holder: { ...holder, group: { pgid: 3, startToken: 4 } } })).toBe('field "entries[1].holder.group.startToken" must be a string')
    expect(bad({ holder: "me" })).toBe('field "entries[1].holder" must be an object')
    expect(bad({ id: "a" })).toBe('field "entries[1].id" repeats entries[0].id')
    expect(error(line({ entries: [7] }))).toBe('field "entries[0]" must be an object')
  })

  it("US-51 bounds: at most 10,000 entries and budgets, strings of at most 1,000 characters", () => {
    expect(PERMIT_ENTRIES_MAX).toBe(10_000)
    expect(PERMIT_STRING_MAX).toBe(1_000)
    expect(error(line({ entries: Array.from({ length: 10_001 }, () => 0) }))).toBe('field "entries" must hold at most 10000 entries')
    expect(error(line({ capacities: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`b${i}`, 1])) }))).toBe('field "capacities" must name at most 10000 budgets')
    expect(error(line({ entries: [entry("a", 1, { reason: "x".repeat(1001) })] }))).toBe('field "entries[0].reason" must be at most 1000 characters')
    expect(error(line({ entries: [entry("a", 1, { reason: "x".repeat(1000) })] }))).toBe("decoded")
    expect(error(line({ capacities: { ["g".repeat(1001)]: 1 } }))).toBe('field "capacities" must name budgets of at most 1000 characters')
  })

  it("US-51 a budget named __proto__ or constructor is a name like any other", () => {
    const text = `{"at":${T0},"type":"permit","op":{"op":"settle"},"capacities":{"__proto__":1},"entries":[${JSON.stringify(entry("a", 1, { budget: "__proto__" }))},${JSON.stringify(entry("b", 2, { budget: "constructor" }))}]}\n`
    const r = replayText(text)
    expect(r.error).toBeUndefined()
    // __proto__ has capacity 1 and grants a; constructor is not a known budget and waits
    expect(r.decisions.map(formatDecision)).toEqual([`{"at":${T0},"type":"permit","act":"grant","id":"a","budget":"__proto__","weight":1,"waitedMs":0,"before":0}`])
  })
})
