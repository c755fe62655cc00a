/**
 * RetentionStore over any `@effect/sql` SqlClient (SPEC §11): better-sqlite3 in the Node CLI, and any
 * other SQLite driver that speaks the same SQL. Every write is one `BEGIN IMMEDIATE … COMMIT`, so the
 * sweep takes the write lock up front (waiting out `busy_timeout`) and never upgrades a read snapshot.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Effect, Exit, Layer, Option } from "effect"
import { DB_BUSY_TIMEOUT_MS } from "../../core/constants.js"
import type { EventRow } from "../../core/retention/events.js"
import { DbBusy, DbFailed, NotOpencodeDb, RetentionStore, type SessionRow, type SessionTable, type TreeDelete, type TreeOutcome } from "../../services/retention/RetentionStore.js"

/** The columns the sweeps read or match on; anything less is not an opencode database this tool understands. */
export const REQUIRED_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  session: ["id", "project_id", "workspace_id", "parent_id", "directory", "title", "time_created", "time_updated"],
  event: ["id", "aggregate_id", "data"],
  event_sequence: ["aggregate_id", "owner_id"]
}

const codeOf = (e: SqlError.SqlError): string => {
  const cause = e.cause as { readonly code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : ""
}

export const messageOf = (e: SqlError.SqlError): string => {
  const cause = e.cause as { readonly message?: unknown } | undefined
  return typeof cause?.message === "string" ? cause.message : e.message
}

export const isBusy = (e: SqlError.SqlError): boolean => /^SQLITE_(BUSY|LOCKED)/.test(codeOf(e))

export const busyOrFailed = (e: SqlError.SqlError) => (isBusy(e) ? new DbBusy({ reason: messageOf(e) }) : new DbFailed({ reason: messageOf(e) }))

export interface RetentionSqliteOptions {
  /** `PRAGMA busy_timeout` (SPEC §1 DB_BUSY_TIMEOUT_MS); tests shorten it. */
  readonly busyTimeoutMs?: number
}

export const RetentionSqlite = (options: RetentionSqliteOptions = {}) =>
  Layer.effect(
    RetentionStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      /**
       * The statements that open the database. The client caches a prepared statement by its text, and
       * a failed prepare too (a lock held by another connection fails the prepare that reads the
       * schema): each try of the open step therefore uses statements of its own text.
       */
      let openTry = 0
      const openStatement = (text: string) => `${text} /* open ${openTry} */`
      const pragmas = Effect.gen(function* () {
        yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DB_BUSY_TIMEOUT_MS))}`)
        yield* sql.unsafe("PRAGMA foreign_keys = ON")
        const mode = yield* sql.unsafe<{ journal_mode: string }>(openStatement("PRAGMA journal_mode"))
        // In WAL mode a commit need not fsync to stay consistent; opencode runs its database the same way.
        if (String(mode[0]?.journal_mode).toLowerCase() === "wal") {
          yield* sql.unsafe("PRAGMA synchronous = NORMAL")
          // Checkpoints run between transactions (`checkpoint`), not inside a commit.
          yield* sql.unsafe("PRAGMA wal_autocheckpoint = 0")
        }
      })
      // A file that is not SQLite fails here, and so does a database another connection has locked:
      // the schema check tells the two apart, and runs the pragmas again (under the busy back-off).
      // That first try counts as the schema check's first: its failure is reported there, not run again.
      let unreported = Option.getOrUndefined(yield* pragmas.pipe(Effect.flip, Effect.option))
      let pragmasFailed = unreported !== undefined
      const openProblem = (e: SqlError.SqlError) => (isBusy(e) ? new DbBusy({ reason: messageOf(e) }) : new NotOpencodeDb({ reason: messageOf(e) }))

      /** BEGIN IMMEDIATE, the body, COMMIT; ROLLBACK on any failure. Returns the time the write lock was held. */
      const immediate = <A, E>(body: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<{ readonly value: A; readonly ms: number }, E | SqlError.SqlError> =>
        Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            yield* sql.unsafe("BEGIN IMMEDIATE")
            const start = yield* Clock.currentTimeMillis
            const exit = yield* Effect.exit(restore(body).pipe(Effect.tap(() => sql.unsafe("COMMIT"))))
            if (Exit.isFailure(exit)) yield* sql.unsafe("ROLLBACK").pipe(Effect.ignore)
            const value = yield* exit
            return { value, ms: (yield* Clock.currentTimeMillis) - start }
          })
        )

      /**
       * `column IN (...)` with the values as one JSON array parameter: any number of ids, no variable
       * limit, and SQL text that never changes, so each statement is prepared once.
       */
      const inList = (column: string, values: ReadonlyArray<string>) => sql`${sql(column)} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`

      const countIn = (table: string, column: string, ids: ReadonlyArray<string>) =>
        sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(table)} WHERE ${inList(column, ids)}`.pipe(Effect.map((r) => Number(r[0]?.n ?? 0)))

      const deleteIn = (table: string, column: string, ids: ReadonlyArray<string>) => sql`DELETE FROM ${sql(table)} WHERE ${inList(column, ids)}`

      /** Per-table counts of a tree, in deletion order (the same queries for a dry run and for the real one). */
      const treeCounts = (tree: TreeDelete) =>
        Effect.gen(function* () {
          const rows: Record<string, number> = {}
          for (const table of tree.tables) rows[table] = yield* countIn(table, "session_id", tree.ids)
          if (tree.withEvents) {
            rows.event = yield* countIn("event", "aggregate_id", tree.ids)
            rows.event_sequence = yield* countIn("event_sequence", "aggregate_id", tree.ids)
          }
          rows.session = yield* countIn("session", "id", tree.ids)
          return rows
        })

      /** Why a planned tree must stay after all: it changed between planning and its transaction. */
      const changedSince = (tree: TreeDelete) =>
        Effect.gen(function* () {
          const active = yield* sql<{ n: number }>`SELECT count(*) AS n FROM session WHERE ${inList("id", tree.ids)}
            AND (time_updated >= ${tree.cutoffUpdated} OR workspace_id IS NOT NULL)`
          if (Number(active[0]?.n ?? 0) > 0) return "a session of the tree was updated or moved into a workspace"
          const synced = yield* sql<{ n: number }>`SELECT count(*) AS n FROM event_sequence WHERE ${inList("aggregate_id", tree.ids)} AND owner_id IS NOT NULL`
          if (Number(synced[0]?.n ?? 0) > 0) return "a session of the tree is now in sync"
          const members = new Set(tree.ids)
          const kids = yield* sql<{ id: string }>`SELECT id FROM session WHERE ${inList("parent_id", tree.ids)}`
          return kids.some((k) => !members.has(k.id)) ? "a session was added to the tree" : undefined
        })

      return RetentionStore.of({
        checkSchema: Effect.gen(function* () {
          openTry++
          if (unreported !== undefined) {
            const failure = unreported
            unreported = undefined
            return yield* openProblem(failure)
          }
          if (pragmasFailed) {
            yield* pragmas.pipe(Effect.mapError(openProblem))
            pragmasFailed = false
          }
          for (const [table, columns] of Object.entries(REQUIRED_COLUMNS)) {
            const info = yield* sql.unsafe<{ name: string }>(openStatement("SELECT name FROM pragma_table_info(?)"), [table]).pipe(Effect.mapError(openProblem))
            if (info.length === 0) return yield* new NotOpencodeDb({ reason: `no table '${table}'` })
            const have = new Set(info.map((c) => c.name))
            const missing = columns.filter((c) => !have.has(c))
            if (missing.length > 0) return yield* new NotOpencodeDb({ reason: `table '${table}' has no column ${missing.map((c) => `'${c}'`).join(", ")}` })
          }
        }),

        sessions: sql<{
          id: string
          project_id: string
          parent_id: string | null
          workspace_id: string | null
          directory: string
          title: string
          time_created: number
          time_updated: number
        }>`SELECT id, project_id, parent_id, workspace_id, directory, title, time_created, time_updated FROM session`.pipe(
          Effect.map((rows) =>
            rows.map(
              (r): SessionRow => ({
                id: r.id,
                projectId: r.project_id,
                parentId: r.parent_id,
                workspaceId: r.workspace_id,
                directory: r.directory,
                title: r.title,
                timeCreated: Number(r.time_created),
                timeUpdated: Number(r.time_updated)
              })
            )
          ),
          Effect.mapError(busyOrFailed)
        ),

        syncedAggregates: sql<{ aggregate_id: string }>`SELECT aggregate_id FROM event_sequence WHERE owner_id IS NOT NULL`.pipe(
          Effect.map((rows) => new Set(rows.map((r) => r.aggregate_id))),
          Effect.mapError(busyOrFailed)
        ),

        sessionTables: Effect.gen(function* () {
          const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
            AND name NOT IN ('session', 'event', 'event_sequence') ORDER BY name`
          const out: Array<SessionTable> = []
          for (const { name } of tables) {
            const columns = yield* sql<{ name: string }>`SELECT name FROM pragma_table_info(${name})`
            if (!columns.some((c) => c.name === "session_id")) continue
            const refs = yield* sql<{ table: string }>`SELECT "table" FROM pragma_foreign_key_list(${name})`
            out.push({ name, references: refs.map((r) => r.table) })
          }
          return out
        }).pipe(Effect.mapError(busyOrFailed)),

        scanEvents: (pageSize, onPage) =>
          Effect.gen(function* () {
            let after = Number.MIN_SAFE_INTEGER
            let total = 0
            for (;;) {
              // octet_length reads the size from the record header, not the text.
              const values = yield* sql`SELECT rowid, id, aggregate_id, octet_length(data) FROM event
                WHERE rowid > ${after} ORDER BY rowid LIMIT ${pageSize}`.values
              // id and aggregate_id are NOT NULL text columns, octet_length an integer: the row is an EventRow.
              const page = values as unknown as ReadonlyArray<EventRow>
              if (page.length === 0) return total
              total += page.length
              after = Number(page[page.length - 1]![0])
              onPage(page)
            }
          }).pipe(Effect.mapError(busyOrFailed)),

        countTree: (tree) => treeCounts(tree).pipe(Effect.mapError(busyOrFailed)),

        treeChanged: (tree) => changedSince(tree).pipe(Effect.mapError(busyOrFailed)),

        deleteTree: (tree) =>
          immediate(
            Effect.gen(function* () {
              const reason = yield* changedSince(tree)
              if (reason !== undefined) return { _tag: "Changed", reason } as const
              const rows = yield* treeCounts(tree)
              for (const table of tree.tables) yield* deleteIn(table, "session_id", tree.ids)
              if (tree.withEvents) {
                yield* deleteIn("event", "aggregate_id", tree.ids)
                yield* deleteIn("event_sequence", "aggregate_id", tree.ids)
              }
              yield* deleteIn("session", "id", tree.ids)
              return { _tag: "Deleted", rows } as const
            })
          ).pipe(
            Effect.map(({ value, ms }): TreeOutcome => (value._tag === "Deleted" ? { _tag: "Deleted", rows: value.rows, ms } : value)),
            Effect.mapError(busyOrFailed)
          ),

        deleteEvents: (events, graceCutoff) =>
          immediate(
            Effect.gen(function* () {
              const aggregates = [...new Set(events.aggregates)]
              // Protection is re-checked under the write lock: a session may have gone into sync, into a
              // workspace, or back to work since the scan.
              const kept = new Set<string>()
              const synced = yield* sql<{ id: string }>`SELECT aggregate_id AS id FROM event_sequence WHERE ${inList("aggregate_id", aggregates)} AND owner_id IS NOT NULL`
              const active = yield* sql<{ id: string }>`SELECT id FROM session WHERE ${inList("id", aggregates)} AND (workspace_id IS NOT NULL OR time_updated >= ${graceCutoff})`
              for (const r of [...synced, ...active]) kept.add(r.id)
              const ids = kept.size === 0 ? events.ids : events.ids.filter((_, i) => !kept.has(events.aggregates[i]!))
              if (ids.length === 0) return { rows: 0, kept: [...kept] }
              yield* deleteIn("event", "id", ids)
              const changed = yield* sql<{ n: number }>`SELECT changes() AS n`
              return { rows: Number(changed[0]?.n ?? 0), kept: [...kept] }
            })
          ).pipe(
            Effect.map(({ value, ms }) => ({ ...value, ms })),
            Effect.mapError(busyOrFailed)
          ),

        checkpoint: sql.unsafe("PRAGMA wal_checkpoint(PASSIVE)").pipe(Effect.ignore),

        dataVersion: sql<{ data_version: number }>`PRAGMA data_version`.pipe(
          Effect.map((r) => Number(r[0]?.data_version ?? 0)),
          Effect.orElseSucceed(() => 0)
        ),

        vacuum: Effect.gen(function* () {
          yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
          yield* sql.unsafe("VACUUM")
          // In WAL mode VACUUM writes the new pages to the WAL; the file only shrinks once they are checkpointed.
          yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
        }).pipe(Effect.mapError(busyOrFailed))
      })
    })
  )
