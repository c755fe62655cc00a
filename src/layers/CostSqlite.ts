/**
 * CostStore over any `@effect/sql` SqlClient (better-sqlite3 read-only in the CLI). The heavy lifting
 * is one `GROUP BY` over `json_extract` of the message rows: the report never pulls messages into
 * JavaScript, only one row per session, agent and model (and day).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"
import { DB_BUSY_TIMEOUT_MS } from "../core/constants.js"
import type { UsageRow } from "../core/cost/report.js"
import { CostStore, type UsageQuery } from "../services/CostStore.js"
import { DbBusy, NotOpencodeDb } from "../services/RetentionStore.js"
import { busyOrFailed, isBusy, messageOf } from "./RetentionSqlite.js"

/** The columns the report reads. */
export const COST_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  message: ["id", "session_id", "time_created", "data"],
  session: ["id", "parent_id"]
}

/**
 * Usage of assistant messages: every value extracted once per row (a flattened subquery would extract
 * a column again for each use). Missing token counts and costs are NULL, which total() skips.
 */
const usageSql = (byDay: boolean, windowed: boolean) => `
SELECT session_id, data ->> '$.agent' AS agent, data ->> '$.providerID' AS provider, data ->> '$.modelID' AS model,
  ${byDay ? "strftime('%Y-%m-%d', time_created / 1000, 'unixepoch')" : "''"} AS day,
  count(*) AS calls, total(data ->> '$.tokens.input') AS input, total(data ->> '$.tokens.output') AS output,
  total(data ->> '$.tokens.reasoning') AS reasoning, total(data ->> '$.tokens.cache.read') AS cache_read,
  total(data ->> '$.tokens.cache.write') AS cache_write, total(data ->> '$.cost') AS cost
FROM message
WHERE data ->> '$.role' = 'assistant'${windowed ? " AND time_created >= ?" : ""}
GROUP BY session_id, agent, provider, model${byDay ? ", day" : ""}`

interface UsageRecord {
  readonly session_id: string
  readonly agent: string | null
  readonly provider: string | null
  readonly model: string | null
  readonly day: string
  readonly calls: number
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cache_read: number
  readonly cache_write: number
  readonly cost: number
}

const toRow = (r: UsageRecord): UsageRow => ({
  sessionId: r.session_id,
  agent: r.agent ?? "",
  model: `${r.provider ?? ""}/${r.model ?? ""}`,
  day: r.day,
  calls: Number(r.calls),
  tokens: { input: Number(r.input), output: Number(r.output), reasoning: Number(r.reasoning), cacheRead: Number(r.cache_read), cacheWrite: Number(r.cache_write) },
  cost: Number(r.cost)
})

export const CostSqlite = (options: { readonly busyTimeoutMs?: number } = {}) =>
  Layer.effect(
    CostStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      /**
       * The client caches a prepared statement by its text, a failed prepare too (a lock held by another
       * connection fails the prepare that reads the schema): each attempt, begun by checkSchema under
       * the busy back-off, runs statements of its own text.
       */
      let attempt = 0
      const run = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) => sql.unsafe<A>(`${text} /* attempt ${attempt} */`, params)
      const openProblem = (e: SqlError.SqlError) => (isBusy(e) ? new DbBusy({ reason: messageOf(e) }) : new NotOpencodeDb({ reason: messageOf(e) }))
      return CostStore.of({
        checkSchema: Effect.gen(function* () {
          attempt++
          yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DB_BUSY_TIMEOUT_MS))}`).pipe(Effect.mapError(openProblem))
          for (const [table, columns] of Object.entries(COST_COLUMNS)) {
            const info = yield* run<{ name: string }>("SELECT name FROM pragma_table_info(?)", [table]).pipe(Effect.mapError(openProblem))
            if (info.length === 0) return yield* new NotOpencodeDb({ reason: `no table '${table}'` })
            const have = new Set(info.map((c) => c.name))
            const missing = columns.filter((c) => !have.has(c))
            if (missing.length > 0) return yield* new NotOpencodeDb({ reason: `table '${table}' has no column ${missing.map((c) => `'${c}'`).join(", ")}` })
          }
        }),

        usage: (query: UsageQuery) =>
          run<UsageRecord>(usageSql(query.byDay, query.from !== undefined), query.from === undefined ? [] : [query.from]).pipe(Effect.map((rows) => rows.map(toRow)), Effect.mapError(busyOrFailed)),

        parents: Effect.suspend(() => run<{ id: string; parent_id: string | null }>("SELECT id, parent_id FROM session")).pipe(
          Effect.map((rows) => new Map(rows.map((r) => [r.id, r.parent_id ?? null] as const))),
          Effect.mapError(busyOrFailed)
        ),

        latestModels: (sessions) =>
          sessions.length === 0
            ? Effect.succeed(new Map<string, string>())
            : // per session, its index read backwards to the first assistant message
              run<{ session_id: string; model: string | null }>(
                `SELECT s.value AS session_id,
                (SELECT coalesce(data ->> '$.providerID', '') || '/' || coalesce(data ->> '$.modelID', '') FROM message
                  WHERE session_id = s.value AND data ->> '$.role' = 'assistant' ORDER BY time_created DESC, id DESC LIMIT 1) AS model
                FROM json_each(?) AS s`,
                [JSON.stringify(sessions)]
              ).pipe(
                Effect.map((rows) => new Map(rows.flatMap((r) => (r.model === null ? [] : [[r.session_id, r.model] as const])))),
                Effect.mapError(busyOrFailed)
              )
      })
    })
  )
