/**
 * The measured-cost report (US-3): usage rows aggregated by SQLite in, groups, the pooled work as
 * done (pool row) and priced on its root session's model (baseline row) out. Pure.
 *
 * A cost is a number of USD or `undefined`, which means unknown and is never shown as 0: a group's
 * cost is the sum of the costs opencode recorded in its messages, except that a model no price source
 * knows whose calls used tokens but recorded 0 in all makes it unknown (opencode records 0 when it has
 * no price). The check is made per session, agent and model: opencode prices every call of a model
 * the same way, so such a row's calls recorded either all 0 or all a cost.
 */
import { VARIANT_PATTERN } from "../constants.js"
import { isPooledBase } from "../pool/routing.js"
import { costOf, lookupPrice, type PriceTable, type Tokens } from "../prices.js"
import type { GroupBy } from "./flags.js"
import { dayOrder, type UsageRow } from "./rows.js"

export type { UsageRow } from "./rows.js"

export type Cost = number | undefined

export interface Usage {
  readonly calls: number
  readonly tokens: Tokens
  readonly cost: Cost
}

export interface Group extends Usage {
  readonly key: string
}

export interface Baseline extends Usage {
  /** The models the pooled work was priced on, sorted. */
  readonly models: ReadonlyArray<string>
}

export interface CostReport {
  readonly by: GroupBy
  readonly groups: ReadonlyArray<Group>
  readonly total: Usage
  /** The pooled work as done. */
  readonly pool: Usage
  /** The same messages priced on the root session's model (or `--baseline-model`). */
  readonly baseline: Baseline
  /** Models whose cost is unknown (recorded 0 with no price anywhere), and unpriced baseline models, sorted. */
  readonly unpriced: ReadonlyArray<string>
  /** Roots of pooled work with no readable assistant message to take a model from, sorted. */
  readonly rootsWithoutModel: ReadonlyArray<string>
  /** Message rows skipped as unreadable (rows.ts): in no group, total or pooled row. */
  readonly unreadable: number
}

export interface ReportInput {
  readonly by: GroupBy
  readonly rows: ReadonlyArray<UsageRow>
  /** session id → parent id (null for a root). */
  readonly parents: ReadonlyMap<string, string | null>
  /** root session id → `provider/model` of its most recent assistant message. */
  readonly rootModels: ReadonlyMap<string, string>
  /** Price every pooled call on this model instead of its root's. */
  readonly baselineModel?: string | undefined
  /** Price sources, first that prices a model wins. */
  readonly prices: ReadonlyArray<PriceTable>
  /** Message rows the database scan could not read (rows.ts); 0 when absent. */
  readonly unreadable?: number | undefined
}

export const ZERO_TOKENS: Tokens = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

export const addTokens = (a: Tokens, b: Tokens): Tokens => ({
  input: a.input + b.input,
  output: a.output + b.output,
  reasoning: a.reasoning + b.reasoning,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheWrite: a.cacheWrite + b.cacheWrite
})

/** Unknown absorbs: a sum with an unknown part is unknown. */
export const addCost = (a: Cost, b: Cost): Cost => (a === undefined || b === undefined ? undefined : a + b)

const addUsage = (a: Usage, b: Usage): Usage => ({ calls: a.calls + b.calls, tokens: addTokens(a.tokens, b.tokens), cost: addCost(a.cost, b.cost) })

export const NO_USAGE: Usage = { calls: 0, tokens: ZERO_TOKENS, cost: 0 }

/** The pooled subagents' work: a base (`explore`, `implement`, `context`) or a slot variant (`explore-2`). */
export const isPooledAgent = (agent: string): boolean => isPooledBase(agent) || VARIANT_PATTERN.test(agent)

/**
 * The root of a session's tree: follow parents to a session without one, or whose parent row is
 * missing (it counts as a root, as in the sweeps). A cycle stops at the session first met again.
 */
export const rootOf = (id: string, parents: ReadonlyMap<string, string | null>): string => {
  const seen = new Set<string>()
  let at = id
  for (;;) {
    seen.add(at)
    const parent = parents.get(at)
    if (parent === null || parent === undefined || !parents.has(parent) || seen.has(parent)) return at
    at = parent
  }
}

export const keyOf = (by: GroupBy, row: UsageRow): string => {
  switch (by) {
    case "agent":
      return row.agent
    case "model":
      return row.model
    case "session":
      return row.sessionId
    case "day":
      return row.day
  }
}

const tokenSum = (t: Tokens): number => t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite

/** The recorded cost of a row, unknown when its model is unpriced and its calls used tokens but recorded 0. */
const recordedCost = (row: UsageRow, priced: (model: string) => boolean): Cost => (row.cost === 0 && tokenSum(row.tokens) > 0 && !priced(row.model) ? undefined : row.cost)

const byKey = (a: Group, b: Group): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/** Days in date order (`unknown` last); any other grouping by calls, most first, then by key. */
const groupOrder = (by: GroupBy) => (by === "day" ? (a: Group, b: Group) => dayOrder(a.key, b.key) : (a: Group, b: Group) => b.calls - a.calls || byKey(a, b))

export const buildReport = (input: ReportInput): CostReport => {
  const priceCache = new Map<string, ReturnType<typeof lookupPrice>>()
  const price = (model: string) => {
    if (!priceCache.has(model)) priceCache.set(model, lookupPrice(input.prices, model))
    return priceCache.get(model)
  }
  const priced = (model: string) => price(model) !== undefined
  const groups = new Map<string, Usage>()
  const unpriced = new Set<string>()
  const baselineModels = new Set<string>()
  const rootsWithoutModel = new Set<string>()
  let total = NO_USAGE
  let pool = NO_USAGE
  let baselineCost: Cost = 0
  for (const row of input.rows) {
    const cost = recordedCost(row, priced)
    if (cost === undefined) unpriced.add(row.model)
    const usage: Usage = { calls: row.calls, tokens: row.tokens, cost }
    const key = keyOf(input.by, row)
    groups.set(key, addUsage(groups.get(key) ?? NO_USAGE, usage))
    total = addUsage(total, usage)
    if (!isPooledAgent(row.agent)) continue
    pool = addUsage(pool, usage)
    const root = rootOf(row.sessionId, input.parents)
    const model = input.baselineModel ?? input.rootModels.get(root)
    if (model === undefined) {
      rootsWithoutModel.add(root)
      baselineCost = undefined
      continue
    }
    baselineModels.add(model)
    const p = price(model)
    if (p === undefined) unpriced.add(model)
    baselineCost = addCost(baselineCost, p === undefined ? undefined : costOf(p, row.tokens))
  }
  // `--baseline-model` prices the baseline even with no pooled work in the window
  if (input.baselineModel !== undefined) {
    baselineModels.add(input.baselineModel)
    if (!priced(input.baselineModel)) {
      unpriced.add(input.baselineModel)
      baselineCost = undefined
    }
  }
  const list = [...groups].map(([key, u]): Group => ({ key, ...u })).sort(groupOrder(input.by))
  return {
    by: input.by,
    groups: list,
    total,
    pool,
    baseline: { calls: pool.calls, tokens: pool.tokens, cost: baselineCost, models: [...baselineModels].sort() },
    unpriced: [...unpriced].sort(),
    rootsWithoutModel: [...rootsWithoutModel].sort(),
    unreadable: input.unreadable ?? 0
  }
}
