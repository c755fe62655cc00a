/**
 * What the SQLite backend says of its state database when inspected (issue 32; asked through the port
 * since issue 34): its size, its WAL's size, its schema version and `PRAGMA quick_check`, read on a
 * read-only connection (it never waits for a writer, nor makes one wait); and the files an earlier
 * version left in the state directory.
 */
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { isImportable, isLeftover } from "./legacyImport.js"
import { STATE_DB } from "../../core/stateTrust.js"
import type { Leftovers, StateInspection, StoreHealth } from "../../services/state/SharedState.js"
import { openSqlite, sqliteReason } from "./sqliteDriver.js"
import { sqliteSchemaVersion } from "./sqliteSchema.js"


const sizeOf = (path: string): number => {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** The database of `dir`; never throws. */
export const stateDbFacts = (dir: string): StoreHealth => {
  const path = join(dir, STATE_DB)
  let bytes: number
  try {
    bytes = statSync(path).size
  } catch {
    return { _tag: "Missing" }
  }
  try {
    const db = openSqlite(path, { readonly: true })
    try {
      db.exec("PRAGMA busy_timeout = 1000")
      const rows = db.all<{ quick_check: string }>("PRAGMA quick_check")
      const quickCheck = rows.map((r) => r.quick_check).join("; ")
      return { _tag: "Database", bytes, walBytes: sizeOf(`${path}-wal`), schemaVersion: sqliteSchemaVersion(db), quickCheck }
    } finally {
      db.close()
    }
  } catch (e) {
    return { _tag: "Unreadable", reason: sqliteReason(e) }
  }
}

/** An earlier version's files in `dir`: those still to import (the plugin's next start does), and those never read any more. */
export const leftoversIn = (dir: string): Leftovers => {
  let names: Array<string>
  try {
    names = readdirSync(dir).sort()
  } catch {
    names = []
  }
  return { toImport: names.filter(isImportable), unused: names.filter((n) => isLeftover(n) && !isImportable(n)) }
}

/**
 * The inspection of the state directory `dir` (undefined: none yet, so no database): its database and
 * an earlier version's files. No fleet: PostgreSQL's backend adds its own answer.
 */
export const stateDirHealth = (dir: string | undefined): StateInspection =>
  dir === undefined
    ? { store: { _tag: "Missing" }, leftovers: { toImport: [], unused: [] }, fleet: { _tag: "NotFleet" } }
    : { store: stateDbFacts(dir), leftovers: leftoversIn(dir), fleet: { _tag: "NotFleet" } }
