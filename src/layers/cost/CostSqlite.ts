/**
 * CostStore over any `@effect/sql` SqlClient (better-sqlite3 read-only in the CLI). The heavy lifting
 * is one `GROUP BY` over `json_extract` of the message rows: the report never pulls messages into
 * JavaScript, only one row per session, agent and model (and day), and per group of unreadable rows;
 * those records are decoded with effect/Schema by core/cost/rows.ts.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { DAY_MS } from "../../core/constants.js"
import { decodeUsage, USAGE_VALUE_MAX } from "../../core/cost/rows.js"
import { TIME_MAX_MS } from "../../core/readLimits.js"
import { CostStore, type UsageQuery } from "../../services/cost/CostStore.js"
import { busyOrFailed, busyOrNotOpencodeDb, openAttempts, requireColumns, setBusyTimeout } from "../opencodeDb/sqlite.js"
import { traced } from "../hotPath.js"

/** The columns the report reads. */
export const COST_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  message: ["id", "session_id", "time_created", "data"],
  session: ["id", "parent_id"]
}

/**
 * Readability, per row (docs/COST.md, "Unreadable rows"). `d` is the data where it is a JSON object
 * (strict RFC 8259 text), NULL otherwise; values are read with `->`, as their JSON text, so a string
 * (`"12"`), a boolean or an object is told from a number by its first character: a JSON number ≥ 0
 * starts with a digit. A missing value is NULL and fails every test.
 */
const isObjectJson = (data: string) => `typeof(${data}) = 'text' AND json_valid(${data}) AND json_type(${data}) = 'object'`
const isName = (json: string) => `${json} GLOB '"*'`
const isCost = (json: string) => `${json} GLOB '[0-9]*' AND CAST(${json} AS REAL) <= ${USAGE_VALUE_MAX}`
const isCount = (json: string) => `${isCost(json)} AND CAST(${json} AS REAL) = CAST(CAST(${json} AS REAL) AS INTEGER)`

/** The values the report reads, by column name, with their JSON paths and tests. */
const VALUES: ReadonlyArray<readonly [string, string, (json: string) => string]> = [
  ["agent", "$.agent", isName],
  ["provider", "$.providerID", isName],
  ["model", "$.modelID", isName],
  ["input", "$.tokens.input", isCount],
  ["output", "$.tokens.output", isCount],
  ["reasoning", "$.tokens.reasoning", isCount],
  ["cache_read", "$.tokens.cache.read", isCount],
  ["cache_write", "$.tokens.cache.write", isCount],
  ["cost", "$.cost", isCost]
]

/** Whether the assistant message whose data object is `d` is readable (its values read in place: for single-row lookups). */
const readableAssistant = (d: string) => VALUES.map(([, path, test]) => `(${test(`(${d} -> '${path}')`)})`).join(" AND ")

/** `time_created` within the date range (src/core/readLimits.ts); a text, a NULL or a BLOB is not a time. */
const IS_TIME = `typeof(time_created) IN ('integer', 'real') AND time_created BETWEEN -${TIME_MAX_MS} AND ${TIME_MAX_MS}`

/**
 * In the window: at or after its start, or not a time. Written for speed: SQLite orders a text or a
 * BLOB after every number, so `>=` already keeps those; what is left is a number below the date
 * range, and NULL.
 */
const IN_WINDOW = `(time_created >= ? OR time_created < -${TIME_MAX_MS} OR time_created IS NULL)`

/** Days since 1970-01-01 (UTC; floored, as Date counts days before 1970), NULL for a time that is not a date. */
const DAY_NUMBER = `CASE WHEN ${IS_TIME} THEN CASE WHEN time_created >= 0 THEN CAST(time_created AS INTEGER) / ${DAY_MS}
  ELSE (CAST(time_created AS INTEGER) + 1) / ${DAY_MS} - 1 END END`

