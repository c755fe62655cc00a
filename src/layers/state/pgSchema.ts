/**
 * The fleet's tables (issue 22), created and migrated by the project itself with the `@effect/sql`
 * migrator: versioned (`ocpool_migrations` in the fleet's schema), idempotent, and safe when several
 * hosts start at once (the whole run holds a transaction-scoped advisory lock, so a second host waits
 * and then finds nothing to do). The tables are stateSql.ts's, the same as state.db's (issue 32).
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SCHEMA_VERSION } from "../../core/state/fleet.js"
import { MIGRATION_STEPS, MIGRATIONS_TABLE, migrationsTable, POSTGRES } from "./stateSql.js"

export { SCHEMA_VERSION }

/** The advisory lock namespace of every fleet lock (`pg_advisory_xact_lock(FLEET_LOCK, key)`): "ocpl". */
export const FLEET_LOCK = 0x6f63706c
export const LOCK_POOL = 1
export const LOCK_PERMITS = 2
export const LOCK_MIGRATE = 3

export { MIGRATIONS_TABLE }

/** Every migration, by id (`1_fleet`, `2_context`, `3_engines`): the statements of stateSql.ts in PostgreSQL's dialect. */
export const MIGRATIONS = Object.fromEntries(
  MIGRATION_STEPS.map((step) => [
    `${step.id}_${step.name}`,
    Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(step.statements(POSTGRES), (statement) => sql.unsafe(statement), { discard: true }))
  ])
)

/** Creates the schema and runs what is missing, under the migration lock; the ids it ran. */
export const migrate = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.gen(function* () {
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${FLEET_LOCK}, ${LOCK_MIGRATE})`
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        // the migrator probes its table with a query that fails when it is missing, which would abort
        // this transaction: it is created here first, as the migrator would create it
        yield* sql.unsafe(migrationsTable(POSTGRES))
        return yield* Migrator.make({})({ loader: Migrator.fromRecord(MIGRATIONS), table: MIGRATIONS_TABLE })
      })
    )
  }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

/** The schema version the server holds (0: none yet). */
export const schemaVersion = (sql: SqlClient.SqlClient) => Effect.gen(function* () {
  const rows = yield* sql<{ readonly v: number | null }>`SELECT max(migration_id) AS v FROM ${sql(MIGRATIONS_TABLE)}`.pipe(
    Effect.catchAll(() => Effect.succeed([{ v: 0 }]))
  )
  return rows[0]?.v ?? 0
})
