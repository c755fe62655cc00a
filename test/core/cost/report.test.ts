/** The cost report (US-3): groups, the pool row and the baseline row from the same usage rows; unknown never reads as 0. */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { GROUP_BY, type GroupBy } from "../../../src/core/cost/flags.js"
import { buildReport, isPooledAgent, rootOf, type UsageRow } from "../../../src/core/cost/report.js"
import { costCell, renderText } from "../../../src/core/cost/render.js"
import { costOf, type Price, type PriceTable, type Tokens } from "../../../src/core/prices.js"

const SONNET: Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const FREE: Price = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
const PRICES: PriceTable = new Map([
  ["anthropic/claude-sonnet-4-5", SONNET],
  ["opencode/big-pickle", FREE]
])

const tokens = (input: number, output: number, more: Partial<Tokens> = {}): Tokens => ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0, ...more })

const row = (r: Partial<UsageRow> & Pick<UsageRow, "sessionId" | "agent" | "model">): UsageRow => ({
  day: "",
  calls: 1,
  tokens: tokens(100, 10),
  cost: 0,
  ...r
})

/** A root on Sonnet (two calls) that handed work to explore-1 on a free model, and a grandchild. */
const PARENTS = new Map<string, string | null>([
  ["ses_root", null],
  ["ses_kid", "ses_root"],
  ["ses_grandkid", "ses_kid"]
])
const ROWS: ReadonlyArray<UsageRow> = [
  row({ sessionId: "ses_root", agent: "build", model: "anthropic/claude-sonnet-4-5", calls: 2, tokens: tokens(4000, 600), cost: 0.021 }),
  row({ sessionId: "ses_kid", agent: "explore-1", model: "opencode/big-pickle", calls: 3, tokens: tokens(9000, 900, { reasoning: 100, cacheRead: 5000 }) }),
  row({ sessionId: "ses_grandkid", agent: "explore", model: "opencode/big-pickle", calls: 1, tokens: tokens(1000, 100) })
]
const ROOT_MODELS = new Map([["ses_root", "anthropic/claude-sonnet-4-5"]])

