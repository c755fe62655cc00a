/**
 * The fleet's tables (issue 22), created and migrated by the project itself with the `@effect/sql`
 * migrator: versioned (`ocpool_migrations` in the fleet's schema), idempotent, and safe when several
 * hosts start at once (the whole run holds a transaction-scoped advisory lock, so a second host waits
 * and then finds nothing to do). Records are stored as the text the file backend writes (the same
 * tolerant decoders read them back), with the columns the queries select and order on.
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SCHEMA_VERSION } from "../../core/state/fleet.js"

export { SCHEMA_VERSION }

/** The advisory lock namespace of every fleet lock (`pg_advisory_xact_lock(FLEET_LOCK, key)`): "ocpl". */
export const FLEET_LOCK = 0x6f63706c
export const LOCK_POOL = 1
export const LOCK_PERMITS = 2
export const LOCK_MIGRATE = 3

export const MIGRATIONS_TABLE = "ocpool_migrations"

const v1 = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // a holder: one row per process, its lease renewed by the heartbeat (with the decisions it made on files)
  yield* sql`CREATE TABLE IF NOT EXISTS holders (host text NOT NULL, pid integer NOT NULL, start_token text, lease_until bigint NOT NULL, seen_at bigint NOT NULL, fallbacks integer NOT NULL DEFAULT 0, PRIMARY KEY (host, pid))`
  // a process's claims (one row per plugin instance), `gen` orders its publishes
  yield* sql`CREATE TABLE IF NOT EXISTS claims (host text NOT NULL, pid integer NOT NULL, instance integer NOT NULL, gen bigint NOT NULL, body text NOT NULL, written_at bigint NOT NULL, PRIMARY KEY (host, pid, instance))`
  yield* sql`CREATE TABLE IF NOT EXISTS cooldowns (model text PRIMARY KEY, body text NOT NULL, expires_at bigint NOT NULL)`
  yield* sql`CREATE TABLE IF NOT EXISTS quota (model text PRIMARY KEY, body text NOT NULL, seen_at bigint NOT NULL)`
  yield* sql`CREATE TABLE IF NOT EXISTS fallbacks (session text PRIMARY KEY, body text NOT NULL, until bigint NOT NULL)`
  // permits: FIFO by the machine's seq (assigned under the fleet-wide permits lock), then the server's own order
  yield* sql`CREATE SEQUENCE IF NOT EXISTS permit_order`
  yield* sql`CREATE TABLE IF NOT EXISTS permits (id text PRIMARY KEY, seq bigint NOT NULL, pos bigint NOT NULL DEFAULT nextval('permit_order'), host text NOT NULL, pid integer NOT NULL, body text NOT NULL, written_at bigint NOT NULL)`
  yield* sql`CREATE INDEX IF NOT EXISTS permits_fifo ON permits (seq, pos)`
})

/** Every migration, by id: the schema version is the highest (SCHEMA_VERSION). */
export const MIGRATIONS = { "1_fleet": v1 } as const

/** Creates the schema and runs what is missing, under the migration lock; the ids it ran. */
export const migrate = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.gen(function* () {
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(${FLEET_LOCK}, ${LOCK_MIGRATE})`
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        // the migrator probes its table with a query that fails when it is missing, which would abort
        // this transaction: it is created here first, as the migrator would create it
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (migration_id integer PRIMARY KEY, created_at timestamp with time zone NOT NULL DEFAULT now(), name text NOT NULL)`
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
