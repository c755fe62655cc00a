/** The SQL parts (src/layers/state/sqlRecords.ts) over a migrated SQLite database of the test's own, every statement run at once. */
import { Effect } from "effect"
import { RecordsError } from "../../src/layers/state/sharedStateOver.js"
import { openSqlite, sqliteReason, type SqliteDb } from "../../src/layers/state/sqliteDriver.js"
import { migrateSqlite } from "../../src/layers/state/sqliteSchema.js"
import type { SqlExec } from "../../src/layers/state/sqlRecords.js"
import { SQLITE, type Query } from "../../src/layers/state/stateSql.js"

/** A database at `path` (default: in memory), migrated. */
export const migratedDb = (path = ":memory:"): SqliteDb => {
  const db = openSqlite(path)
  migrateSqlite(db)
  return db
}

/** Statements on `db` (autocommit): a failure is a `RecordsError`, as the backend's. */
export const execOnDb = (db: SqliteDb): SqlExec => ({
  dialect: SQLITE,
  all: <R>(q: Query) => Effect.try({ try: () => db.all<R>(q.text, q.params), catch: (e) => new RecordsError({ reason: sqliteReason(e) }) }),
  run: (q: Query) => Effect.try({ try: () => db.run(q.text, q.params), catch: (e) => new RecordsError({ reason: sqliteReason(e) }) })
})
