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
 * (`?`), each used once, in order (src/layers/state/stateSql.ts builds them). The connection's
 * transactions (`sqliteTx`) are the second half of this file.
 */
import { chmodSync, closeSync, openSync } from "node:fs"
import { createRequire } from "node:module"
import { Effect, Exit } from "effect"
import { exclusive } from "../hotPath.js"

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

/*
 * Transactions (issue 32). One connection per port; an in-process
 * semaphore keeps its transactions apart (Effect fibers may interleave), and SQLite's own lock keeps the
 * processes apart: every write transaction is `BEGIN IMMEDIATE` … `COMMIT`, a view's read is a
 * deferred `BEGIN` (WAL: it never waits for a writer, nor makes one wait).
 *
 * Waiting for the database: SQLite's busy handler sleeps inside the call, which would stop the
 * process's event loop (opencode's whole server, inside Bun); so the busy timeout is a few
 * milliseconds and the rest of the wait is asynchronous, short sleeps on the real clock (the wait is
 * for other processes, whatever a test's clock says) until the deadline. `Infinity` waits as long as
 * it takes. A process killed inside a transaction holds nothing: the kernel drops its file locks and
 * SQLite rolls its journal back on the next open.
*/
/** How long one attempt may block inside SQLite before the wait turns asynchronous. */
export const SYNC_BUSY_MS = 5

/** The longest asynchronous pause between attempts. */
const MAX_PAUSE_MS = 8

/** A pause on the real clock (a TestClock never moves another process); `keepAlive: false`: one that never keeps the process alive. */
export const pause = (ms: number, keepAlive = true): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Math.max(0, ms))
    if (!keepAlive) timer.unref?.()
    return Effect.sync(() => clearTimeout(timer))
  })

/**
 * `attempt` until it is not busy, pausing between attempts (1 ms doubling to MAX_PAUSE_MS, jittered so
 * that waiting processes do not retry in step), for at most `waitMs`; `undefined` when the wait ran out.
 */
const whileBusy = <A, E, R>(attempt: Effect.Effect<{ readonly value: A } | "busy", E, R>, waitMs: number): Effect.Effect<{ readonly value: A } | undefined, E, R> =>
  Effect.suspend(() => {
    const deadline = Date.now() + waitMs
    let step = 1
    const loop: Effect.Effect<{ readonly value: A } | undefined, E, R> = Effect.flatMap(attempt, (got) => {
      if (got !== "busy") return Effect.succeed(got)
      const left = deadline - Date.now()
      if (left <= 0) return Effect.succeed(undefined)
      const ms = Math.min(left, step + Math.random() * step)
      step = Math.min(step * 2, MAX_PAUSE_MS)
      return Effect.zipRight(pause(ms), loop)
    })
    return loop
  })

/**
 * `f` run until it does not fail busy, pausing between attempts, for at most `waitMs`; a failure other
 * than busy, or busy past the wait, is the effect's failure (what `f` threw).
 */
export const untilFree = <A>(f: () => A, waitMs: number): Effect.Effect<A, unknown> =>
  Effect.suspend(() => {
    let lastBusy: unknown
    const attempt = Effect.suspend((): Effect.Effect<{ readonly value: A } | "busy", unknown> => {
      try {
        return Effect.succeed({ value: f() })
      } catch (e) {
        if (!isBusy(e)) return Effect.fail(e)
        lastBusy = e
        return Effect.succeed("busy")
      }
    })
    return Effect.flatMap(whileBusy(attempt, waitMs), (got) => (got === undefined ? Effect.fail(lastBusy) : Effect.succeed(got.value)))
  })

/** What a connection is doing: a write transaction, a read snapshot, or none. */
export type TxMode = "write" | "read" | "none"

