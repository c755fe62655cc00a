/** The SQL parts (src/layers/state/sqlRecords.ts) over a migrated SQLite database of the test's own, every statement run at once. */
import { directExec } from "../../src/layers/state/SharedStateSqlite.js"
import { openSqlite, type SqliteDb } from "../../src/layers/state/sqliteDriver.js"
import { migrateSqlite } from "../../src/layers/state/sqliteSchema.js"

/** A database at `path` (default: in memory), migrated. */
export const migratedDb = (path = ":memory:"): SqliteDb => {
  const db = openSqlite(path)
  migrateSqlite(db)
  return db
}

/** Statements on `db` (autocommit): a failure is a `RecordsError`, as the backend's. */
export const execOnDb = directExec
