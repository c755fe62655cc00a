/**
 * The shared-state port over SQLite (issue 32), the embedded default: one database `state.db` in the
 * state directory (WAL, `synchronous=NORMAL`, file 0600 in a 0700 directory) that every process on the
 * machine shares. Its parts are the SQL ones (sqlRecords.ts, the statements PostgreSQL runs too),
 * composed by `sharedStateOver`; transactions are sqliteTx.ts's `BEGIN IMMEDIATE`.
 *
 * Contention (docs/OPERATIONS.md, "Contention"):
 * - a spawn's decision waits for the database at most `lockWaitMs`; then it decides on what it reads
 *   without the lock (WAL readers never wait) and its writes are queued, written in order as soon as
 *   the database is free (the next transaction of this process writes them first), counted as a
 *   fail-open and warned about at most once a minute;
 * - a permit step (`needs.permits`) never fails open: it waits as long as it takes, so no request or
 *   release is lost and nothing is granted twice;
 * - views read a snapshot, never waiting for a writer nor making one wait.
 *
 * Opening: the schema is migrated (ids recorded in the database) and an earlier version's cooldown,
 * quota and fallback files are imported, once, in one write transaction. A directory that cannot hold
 * the database leaves the records in a database of this process only (`:memory:`), with one warning.
 */
import { Effect, Layer, Ref, Scope, Stream } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { DEAD_FILE_MS } from "../../core/constants.js"
import { STATE_DB } from "../../core/stateTrust.js"
import { spokenDuration } from "../../core/time.js"
import { failOpen, NO_FAIL_OPENS } from "../../core/lock/failOpen.js"
import { optionalLog } from "../../services/opencode/AppLog.js"
import { SharedState, type Commit, type SharedStateService } from "../../services/state/SharedState.js"
import { StateDir, type StateDirService } from "../../services/state/StateDir.js"
import { dirChanges } from "../fs/dirChanges.js"
import { hasLegacy, markImported, readLegacy } from "./legacyImport.js"
import { stateDirHealth } from "./stateDbFacts.js"
import { procJudge } from "./permitJudge.js"
import { RecordsError, sharedStateOver, wroteSomething, type StateLock } from "./sharedStateOver.js"
import { migrateSqlite, SQLITE_SCHEMA_VERSION, sqliteSchemaVersion } from "./sqliteSchema.js"
import { memoryState } from "./MemoryState.js"
import { memoryPort } from "./SharedStateMemory.js"
import { sqlClaims, sqlContext, sqlCooldowns, sqlEngines, type SqlExec, sqlFallbacks, sqlLearned, sqlPermits, sqlQuota, takeInstance } from "./sqlRecords.js"
import { sqlCounters } from "./sqlCounters.js"
import { openSqlite, pause, sqliteReason, sqliteTx, SYNC_BUSY_MS, untilFree, type SqliteDb, type SqliteTx } from "./sqliteDriver.js"
import { SQLITE, type Query } from "./stateSql.js"
import { spanned } from "../hotPath.js"

export { STATE_DB }

/** How long opening waits to migrate a database another process holds (then: this process's own, in memory). */
export const OPEN_WAIT_MS = 10_000

/** How long leaving waits to write what is queued and remove this process's claims. */
const LEAVE_WAIT_MS = 2_000

/**
 * Checkpoints (copying the WAL's pages into the database, with an fsync) are made when this process
 * has committed and then nothing for this long, between spawns rather than inside one: SQLite's own
 * checkpoint runs in whichever commit crosses its threshold, a 1–4 ms pause of that spawn (bench:route).
 */
export const CHECKPOINT_IDLE_MS = 250

/** SQLite's own checkpoint stays, as the bound of a WAL that never sees an idle moment: 4,000 pages (16 MB). */
const AUTOCHECKPOINT_PAGES = 4_000

/** A passive checkpoint once the connection's commits stop for CHECKPOINT_IDLE_MS (a busy database: the next idle moment). */
const checkpointWhenIdle = (tx: SqliteTx): Effect.Effect<never> =>
  Effect.suspend(() => {
    let seen = tx.commits()
    let done = seen
    return Effect.forever(
      Effect.zipRight(
        pause(CHECKPOINT_IDLE_MS, false),
        Effect.suspend(() => {
          const now = tx.commits()
          const quiet = now === seen
          seen = now
          if (!quiet || now === done) return Effect.void
          return tx.alone(
            Effect.sync(() => {
              try {
                tx.db.exec("PRAGMA wal_checkpoint(PASSIVE)")
                done = now
              } catch {
                // busy or failing: the next idle moment tries again; SQLite's own threshold bounds the WAL meanwhile
              }
            })
          )
        })
      )
    )
  })