/**
 * Usage of assistant messages: the data parsed and every value extracted once per row, by subqueries
 * that `LIMIT -1` keeps from being flattened (flattened, each use of a column would extract it again;
 * SQLite does not flatten a subquery with a LIMIT into an aggregate, nor into a query with a LIMIT).
 * Rows that are not JSON objects, and assistant messages, reach the aggregate; `ok` sorts them into
 * readable groups and unreadable ones (counted only). A window keeps the rows at or after its start
 * and those whose time is not a date (their day is `unknown`; the report never drops usage it
 * cannot date).
 */
export const usageSql = (byDay: boolean, windowed: boolean) => `
SELECT CASE WHEN ${VALUES.map(([name, , test]) => `(${test(name)})`).join(" AND ")} THEN 1 ELSE 0 END AS ok,
  session_id, agent, provider, model, day, count(*) AS calls, total(input) AS input, total(output) AS output,
  total(reasoning) AS reasoning, total(cache_read) AS cache_read, total(cache_write) AS cache_write, total(cost) AS cost
FROM (
  SELECT session_id, day, ${VALUES.map(([name, path]) => `d -> '${path}' AS ${name}`).join(", ")}
  FROM (
    SELECT session_id, ${byDay ? DAY_NUMBER : "NULL"} AS day, CASE WHEN ${isObjectJson("data")} THEN data END AS d
    FROM message${windowed ? ` WHERE ${IN_WINDOW}` : ""}
    LIMIT -1
  )
  WHERE d IS NULL OR d ->> '$.role' = 'assistant'
  LIMIT -1
)
GROUP BY ok, session_id, agent, provider, model, day`

/**
 * A root's model: its most recent readable assistant message's `provider/model` (the same rules as
 * the usage; an unreadable message is passed over), its session index read backwards.
 */
export const LATEST_MODEL_SQL = `SELECT s.value AS session_id,
  (SELECT (d ->> '$.providerID') || '/' || (d ->> '$.modelID') FROM (
    SELECT CASE WHEN ${isObjectJson("data")} THEN data END AS d, time_created, id FROM message WHERE session_id = s.value)
   WHERE d ->> '$.role' = 'assistant' AND ${readableAssistant("d")} ORDER BY time_created DESC, id DESC LIMIT 1) AS model
FROM json_each(?) AS s`

/** The store's methods are traced as `CostStore.<method>` (an Effect member: its traced body applied to no arguments). */
export const CostSqlite = (options: { readonly busyTimeoutMs?: number } = {}) =>
  Layer.effect(
    CostStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Every statement runs as one of the attempt begun by checkSchema, so a retry under the busy
      // back-off never meets a prepare that failed under a lock.
      const attempts = openAttempts(sql)
      return CostStore.of({
        checkSchema: traced("CostStore.checkSchema")(function* () {
          yield* attempts.next
          yield* setBusyTimeout(sql, options.busyTimeoutMs).pipe(Effect.mapError(busyOrNotOpencodeDb))
          yield* requireColumns(attempts, COST_COLUMNS)
        })(),

        usage: traced("CostStore.usage")(function* (query: UsageQuery) {
          const records = yield* attempts.run<object>(usageSql(query.byDay, query.from !== undefined), query.from === undefined ? [] : [query.from])
          return decodeUsage(records, query.byDay)
        }, Effect.mapError(busyOrFailed)),

        parents: traced("CostStore.parents")(function* () {
          const rows = yield* attempts.run<{ id: string; parent_id: string | null }>("SELECT id, parent_id FROM session")
          return new Map(rows.map((r) => [r.id, r.parent_id ?? null] as const)) as ReadonlyMap<string, string | null>
        }, Effect.mapError(busyOrFailed))(),

        latestModels: traced("CostStore.latestModels")(function* (sessions: ReadonlyArray<string>) {
          if (sessions.length === 0) return new Map<string, string>() as ReadonlyMap<string, string>
          // per session, its index read backwards to the first readable assistant message
          const rows = yield* attempts.run<{ session_id: string; model: string | null }>(LATEST_MODEL_SQL, [JSON.stringify(sessions)])
          return new Map(rows.flatMap((r) => (r.model === null ? [] : [[r.session_id, r.model] as const]))) as ReadonlyMap<string, string>
        }, Effect.mapError(busyOrFailed))
      })
    })
  )
