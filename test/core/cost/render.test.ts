/** The cost report's text and JSON (US-3): aligned columns, `unknown` for unpriced, nothing from the database that can paint the terminal. */
import { describe, expect, it } from "@effect/vitest"
import { buildReport, type UsageRow } from "../../../src/core/cost/report.js"
import { costCell, renderText, reportJson, reportJsonText, table } from "../../../src/core/cost/render.js"

const tokens = { input: 1234, output: 56, reasoning: 0, cacheRead: 7, cacheWrite: 0 }
const row = (agent: string, model: string, cost: number): UsageRow => ({ sessionId: "ses_a", agent, model, day: "", calls: 1, tokens, cost })
const ctx = { since: "7d", from: Date.UTC(2026, 10, 24), to: Date.UTC(2026, 11, 1), priceSources: [{ name: "presets/prices.json", path: "/p/prices.json" }] }

describe("cost rendering", () => {
  it("US-3 cost cells: $0.00 for zero, four decimals under a cent, unknown for no price", () => {
    expect(costCell(0)).toBe("$0.00")
    expect(costCell(0.0033)).toBe("$0.0033")
    expect(costCell(12.345)).toBe("$12.35")
    expect(costCell(undefined)).toBe("unknown")
  })

  it("US-3 the table pads the label left and the numbers right", () => {
    expect(table([["A", "CALLS"], ["build", "2"], ["explore-12", "1,000"]])).toBe("A           CALLS\nbuild           2\nexplore-12  1,000")
  })

  it("US-3 the text names the window, the grouping, the baseline models and the price sources", () => {
    const r = buildReport({ by: "agent", rows: [row("build", "p/root", 0.5), row("explore-1", "p/free", 0)], parents: new Map([["ses_a", null]]), rootModels: new Map([["ses_a", "p/root"]]), prices: [new Map([["p/root", { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }], ["p/free", { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }]])] })
    const text = renderText(r, ctx)
    expect(text.split("\n")[0]).toBe("assistant messages since 2026-11-24T00:00:00.000Z (7d), by agent")
    expect(text).toContain("baseline: the pooled work priced on p/root; pool: as it ran (recorded costs)")
    expect(text.endsWith("prices: presets/prices.json")).toBe(true)
    expect(renderText(r, { ...ctx, since: "all", from: undefined, priceSources: [] }).split("\n")).toEqual(expect.arrayContaining(["all assistant messages, by agent", "prices: none"]))
  })

  it("US-3 a database without assistant messages says there is nothing to report yet; messages without pooled work say the baseline has none (issue 33)", () => {
    const none = renderText(buildReport({ by: "agent", rows: [], parents: new Map(), rootModels: new Map(), prices: [] }), ctx)
    expect(none).toBe("assistant messages since 2026-11-24T00:00:00.000Z (7d): none yet, nothing to report\nprices: presets/prices.json")
    const rootOnly = renderText(buildReport({ by: "agent", rows: [row("build", "p/root", 0.5)], parents: new Map([["ses_a", null]]), rootModels: new Map([["ses_a", "p/root"]]), prices: [] }), ctx)
    expect(rootOnly).toContain("baseline: no pooled work in this window; pool: as it ran (recorded costs)")
    expect(rootOnly).not.toContain("priced no pooled work")
  })

  it("US-3 a hostile agent or model name from the database cannot paint the terminal or break the table", () => {
    const evil = "\u001b[2J\u001b]0;pwned\u0007explore-1\nrm -rf"
    const r = buildReport({ by: "agent", rows: [row(evil, "p/\u009bm", 0)], parents: new Map(), rootModels: new Map(), prices: [] })
    const text = renderText(r, ctx)
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(text.split("\n")).toHaveLength(renderText(buildReport({ by: "agent", rows: [row("x", "p/m", 0)], parents: new Map(), rootModels: new Map(), prices: [] }), ctx).split("\n").length)
    const json = reportJsonText(r, ctx)
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(reportJson(r, ctx))))
  })

  it("US-3 unreadable rows: one line under the groups (none when there are none), unreadableRows in the JSON", () => {
    const input = { by: "agent" as const, rows: [row("build", "p/root", 0.5)], parents: new Map([["ses_a", null]]), rootModels: new Map(), prices: [] }
    const text = (unreadable: number) => renderText(buildReport({ ...input, unreadable }), ctx).split("\n")
    expect(text(3)[4]).toBe("3 rows unreadable, skipped: not a JSON object, or an assistant message with a missing or invalid agent, model, token count or cost")
    expect(text(3)[5]).toBe("")
    expect(text(1)[4]).toMatch(/^1 row unreadable, skipped: /)
    expect(text(1234)[4]).toMatch(/^1,234 rows unreadable, skipped: /)
    expect(text(0).join("\n")).not.toContain("unreadable")
    expect(text(0)).toHaveLength(text(3).length - 1)
    const json = reportJson(buildReport({ ...input, unreadable: 3 }), ctx)
    expect(json.unreadableRows).toBe(3)
    expect(Object.keys(json).slice(-2)).toEqual(["unreadableRows", "priceSources"])
    expect(reportJson(buildReport(input), ctx).unreadableRows).toBe(0)
  })
})
