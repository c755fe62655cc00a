/**
 * The embedded state database's driver (issue 32): one small synchronous interface over the two
 * SQLite builds the project runs on, chosen by the runtime: `bun:sqlite` inside opencode (Bun), and
 * `better-sqlite3` under Node (the CLI, the tests). Neither is imported statically: the boot entry
 * loads neither, and Bun never loads better-sqlite3 (it does not run there). `@effect/sql-sqlite-bun`
 * is not used: its 3.x line expects an older `@effect/sql` than the one the project pins, and the
 * shared state needs synchronous calls anyway (a pick's transaction costs ~0.1 ms; an asynchronous
 * round trip per statement would cost more than the work).
 *
 * Statements are prepared once per connection and cached by their text. Parameters are positional
 * (`?`), each used once, in order (src/layers/state/stateSql.ts builds them).
 */
import { chmodSync, closeSync, openSync } from "node:fs"
import { createRequire } from "node:module"

/** What a parameter may be. */
export type SqlValue = string | number | bigint | null

export interface SqliteDb {
  readonly driver: "bun:sqlite" | "better-sqlite3"
  readonly path: string
  /** Runs statements without parameters (pragmas, DDL, BEGIN/COMMIT). */
  readonly exec: (sql: string) => void
  readonly all: <R>(sql: string, params?: ReadonlyArray<SqlValue>) => ReadonlyArray<R>
  readonly run: (sql: string, params?: ReadonlyArray<SqlValue>) => number
  /** Whether a transaction is open on this connection. */
  readonly inTransaction: () => boolean
  readonly close: () => void
}

interface RawStatement {
  run(...params: Array<SqlValue>): { changes: number | bigint }
  all(...params: Array<SqlValue>): Array<unknown>
}

interface RawDb {
  exec(sql: string): unknown
  prepare(sql: string): RawStatement
  close(): unknown
  readonly inTransaction: boolean
}

/** The SQLite error code of a failure (`SQLITE_BUSY`, …), when it has one. */
export const sqliteCode = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/** The database is held by another connection's write (or a lock it needs is): wait and try again. */
export const isBusy = (e: unknown): boolean => {
  const code = sqliteCode(e)
  return code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/** One line for a failure. */
export const sqliteReason = (e: unknown): string => {
  const message = e instanceof Error ? e.message : String(e)
  const code = sqliteCode(e)
  return `${message.split("\n")[0]}${code !== undefined && !message.includes(code) ? ` (${code})` : ""}`
}

/** Whether this process runs on Bun (opencode's runtime). */
export const onBun = (): boolean => typeof (globalThis as { Bun?: unknown }).Bun !== "undefined"

const load = createRequire(import.meta.url)

const openRaw = (path: string, readonly: boolean): { readonly raw: RawDb; readonly driver: SqliteDb["driver"] } => {
  if (onBun()) {
    const { Database } = load("bun:sqlite") as { Database: new (path: string, options: object) => RawDb }
    return { raw: new Database(path, readonly ? { readonly: true } : { create: true, readwrite: true }), driver: "bun:sqlite" }
  }
  const Database = load("better-sqlite3") as new (path: string, options: object) => RawDb
  // the busy wait is set per transaction (PRAGMA busy_timeout), never the driver's 5 s default
  return { raw: new Database(path, { readonly, fileMustExist: readonly, timeout: 0 }), driver: "better-sqlite3" }
}

/**
 * Opens `path` (`:memory:` for a database of this process only); a new file is made 0600 first (its
 * WAL and shared-memory files take its mode). Throws what the driver throws.
 */
export const openSqlite = (path: string, options: { readonly readonly?: boolean } = {}): SqliteDb => {
  const readonly = options.readonly === true
  if (path !== ":memory:" && !readonly) {
    const fd = openSync(path, "a", 0o600)
    closeSync(fd)
    try {
      chmodSync(path, 0o600)
    } catch {
      // not ours to change: the directory's mode guards it
    }
  }
  const { raw, driver } = openRaw(path, readonly)
  const statements = new Map<string, RawStatement>()
  const prepared = (sql: string): RawStatement => {
    let s = statements.get(sql)
    if (s === undefined) {
      s = raw.prepare(sql)
      statements.set(sql, s)
    }
    return s
  }
  return {
    driver,
    path,
    exec: (sql) => void raw.exec(sql),
    all: <R>(sql: string, params: ReadonlyArray<SqlValue> = []) => prepared(sql).all(...params) as ReadonlyArray<R>,
    run: (sql, params = []) => Number(prepared(sql).run(...params).changes),
    inTransaction: () => raw.inTransaction,
    close: () => {
      statements.clear()
      raw.close()
    }
  }
}