/** Opens a database and applies the pragmas every connection needs. Throws what SQLite throws. */
export const openStateDb = (path: string): SqliteDb => {
  const db = openSqlite(path)
  try {
    db.exec(`PRAGMA busy_timeout = ${SYNC_BUSY_MS}`)
    if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL")
    db.exec("PRAGMA synchronous = NORMAL")
    return db
  } catch (e) {
    db.close()
    throw e
  }
}

/** The connection of a port: the directory's `state.db` migrated (and earlier files imported), or one in memory with why. */
const connect = (dir: string | undefined, trusted: boolean): Effect.Effect<{ readonly tx: SqliteTx; readonly warning?: string }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const inMemory = (warning?: string) =>
      Effect.gen(function* () {
        const db = openStateDb(":memory:")
        yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
        const tx = yield* sqliteTx(db)
        yield* tx.immediate(Number.POSITIVE_INFINITY, Effect.sync(() => migrateSqlite(db)))
        return warning === undefined ? { tx } : { tx, warning }
      })
    if (dir === undefined) return yield* inMemory()
    const path = join(dir, STATE_DB)
    // another process making the database, or recovering its WAL, holds it a moment: waited for
    const made = yield* Effect.either(untilFree(() => openStateDb(path), OPEN_WAIT_MS))
    if (made._tag === "Left") return yield* inMemory(`${path} unusable (${sqliteReason(made.left)}); shared state kept in this process only`)
    const db = made.right
    yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
    const tx = yield* sqliteTx(db)
    db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
    yield* Effect.forkScoped(checkpointWhenIdle(tx))
    const exec = execOn(tx, [])
    // most opens find the schema current and nothing to import: no write transaction at all
    const current = untilFree(() => sqliteSchemaVersion(db) >= SQLITE_SCHEMA_VERSION && !hasLegacy(dir), OPEN_WAIT_MS).pipe(Effect.mapError(sqliteReason))
    const opened = yield* current.pipe(
      Effect.flatMap((ready) =>
        ready
          ? Effect.succeed({ value: [] as ReadonlyArray<string> })
          : tx.immediate(
              OPEN_WAIT_MS,
              Effect.gen(function* () {
                migrateSqlite(db)
                const legacy = readLegacy(dir, Date.now())
                if (legacy.files.length === 0) return legacy.files
                yield* sqlCooldowns(exec).merge(legacy.cooldowns)
                yield* sqlQuota(exec).write(legacy.quota)
                yield* sqlFallbacks(exec).write(legacy.fallbacks)
                if (legacy.context.length > 0) yield* sqlContext(exec).write({ put: legacy.context, remove: [] })
                return legacy.files
              }).pipe(Effect.mapError((e) => e.reason))
            )
      ),
      Effect.catchAllDefect((e) => Effect.fail(sqliteReason(e))),
      Effect.either
    )
    if (opened._tag === "Left" || opened.right === undefined)
      return yield* inMemory(`${path} could not be opened (${opened._tag === "Left" ? opened.left : `busy for ${spokenDuration(OPEN_WAIT_MS)}`}); shared state kept in this process only`)
    // renamed once what they held is committed (a second process importing them too only writes the same
    // records); in a directory that is not trusted nothing is renamed (imported again at each start)
    if (trusted) markImported(dir, opened.right.value)
    return { tx }
  })

/** Statements run on `db` as they come (autocommit, or inside whatever transaction is open); a failure is a `RecordsError`. */
export const directExec = (db: SqliteDb): SqlExec => ({
  dialect: SQLITE,
  all: <R>(q: Query) => Effect.try({ try: () => db.all<R>(q.text, q.params), catch: (e) => new RecordsError({ store: STATE_DB, access: "read", detail: sqliteReason(e) }) }),
  run: (q: Query) => Effect.try({ try: () => db.run(q.text, q.params), catch: (e) => new RecordsError({ store: STATE_DB, access: "write", detail: sqliteReason(e) }) })
})