export interface SqliteTx {
  readonly db: SqliteDb
  /** The current mode (the parts' writes are skipped in a read, queued outside a write). */
  readonly mode: () => TxMode
  /** `body` inside `BEGIN IMMEDIATE` … `COMMIT`, waiting at most `waitMs` for the database; `undefined` when the wait ran out (nothing ran). */
  readonly immediate: <A, E, R>(waitMs: number, body: Effect.Effect<A, E, R>) => Effect.Effect<{ readonly value: A } | undefined, E, R>
  /** `body` on a read snapshot (`BEGIN` … `COMMIT`): consistent, never blocking a writer. */
  readonly snapshot: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** `body` with the connection to itself, outside any transaction (a fail-open decision: reads autocommit). */
  readonly alone: <A, E, R>(body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Write transactions committed on this connection so far. */
  readonly commits: () => number
}

/** Ends an open transaction quietly (a failed statement may have ended it already). */
const rollback = (db: SqliteDb): void => {
  try {
    if (db.inTransaction()) db.exec("ROLLBACK")
  } catch {
    // nothing open any more
  }
}

/** Transactions on `db`, a connection from `openStateDb` (whose busy timeout is SYNC_BUSY_MS). */
export const sqliteTx = (db: SqliteDb): Effect.Effect<SqliteTx> =>
  Effect.gen(function* () {
    const gate = yield* Effect.makeSemaphore(1)
    // a free connection is taken without suspending (layers/exclusive.ts)
    const only = exclusive(gate)
    let mode: TxMode = "none"
    let commits = 0

    /** One attempt at the write lock: true when held; a failure other than busy is thrown. */
    const attempt = (): boolean => {
      try {
        db.exec("BEGIN IMMEDIATE")
        return true
      } catch (e) {
        if (isBusy(e)) return false
        throw e
      }
    }

    /**
     * `body` in mode `m` with its exit: the mode is "none" again however it ended. Callers run it with
     * the transaction's end in one uninterruptible region: a transaction interrupted half-way would leave
     * the connection inside it (every later BEGIN refused); bodies are short (statements on a local
     * database). One flag change instead of a bracket per layer (each leaves garbage for the next
     * scavenge, docs/PERFORMANCE.md).
     */
    const inMode = <A, E, R>(m: TxMode, body: Effect.Effect<A, E, R>): Effect.Effect<Exit.Exit<A, E>, never, R> =>
      Effect.suspend(() => {
        mode = m
        return Effect.tap(Effect.exit(body), () => void (mode = "none"))
      })

    /** With the connection to itself: the write lock taken (then `body` run and committed), or `busy`. */
    const once = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<{ readonly value: A } | "busy", E, R> =>
      only(
        Effect.uninterruptible(Effect.suspend((): Effect.Effect<{ readonly value: A } | "busy", E, R> => {
          if (!attempt()) return Effect.succeed("busy" as const)
          return Effect.flatMap(
            inMode("write", body),
            (exit): Effect.Effect<{ readonly value: A }, E> => {
              if (Exit.isFailure(exit)) {
                rollback(db)
                return Effect.failCause(exit.cause)
              }
              try {
                db.exec("COMMIT")
                commits++
              } catch (e) {
                rollback(db)
                return Effect.die(e)
              }
              return Effect.succeed({ value: exit.value })
            }
          )
        }))
      )

    // between attempts the connection is free for this process's other work (a queued write waiting
    // for the database must not hold up a spawn that will give up and decide without it)
    const immediate = <A, E, R>(waitMs: number, body: Effect.Effect<A, E, R>): Effect.Effect<{ readonly value: A } | undefined, E, R> => whileBusy(once(body), waitMs)

    const snapshot = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      only(
        Effect.uninterruptible(
          Effect.suspend(() => {
            db.exec("BEGIN")
            return Effect.flatMap(inMode("read", body), (exit) => (rollback(db), exit))
          })
        )
      )

    const alone = <A, E, R>(body: Effect.Effect<A, E, R>) => only(body)

    return { db, mode: () => mode, immediate, snapshot, alone, commits: () => commits }
  })
