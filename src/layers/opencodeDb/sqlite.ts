/**
 * What both readers of opencode's database (RetentionSqlite, CostSqlite) do alike over an
 * `@effect/sql` SqlClient: the busy timeout, statements of their own text for each open attempt, the
 * schema check, and SQLite's failures as the typed errors of services/opencodeDb/errors.ts.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect } from "effect"
import { DB_BUSY_TIMEOUT_MS } from "../../core/constants.js"
import { DbBusy, DbFailed, NotOpencodeDb } from "../../services/opencodeDb/errors.js"

const codeOf = (e: SqlError.SqlError): string => {
  const cause = e.cause as { readonly code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : ""
}

/** The driver's own message (SQLite's words), else the client's. */
export const sqliteMessage = (e: SqlError.SqlError): string => {
  const cause = e.cause as { readonly message?: unknown } | undefined
  return typeof cause?.message === "string" ? cause.message : e.message
}

/** Whether SQLite answered SQLITE_BUSY or SQLITE_LOCKED (extended codes included): another connection held the lock past the busy timeout. */
export const isLockConflict = (e: SqlError.SqlError): boolean => /^SQLITE_(BUSY|LOCKED)/.test(codeOf(e))

/** What SQLite said of a failure: its result code (when the driver gave one) and its words. */
const said = (e: SqlError.SqlError): { readonly code?: string; readonly detail: string } => {
  const code = codeOf(e)
  return code === "" ? { detail: sqliteMessage(e) } : { code, detail: sqliteMessage(e) }
}

/** A failed statement: DbBusy for a lock conflict (the caller backs off), DbFailed otherwise. */
export const busyOrFailed = (e: SqlError.SqlError): DbBusy | DbFailed => (isLockConflict(e) ? new DbBusy(said(e)) : new DbFailed(said(e)))

/** A failed open step: DbBusy for a lock conflict; any other failure means the file is not a database this tool reads. */
export const busyOrNotOpencodeDb = (e: SqlError.SqlError): DbBusy | NotOpencodeDb =>
  isLockConflict(e) ? new DbBusy(said(e)) : new NotOpencodeDb({ problem: "refused", ...said(e) })

/** `PRAGMA busy_timeout` (SPEC §1 DB_BUSY_TIMEOUT_MS unless given; tests shorten it). */
export const setBusyTimeout = (sql: SqlClient.SqlClient, ms: number | undefined) => sql.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(ms ?? DB_BUSY_TIMEOUT_MS))}`)

/**
 * Statements of one attempt. The client caches a prepared statement by its text, and a failed prepare
 * too (a lock held by another connection fails the prepare that reads the schema): each attempt,
 * begun by `next` when the schema check runs again under the busy back-off, therefore runs statements
 * of its own text.
 */
export const openAttempts = (sql: SqlClient.SqlClient) => {
  let attempt = 0
  return {
    next: Effect.sync(() => void attempt++),
    run: <A extends object>(text: string, params: ReadonlyArray<unknown> = []) => sql.unsafe<A>(`${text} /* attempt ${attempt} */`, params)
  }
}

export type OpenAttempts = ReturnType<typeof openAttempts>

/** Fails with NotOpencodeDb unless every table named has at least its columns, with DbBusy when a lock kept it from reading them. */
export const requireColumns = (attempts: OpenAttempts, required: Readonly<Record<string, ReadonlyArray<string>>>): Effect.Effect<void, NotOpencodeDb | DbBusy> =>
  Effect.forEach(
    Object.entries(required),
    ([table, columns]) =>
      attempts.run<{ name: string }>("SELECT name FROM pragma_table_info(?)", [table]).pipe(
        Effect.mapError(busyOrNotOpencodeDb),
        Effect.flatMap((info) => {
          if (info.length === 0) return new NotOpencodeDb({ problem: "no-table", table })
          const have = new Set(info.map((c) => c.name))
          const missing = columns.filter((c) => !have.has(c))
          return missing.length === 0 ? Effect.void : new NotOpencodeDb({ problem: "no-columns", table, columns: missing })
        })
      ),
    { discard: true }
  )
