/**
 * `ocpool cost` (US-3): what assistant messages cost, grouped by agent, model, session or day, and
 * what the pooled work cost against what it would have cost on the root session's model. Reads
 * opencode's database read-only; prices from the catalog sources (layers/cost/PriceSources.ts).
 */
import { Command } from "@effect/cli"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { DEFAULT_BY, DEFAULT_SINCE, GROUP_BY, parseBy, parseModel, parseSince, type GroupBy } from "../core/cost/flags.js"
import { buildReport, isPooledAgent, rootOf, type CostReport } from "../core/cost/report.js"
import { renderText, reportJsonText } from "../core/cost/render.js"
import { echo } from "../core/printable.js"
import { CostSqlite } from "../layers/cost/CostSqlite.js"
import { loadPriceSources, priceSourcePaths, type PriceSource } from "../layers/cost/PriceSources.js"
import { SqliteNode } from "../layers/opencodeDb/SqliteNode.js"
import { CostStore } from "../services/cost/CostStore.js"
import { CostUnknown } from "./errors.js"
import { diagnostic } from "./output.js"
import { databaseFile, openFailures, withBusyRetry } from "./shared/db.js"
import { dbFlag, jsonFlag, orBadInput, text } from "./shared/flags.js"

export interface CostQuery {
  readonly from: number | undefined
  readonly by: GroupBy
  readonly baselineModel: string | undefined
  readonly sources: ReadonlyArray<PriceSource>
}

/** The report over the CostStore: one aggregate scan (unreadable rows counted, not summed), the session tree, the roots' latest models. */
export const measureCost = (q: CostQuery) =>
  Effect.gen(function* () {
    const store = yield* CostStore
    yield* store.checkSchema
    const { rows, unreadable } = yield* store.usage({ from: q.from, byDay: q.by === "day" })
    const pooled = rows.filter((r) => isPooledAgent(r.agent))
    const parents = pooled.length === 0 ? new Map<string, string | null>() : yield* store.parents
    const roots = q.baselineModel === undefined ? [...new Set(pooled.map((r) => rootOf(r.sessionId, parents)))] : []
    const rootModels = yield* store.latestModels(roots)
    return buildReport({ by: q.by, rows, parents, rootModels, baselineModel: q.baselineModel, prices: q.sources.map((s) => s.table), unreadable })
  })

/** The live layers: the database opened read-only. */
export const costLayer = (db: string) => CostSqlite().pipe(Layer.provide(SqliteNode(db, { readonly: true })))

const unpricedNote = (report: CostReport, explicit: string | undefined): ReadonlyArray<string> => [
  ...report.unpriced.filter((m) => m !== explicit).map((m) => `no price for ${echo(m)} in any price source; its cost shows unknown`),
  ...report.rootsWithoutModel.map((r) => `root session ${echo(r)} has no readable assistant message to take a model from; the baseline cost shows unknown`)
]

export const costCommand = Command.make(
  "cost",
  {
    db: dbFlag,
    since: text("since", "DURATION", `Only assistant messages created in the last DURATION: 30m, 24h, 7d, 2w, or 'all' (default ${DEFAULT_SINCE})`),
    by: text("by", GROUP_BY.join("|"), `Group the rows by agent, provider/model, session id or UTC day (default ${DEFAULT_BY})`),
    baselineModel: text(
      "baseline-model",
      "PROVIDER/MODEL",
      "Price the pooled work on this model instead of each root session's latest model; without a price the cost is unknown and the exit code 1"
    ),
    json: jsonFlag
  },
  (args) =>
    Effect.gen(function* () {
      const since = yield* orBadInput(parseSince(Option.getOrUndefined(args.since)))
      const by = yield* orBadInput(parseBy(Option.getOrUndefined(args.by)))
      const baselineModel = yield* orBadInput(parseModel("baseline-model", Option.getOrUndefined(args.baselineModel)))
      const db = yield* databaseFile(args.db, true)
      const to = yield* Clock.currentTimeMillis
      const from = since.ms === undefined ? undefined : to - since.ms
      const prices = loadPriceSources(priceSourcePaths())
      for (const w of prices.warnings) yield* diagnostic(w)
      const report = yield* withBusyRetry(measureCost({ from, by, baselineModel, sources: prices.sources })).pipe(openFailures(db), Effect.provide(costLayer(db)))
      const ctx = { since: since.text, from, to, priceSources: prices.sources }
      yield* Console.log(args.json ? reportJsonText(report, ctx) : renderText(report, ctx))
      for (const line of unpricedNote(report, baselineModel)) yield* diagnostic(line)
      if (baselineModel !== undefined && report.baseline.cost === undefined)
        return yield* new CostUnknown({ model: baselineModel, sources: prices.sources.map((s) => ({ name: s.name, path: s.path })) })
    })
).pipe(
  Command.withDescription(
    "What opencode's assistant messages cost (calls, tokens, cost per group), and the pooled work as it ran against the same messages priced on the root session's model. Reads the database read-only. Prices: $OPENCODE_MODELS_PATH, then opencode's cached catalog, then presets/prices.json; an unpriced model shows unknown, never 0. Exit 0; 1 when the --baseline-model has no price or the database fails; 2 bad input; 75 database busy."
  )
)