describe("cost report", () => {
  it("US-3 the default profile gives a baseline row and a pool row built from the same messages", () => {
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] })
    const pooledTokens = tokens(10_000, 1000, { reasoning: 100, cacheRead: 5000 })
    expect(r.pool).toEqual({ calls: 4, tokens: pooledTokens, cost: 0 })
    expect({ ...r.baseline, cost: undefined }).toEqual({ calls: 4, tokens: pooledTokens, cost: undefined, models: ["anthropic/claude-sonnet-4-5"] })
    expect(r.baseline.cost).toBeCloseTo(costOf(SONNET, pooledTokens), 12)
    expect(r.baseline.cost).toBeCloseTo((10_000 * 3 + 1100 * 15 + 5000 * 0.3) / 1e6, 12)
    const text = renderText(r, { since: "7d", from: 0, priceSources: [{ name: "presets/prices.json" }] })
    expect(text).toMatch(/^baseline +4 +10,000 +1,000 +100 +5,000 +0 +\$0\.05$/m)
    expect(text).toMatch(/^pool +4 +10,000 +1,000 +100 +5,000 +0 +\$0\.00$/m)
    expect(text).toMatch(/^POOLED WORK +CALLS +INPUT +OUTPUT +REASONING +CACHE READ +CACHE WRITE +COST$/m)
  })

  it("US-3 groups by agent, model, session and day", () => {
    const days: ReadonlyArray<UsageRow> = ROWS.map((x, i) => ({ ...x, day: `2026-11-2${3 - i}` }))
    const keys = (by: GroupBy) => buildReport({ by, rows: days, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] }).groups.map((g) => [g.key, g.calls])
    expect(keys("agent")).toEqual([["explore-1", 3], ["build", 2], ["explore", 1]])
    expect(keys("model")).toEqual([["opencode/big-pickle", 4], ["anthropic/claude-sonnet-4-5", 2]])
    expect(keys("session")).toEqual([["ses_kid", 3], ["ses_root", 2], ["ses_grandkid", 1]])
    expect(keys("day")).toEqual([["2026-11-21", 1], ["2026-11-22", 3], ["2026-11-23", 2]])
  })

  it("US-3 unreadable message rows are counted in the report and in no group, total or pooled row; days sort with unknown last", () => {
    const days: ReadonlyArray<UsageRow> = [{ ...ROWS[0]!, day: "unknown" }, { ...ROWS[1]!, day: "+010000-01-01" }, { ...ROWS[2]!, day: "2026-11-21" }]
    const r = buildReport({ by: "day", rows: days, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES], unreadable: 7 })
    expect(r.unreadable).toBe(7)
    expect(r.groups.map((g) => g.key)).toEqual(["2026-11-21", "+010000-01-01", "unknown"])
    expect(r.total.calls).toBe(6)
    expect(buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] }).unreadable).toBe(0)
  })

  it("US-3 a pool model priced at zero shows $0.00, not unknown", () => {
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] })
    expect(r.pool.cost).toBe(0)
    expect(costCell(r.pool.cost)).toBe("$0.00")
    expect(r.unpriced).toEqual([])
  })

  it("US-3 a model no source prices, with calls that recorded 0, is unknown in its group, the totals and the pool row", () => {
    const rows = [...ROWS, row({ sessionId: "ses_kid", agent: "explore-1", model: "fakeZ/nope" })]
    const r = buildReport({ by: "model", rows, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] })
    expect(r.groups.find((g) => g.key === "fakeZ/nope")!.cost).toBeUndefined()
    expect(r.groups.find((g) => g.key === "opencode/big-pickle")!.cost).toBe(0)
    expect(r.total.cost).toBeUndefined()
    expect(r.pool.cost).toBeUndefined()
    expect(costCell(r.pool.cost)).toBe("unknown")
    expect(r.unpriced).toEqual(["fakeZ/nope"])
    // the baseline prices the same tokens on the root's model: still known
    expect(r.baseline.cost).toBeCloseTo(costOf(SONNET, tokens(10_100, 1010, { reasoning: 100, cacheRead: 5000 })), 12)
  })

  it("US-3 an unpriced model whose calls recorded a cost keeps it; calls that used no tokens cost 0", () => {
    const rows = [
      row({ sessionId: "ses_root", agent: "build", model: "custom/priced-in-config", cost: 0.5 }),
      row({ sessionId: "ses_root", agent: "build", model: "custom/failed", tokens: tokens(0, 0), cost: 0 })
    ]
    const r = buildReport({ by: "model", rows, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] })
    expect(r.groups.map((g) => [g.key, g.cost])).toEqual([
      ["custom/failed", 0],
      ["custom/priced-in-config", 0.5]
    ])
    expect(r.unpriced).toEqual([])
  })

  it("US-3 --baseline-model naming an unpriced model makes the baseline unknown, even with no pooled work", () => {
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: ROOT_MODELS, baselineModel: "fakeQ/x", prices: [PRICES] })
    expect(r.baseline.cost).toBeUndefined()
    expect(r.baseline.models).toEqual(["fakeQ/x"])
    expect(r.unpriced).toEqual(["fakeQ/x"])
    const none = buildReport({ by: "agent", rows: [], parents: new Map(), rootModels: new Map(), baselineModel: "fakeQ/x", prices: [PRICES] })
    expect(costCell(none.baseline.cost)).toBe("unknown")
  })

  it("US-3 --baseline-model prices every pooled call on that model", () => {
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: new Map(), baselineModel: "anthropic/claude-sonnet-4-5", prices: [PRICES] })
    expect(r.baseline.cost).toBeCloseTo(costOf(SONNET, r.pool.tokens), 12)
    expect(r.rootsWithoutModel).toEqual([])
  })

  it("US-3 the first price source that prices a model wins", () => {
    const catalog: PriceTable = new Map([["anthropic/claude-sonnet-4-5", { ...SONNET, input: 30 }]])
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: ROOT_MODELS, prices: [catalog, PRICES] })
    expect(r.baseline.cost).toBeCloseTo(costOf({ ...SONNET, input: 30 }, r.pool.tokens), 12)
  })

  it("US-3 a root with no assistant message leaves the baseline unknown and is named", () => {
    const r = buildReport({ by: "agent", rows: ROWS, parents: PARENTS, rootModels: new Map(), prices: [PRICES] })
    expect(r.baseline.cost).toBeUndefined()
    expect(r.rootsWithoutModel).toEqual(["ses_root"])
  })

  it("US-3 each pooled session is priced on its own root's model", () => {
    const parents = new Map<string, string | null>([...PARENTS, ["ses_root2", null], ["ses_kid2", "ses_root2"]])
    const rows = [...ROWS, row({ sessionId: "ses_kid2", agent: "implement-12", model: "opencode/big-pickle", tokens: tokens(1000, 0) })]
    const rootModels = new Map([...ROOT_MODELS, ["ses_root2", "opencode/big-pickle"]])
    const r = buildReport({ by: "agent", rows, parents, rootModels, prices: [PRICES] })
    expect(r.baseline.models).toEqual(["anthropic/claude-sonnet-4-5", "opencode/big-pickle"])
    expect(r.baseline.cost).toBeCloseTo(costOf(SONNET, tokens(10_000, 1000, { reasoning: 100, cacheRead: 5000 })), 12)
  })

  it("US-3 pooled agents are the bases and their numbered variants only", () => {
    for (const a of ["explore", "implement", "context", "explore-1", "implement-12", "context-3"]) expect(isPooledAgent(a)).toBe(true)
    for (const a of ["build", "plan", "general", "explore-0", "explore-", "explorer", "explore-1x", "my-explore-1", ""]) expect(isPooledAgent(a)).toBe(false)
  })

  it("US-3 a session's root: parents followed up; a missing parent or a cycle stops the walk", () => {
    const parents = new Map<string, string | null>([
      ["a", null],
      ["b", "a"],
      ["c", "b"],
      ["orphan", "gone"],
      ["x", "y"],
      ["y", "x"]
    ])
    expect(rootOf("c", parents)).toBe("a")
    expect(rootOf("a", parents)).toBe("a")
    expect(rootOf("orphan", parents)).toBe("orphan")
    expect(rootOf("unknown", parents)).toBe("unknown")
    expect(["x", "y"]).toContain(rootOf("x", parents))
  })

  const agentArb = fc.constantFrom("build", "plan", "explore", "explore-1", "implement-2", "context", "context-7", "general")
  const modelArb = fc.constantFrom("anthropic/claude-sonnet-4-5", "opencode/big-pickle", "fakeZ/nope")
  const count = fc.nat({ max: 100_000 })
  const rowArb = fc.record({
    sessionId: fc.constantFrom("ses_root", "ses_kid", "ses_grandkid", "ses_lost"),
    agent: agentArb,
    model: modelArb,
    day: fc.constantFrom("2026-11-30", "2026-12-01"),
    calls: fc.integer({ min: 1, max: 50 }),
    tokens: fc.record({ input: count, output: count, reasoning: count, cacheRead: count, cacheWrite: count }),
    cost: fc.constantFrom(0, 0.25, 1.5)
  })

  it.prop("US-3 grouping by any key keeps the total calls, tokens and cost; pool and baseline count the same pooled calls", [fc.array(rowArb, { maxLength: 40 }), fc.constantFrom(...GROUP_BY)], ([rows, by]) => {
    const r = buildReport({ by, rows, parents: PARENTS, rootModels: ROOT_MODELS, prices: [PRICES] })
    const sum = (xs: ReadonlyArray<{ calls: number; tokens: Tokens }>) =>
      xs.reduce((a, x) => ({ calls: a.calls + x.calls, input: a.input + x.tokens.input, output: a.output + x.tokens.output, reasoning: a.reasoning + x.tokens.reasoning, cacheRead: a.cacheRead + x.tokens.cacheRead, cacheWrite: a.cacheWrite + x.tokens.cacheWrite }), { calls: 0, input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
    expect(sum(r.groups)).toEqual(sum(rows))
    expect(sum([r.total])).toEqual(sum(rows))
    expect(new Set(r.groups.map((g) => g.key)).size).toBe(r.groups.length)
    const pooled = rows.filter((x) => isPooledAgent(x.agent))
    expect(sum([r.pool])).toEqual(sum(pooled))
    expect(sum([r.baseline])).toEqual(sum(pooled))
    // unknown is never hidden: the total is unknown exactly when some group is
    expect(r.total.cost === undefined).toBe(r.groups.some((g) => g.cost === undefined))
    if (r.total.cost !== undefined) expect(r.total.cost).toBeCloseTo(r.groups.reduce((a, g) => a + g.cost!, 0), 9)
    // an unknown cost only ever comes from the unpriced model
    const used = (t: Tokens) => t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite > 0
    const unknownRows = rows.filter((x) => x.model === "fakeZ/nope" && x.cost === 0 && used(x.tokens))
    expect(r.total.cost === undefined).toBe(unknownRows.length > 0)
  })
})
