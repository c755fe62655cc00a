/**
 * The embedded state database's schema (issue 32): the migrations of stateSql.ts applied in order and
 * recorded in the database itself (`ocpool_migrations`, as in a fleet's schema), each run once, inside
 * the caller's `BEGIN IMMEDIATE` (so two processes opening a new directory at once migrate it once).
 */
import { isBusy, type SqliteDb } from "./sqliteDriver.js"
import { MIGRATION_STEPS, MIGRATIONS_TABLE, migrationsTable, SQLITE } from "./stateSql.js"

/** The version this build migrates to. */
export const SQLITE_SCHEMA_VERSION = Math.max(...MIGRATION_STEPS.map((m) => m.id))

/** Applies the missing migrations (inside a write transaction); the ids it ran. Throws what SQLite throws. */
export const migrateSqlite = (db: SqliteDb): ReadonlyArray<number> => {
  db.exec(migrationsTable(SQLITE))
  const done = new Set(db.all<{ readonly migration_id: number }>(`SELECT migration_id FROM ${MIGRATIONS_TABLE}`).map((r) => Number(r.migration_id)))
  const ran: Array<number> = []
  for (const step of MIGRATION_STEPS) {
    if (done.has(step.id)) continue
    for (const statement of step.statements(SQLITE)) db.exec(statement)
    db.run(`INSERT INTO ${MIGRATIONS_TABLE} (migration_id, name) VALUES (?, ?)`, [step.id, step.name])
    ran.push(step.id)
  }
  return ran
}

/** The highest migration the database holds (0: none, or no such table). */
export const sqliteSchemaVersion = (db: SqliteDb): number => {
  try {
    const rows = db.all<{ readonly v: number | null }>(`SELECT max(migration_id) AS v FROM ${MIGRATIONS_TABLE}`)
    return Number(rows[0]?.v ?? 0)
  } catch (e) {
    // busy is the caller's to wait for; anything else (no such table yet) is version 0
    if (isBusy(e)) throw e
    return 0
  }
}
