/** The cost report as text (a table) and as the `--json` object (docs/COST.md). Pure. */
import { formatUsd, type Tokens } from "../prices.js"
import { echo, printableJson } from "../printable.js"
import { isoTime } from "../time.js"
import type { Cost, CostReport, Usage } from "./report.js"

/** The cost cell: `unknown`, never 0, when a price is missing. */
export const costCell = (cost: Cost): string => (cost === undefined ? "unknown" : formatUsd(cost))

const count = (n: number): string => n.toLocaleString("en-US")

const HEADERS = ["CALLS", "INPUT", "OUTPUT", "REASONING", "CACHE READ", "CACHE WRITE", "COST"]

const cells = (label: string, u: Usage): ReadonlyArray<string> => [
  label,
  count(u.calls),
  count(u.tokens.input),
  count(u.tokens.output),
  count(u.tokens.reasoning),
  count(u.tokens.cacheRead),
  count(u.tokens.cacheWrite),
  costCell(u.cost)
]

/** Columns padded to their widest cell: the label left-aligned, the numbers right-aligned. */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)))
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd())
    .join("\n")
}

export interface RenderContext {
  /** `7d`, `all`. */
  readonly since: string
  /** The window's start, or undefined for `all`. */
  readonly from: number | undefined
  /** The price sources read, in order (names). */
  readonly priceSources: ReadonlyArray<{ readonly name: string }>
}

/** The line under the groups when message rows were skipped (docs/COST.md, "Unreadable rows"). */
export const unreadableLine = (n: number): string =>
  `${count(n)} ${n === 1 ? "row" : "rows"} unreadable, skipped: not a JSON object, or an assistant message with a missing or invalid agent, model, token count or cost`

export const renderText = (report: CostReport, ctx: RenderContext): string => {
  const window = ctx.from === undefined ? "all assistant messages" : `assistant messages since ${isoTime(ctx.from)} (${ctx.since})`
  const groups = table([
    [report.by.toUpperCase(), ...HEADERS],
    // keys come from the database: no control character reaches the terminal, none runs wider than 80
    ...report.groups.map((g) => cells(echo(g.key), g)),
    cells("total", report.total)
  ])
  const skipped = report.unreadable === 0 ? [] : [unreadableLine(report.unreadable)]
  const sources = ctx.priceSources.length === 0 ? "none" : ctx.priceSources.map((s) => s.name).join(", then ")
  // a database opencode has not answered in (a new install, a window with nothing in it): said as such
  if (report.total.calls === 0 && report.unreadable === 0) return [`${window}: none yet, nothing to report`, `prices: ${sources}`].join("\n")
  const baselineLine =
    report.baseline.models.length === 0
      ? "baseline: no pooled work in this window; pool: as it ran (recorded costs)"
      : `baseline: the pooled work priced on ${report.baseline.models.map((m) => echo(m)).join(", ")}; pool: as it ran (recorded costs)`
  const pooled = table([["POOLED WORK", ...HEADERS], cells("baseline", report.baseline), cells("pool", report.pool)])
  return [
    `${window}, by ${report.by}`,
    groups,
    ...skipped,
    "",
    pooled,
    baselineLine,
    `prices: ${sources}`
  ].join("\n")
}

const tokensJson = (t: Tokens) => ({ input: t.input, output: t.output, reasoning: t.reasoning, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite })

/** Cost `null` is unknown; known costs are rounded to 1e-10 USD, dropping float noise (0.0323, not 0.032299999999999995). */
const usageJson = (u: Usage) => ({ calls: u.calls, tokens: tokensJson(u.tokens), cost: u.cost === undefined ? null : Math.round(u.cost * 1e10) / 1e10 })

export interface JsonContext extends RenderContext {
  readonly to: number
  readonly priceSources: ReadonlyArray<{ readonly name: string; readonly path: string }>
}

/** The `--json` line (docs/COST.md): one object; C1 controls and line separators from the database escaped. */
export const reportJsonText = (report: CostReport, ctx: JsonContext): string => printableJson(JSON.stringify(reportJson(report, ctx)))

/** The `--json` object (docs/COST.md). */
export const reportJson = (report: CostReport, ctx: JsonContext) => ({
  since: ctx.since,
  from: ctx.from === undefined ? null : isoTime(ctx.from),
  to: isoTime(ctx.to),
  by: report.by,
  groups: report.groups.map((g) => ({ key: g.key, ...usageJson(g) })),
  total: usageJson(report.total),
  baseline: { ...usageJson(report.baseline), models: report.baseline.models },
  pool: usageJson(report.pool),
  unpriced: report.unpriced,
  rootsWithoutModel: report.rootsWithoutModel,
  unreadableRows: report.unreadable,
  priceSources: ctx.priceSources.map((s) => ({ name: s.name, path: s.path }))
})
