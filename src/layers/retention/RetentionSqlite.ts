/**
 * RetentionStore over any `@effect/sql` SqlClient (SPEC §11): better-sqlite3 in the Node CLI, and any
 * other SQLite driver that speaks the same SQL. Every write is one `BEGIN IMMEDIATE … COMMIT`, so the
 * sweep takes the write lock up front (waiting out `busy_timeout`) and never upgrades a read snapshot.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Effect, Exit, Layer, Option } from "effect"
import type { EventRow } from "../../core/retention/events.js"
import { RetentionStore, type SessionRow, type SessionTable, type TreeDelete, type TreeOutcome } from "../../services/retention/RetentionStore.js"
import { busyOrFailed, busyOrNotOpencodeDb, openAttempts, requireColumns, setBusyTimeout } from "../opencodeDb/sqlite.js"
import { traced } from "../hotPath.js"

/** The columns the sweeps read or match on; anything less is not an opencode database this tool understands. */
export const REQUIRED_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  session: ["id", "project_id", "workspace_id", "parent_id", "directory", "title", "time_created", "time_updated"],
  event: ["id", "aggregate_id", "data"],
  event_sequence: ["aggregate_id", "owner_id"]
}

export interface RetentionSqliteOptions {
  /** `PRAGMA busy_timeout` (SPEC §1 DB_BUSY_TIMEOUT_MS); tests shorten it. */
  readonly busyTimeoutMs?: number
}

/**
 * The store's methods are traced as `RetentionStore.<method>`; a member that is an Effect rather than
 * a function is its traced body applied to no arguments (it runs afresh each time it is run).
 */
export const RetentionSqlite = (options: RetentionSqliteOptions = {}) =>
  Layer.effect(
    RetentionStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const attempts = openAttempts(sql)
      const pragmas = Effect.gen(function* () {
        yield* setBusyTimeout(sql, options.busyTimeoutMs)
        yield* sql.unsafe("PRAGMA foreign_keys = ON")
        const mode = yield* attempts.run<{ journal_mode: string }>("PRAGMA journal_mode")
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
        checkSchema: traced("RetentionStore.checkSchema")(function* () {
          yield* attempts.next
          if (unreported !== undefined) {
            const failure = unreported
            unreported = undefined
            return yield* busyOrNotOpencodeDb(failure)
          }
          if (pragmasFailed) {
            yield* pragmas.pipe(Effect.mapError(busyOrNotOpencodeDb))
            pragmasFailed = false
          }
          yield* requireColumns(attempts, REQUIRED_COLUMNS)
        })(),

        sessions: traced("RetentionStore.sessions")(function* () {
          const rows = yield* sql<{
            id: string
            project_id: string
            parent_id: string | null
            workspace_id: string | null
            directory: string
            title: string
            time_created: number
            time_updated: number
          }>`SELECT id, project_id, parent_id, workspace_id, directory, title, time_created, time_updated FROM session`
          return rows.map(
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
        }, Effect.mapError(busyOrFailed))(),

        syncedAggregates: traced("RetentionStore.syncedAggregates")(function* () {
          const rows = yield* sql<{ aggregate_id: string }>`SELECT aggregate_id FROM event_sequence WHERE owner_id IS NOT NULL`
          return new Set(rows.map((r) => r.aggregate_id)) as ReadonlySet<string>
        }, Effect.mapError(busyOrFailed))(),

        sessionTables: traced("RetentionStore.sessionTables")(function* () {
          const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
            AND name NOT IN ('session', 'event', 'event_sequence') ORDER BY name`
          const out: Array<SessionTable> = []
          for (const { name } of tables) {
            const columns = yield* sql<{ name: string }>`SELECT name FROM pragma_table_info(${name})`
            if (!columns.some((c) => c.name === "session_id")) continue
            const refs = yield* sql<{ table: string }>`SELECT "table" FROM pragma_foreign_key_list(${name})`
            out.push({ name, references: refs.map((r) => r.table) })
          }
          return out as ReadonlyArray<SessionTable>
        }, Effect.mapError(busyOrFailed))(),

        scanEvents: traced("RetentionStore.scanEvents")(function* (pageSize: number, onPage: (rows: ReadonlyArray<EventRow>) => void) {
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
        }, Effect.mapError(busyOrFailed)),

        countTree: traced("RetentionStore.countTree")((tree: TreeDelete) => treeCounts(tree), Effect.mapError(busyOrFailed)),

        treeChanged: traced("RetentionStore.treeChanged")((tree: TreeDelete) => changedSince(tree), Effect.mapError(busyOrFailed)),

        deleteTree: traced("RetentionStore.deleteTree")(function* (tree: TreeDelete) {
          const { value, ms } = yield* immediate(
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
          )
          return (value._tag === "Deleted" ? { _tag: "Deleted", rows: value.rows, ms } : value) satisfies TreeOutcome as TreeOutcome
        }, Effect.mapError(busyOrFailed)),

        deleteEvents: traced("RetentionStore.deleteEvents")(function* (events: { readonly ids: ReadonlyArray<string>; readonly aggregates: ReadonlyArray<string> }, graceCutoff: number) {
          const { value, ms } = yield* immediate(
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
          )
          return { ...value, ms }
        }, Effect.mapError(busyOrFailed)),

        checkpoint: traced("RetentionStore.checkpoint")(() => sql.unsafe("PRAGMA wal_checkpoint(PASSIVE)"), Effect.ignore)(),

        dataVersion: traced("RetentionStore.dataVersion")(function* () {
          const r = yield* sql<{ data_version: number }>`PRAGMA data_version`
          return Number(r[0]?.data_version ?? 0)
        }, Effect.orElseSucceed(() => 0))(),

        vacuum: traced("RetentionStore.vacuum")(function* () {
          yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
          yield* sql.unsafe("VACUUM")
          // In WAL mode VACUUM writes the new pages to the WAL; the file only shrinks once they are checkpointed.
          yield* sql.unsafe("PRAGMA wal_checkpoint(TRUNCATE)")
        }, Effect.mapError(busyOrFailed))()
      })
    })
  )