/** How the parts' statements run on `tx`: writes skipped in a read snapshot, queued in `pending` outside a transaction. */
const execOn = (tx: SqliteTx, pending: Array<Query>): SqlExec => {
  const direct = directExec(tx.db)
  return {
    ...direct,
    run: (q: Query) =>
      Effect.suspend(() => {
        const mode = tx.mode()
        if (mode === "read") return Effect.succeed(0)
        if (mode === "none") return Effect.sync(() => (pending.push(q), 0))
        return direct.run(q)
      })
  }
}

/**
 * The port over `state`'s directory; `lockWaitMs`: how long a spawn's decision waits for the database;
 * `metrics`: whether a decision made without the lock is counted (`fail_opens_total`, issue 36).
 */
const makePort = (state: StateDirService, lockWaitMs: number, metrics = true) =>
  Effect.gen(function* () {
    const say = yield* optionalLog
    const { tx, warning } = yield* connect(state.dir, state.trusted === true)
    if (warning !== undefined) yield* say("warn", warning)
    const pending: Array<Query> = []
    const exec = execOn(tx, pending)
    const instance = yield* takeInstance
    const id = { host: state.host, pid: state.pid, startToken: state.startTime, instance, leaseMs: DEAD_FILE_MS }
    const claims = sqlClaims(exec, id)
    const failOpens = yield* Ref.make(NO_FAIL_OPENS)
    // fail-opens not counted yet: the commit of the very transaction that failed open takes them (its writes queued with it)
    let uncounted = 0

    /** The queued writes, in order, inside the write transaction that is open. */
    const writePending = Effect.sync(() => {
      const queued = pending.splice(0, pending.length)
      for (const q of queued) {
        try {
          tx.db.run(q.text, q.params)
        } catch {
          // a statement that cannot run now never will: the others still go
        }
      }
    })

    // the queue's writer: one at a time, as soon as the database is free, until nothing is queued
    let flushing = false
    const flushAll: Effect.Effect<void> = Effect.suspend(() =>
      pending.length === 0
        ? Effect.void
        : tx.immediate(Number.POSITIVE_INFINITY, writePending).pipe(
            Effect.catchAllDefect(() => pause(100)),
            Effect.zipRight(flushAll)
          )
    )
    const flushSoon = Effect.suspend(() => {
      if (flushing || pending.length === 0) return Effect.void
      flushing = true
      return flushAll.pipe(
        Effect.ensuring(Effect.sync(() => void (flushing = false))),
        Effect.forkDaemon,
        Effect.asVoid
      )
    })

    /** The database did not come free in time: `body` decided on what it reads, its writes queued (warned at most once a minute). */
    const failingOpen = <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        const now = Date.now()
        if (metrics) uncounted++
        return Ref.modify(failOpens, (m) => {
          const next = failOpen(m, now)
          return [next.warning, next.memory]
        }).pipe(
          Effect.flatMap((warn) => (warn === undefined ? Effect.void : say("warn", `${STATE_DB} busy; deciding on what it reads without the lock and writing when it is free`))),
          Effect.zipRight(tx.alone(body)),
          Effect.zipLeft(flushSoon)
        )
      })

    // flatMap chains, not a generator per call: a generator function made afresh on every call gets a
    // hidden class of its own, which keeps what the call captured until the next full collection
    // (every spawn's data promoted to the old generation: the p99 of bench:route, docs/PERFORMANCE.md)
    const lock: StateLock = {
      withLock: (body, waitMs, needs) => {
        // a permit step waits as long as it takes: a fail-open one could lose a request or grant twice
        const wait = needs?.permits === true ? Number.POSITIVE_INFINITY : (waitMs ?? lockWaitMs)
        return tx.immediate(wait, Effect.zipRight(writePending, body)).pipe(
          // a database that cannot be written at all (disk full, read-only): decided as a fail-open
          Effect.catchAllDefect((e) => Effect.as(say("warn", `${STATE_DB}: ${sqliteReason(e)}`), undefined)),
          Effect.flatMap((done) => (done !== undefined ? Effect.succeed(done.value) : failingOpen(body)))
        )
      },
      failOpens: Effect.map(Ref.get(failOpens), (m) => m.count),
      uncounted: () => {
        const n = uncounted
        uncounted = 0
        return n
      }
    }

    const over = yield* sharedStateOver({
      claims: claims.part,
      cooldowns: sqlCooldowns(exec),
      quota: sqlQuota(exec),
      fallbacks: sqlFallbacks(exec),
      permits: sqlPermits(exec, procJudge(state.host), DEAD_FILE_MS),
      context: sqlContext(exec),
      engines: sqlEngines(exec, id).part,
      learned: sqlLearned(exec),
      counters: sqlCounters(exec, state.host),
      lock,
      changes: { stream: state.dir === undefined ? Stream.never : Stream.map(dirChanges(state.dir), () => undefined), touch: Effect.void }
    })

    // leaving: what is queued is written, waiting a little for the database (the engine removes its claims itself)
    yield* Effect.addFinalizer(() =>
      pending.length === 0 ? Effect.void : tx.immediate(LEAVE_WAIT_MS, writePending).pipe(Effect.catchAllDefect(() => Effect.void), Effect.asVoid)
    )

    const service: SharedStateService = {
      ...over,
      // outside a transaction a commit is one of its own, with a spawn's wait
      commit: (now: number, c: Commit) => (wroteSomething(c) ? lock.withLock(over.commit(now, c)) : Effect.void.pipe(spanned("SharedState.commit"))),
      read: (now, needs) => tx.snapshot(over.read(now, needs)),
      removeOwn: lock.withLock(over.removeOwn, LEAVE_WAIT_MS),
      // a directory's database (the one this port has open, or why it could not), never the connection's
      // own memory; without a directory the records live in this process only
      inspect: (_now) => (state.dir === undefined ? over.inspect(_now) : Effect.sync(() => stateDirHealth(state.dir)).pipe(spanned("SharedState.inspect")))
    }
    return service
  })

/**
 * The port over `state`'s directory; `view`: a process that only looks (`ocpool status`, `top`,
 * `doctor`) makes no database where there is none (`ocpool status --state-dir ~` leaves a home alone):
 * until another process makes it, the view reads an empty state, and opens the database once it is there.
 */
export const makeSqliteState = (state: StateDirService, lockWaitMs: number, view = false, metrics = true): Effect.Effect<SharedStateService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = state.dir
    if (!view || (dir !== undefined && existsSync(join(dir, STATE_DB)))) return yield* makePort(state, lockWaitMs, metrics)
    // nothing to read yet: an empty state, without loading SQLite at all (a view's start stays quick)
    const empty = yield* memoryPort(memoryState(), state.pid, state.host)
    // a view of a directory that is not there yet: no database yet, nothing left by an earlier version
    const inspect = (_now: number) => Effect.sync(() => stateDirHealth(dir)).pipe(spanned("SharedState.inspect"))
    if (dir === undefined) return { ...empty, inspect }
    const scope = yield* Effect.scope
    let real: SharedStateService | undefined
    const current: Effect.Effect<SharedStateService> = Effect.suspend(() =>
      real !== undefined
        ? Effect.succeed(real)
        : existsSync(join(dir, STATE_DB))
          ? Effect.tap(Scope.extend(makePort(state, lockWaitMs, metrics), scope), (port) => Effect.sync(() => void (real = port)))
          : Effect.succeed(empty)
    )
    return {
      transact: (now, needs, decide) => Effect.flatMap(current, (p) => p.transact(now, needs, decide)),
      commit: (now, c) => Effect.flatMap(current, (p) => p.commit(now, c)),
      read: (now, needs) => Effect.flatMap(current, (p) => p.read(now, needs)),
      removeOwn: Effect.flatMap(current, (p) => p.removeOwn),
      stats: Effect.flatMap(current, (p) => p.stats),
      fleet: (now) => Effect.flatMap(current, (p) => p.fleet(now)),
      inspect,
      changes: Stream.map(dirChanges(dir), () => undefined)
    } satisfies SharedStateService
  })

/** The port over the `StateDir` in context. */
export const SharedStateSqlite = (lockWaitMs: number, view = false, metrics = true): Layer.Layer<SharedState, never, StateDir> =>
  Layer.scoped(
    SharedState,
    Effect.flatMap(StateDir, (state) => makeSqliteState(state, lockWaitMs, view, metrics))
  )
