/**
 * What the PostgreSQL backend (issue 22) adds to the SQL parts both databases share (sqlRecords.ts):
 * how a statement runs on the server (`pgExec`), its lock (advisory locks) and the holder's lease.
 *
 * A query that fails is not a record problem here, as a failed read of the embedded database is: the
 * whole transaction must not decide on a partial picture. Every SQL failure dies with `FleetDown`,
 * which rolls the transaction back and sends the decision to the state directory's database
 * (SharedStatePg.ts).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect, Predicate } from "effect"
import { FLEET_LOCK, LOCK_PERMITS, LOCK_POOL } from "./pgSchema.js"
import type { Needs } from "../../services/state/SharedState.js"
import type { StateLock } from "./sharedStateOver.js"
import type { SqlExec, SqlIdentity } from "./sqlRecords.js"
import { POSTGRES, type Query } from "./stateSql.js"

/** The server could not be reached or answered with an error: the decision goes to the file backend. */
export class FleetDown extends Data.TaggedError("FleetDown")<{ readonly reason: string; readonly schemaMissing: boolean }> {}

const isSqlError = (e: unknown): e is SqlError.SqlError => Predicate.isTagged(e, "SqlError")

/** SQLSTATEs of a schema that is not there (a new or reset server): the next query migrates first. */
const SCHEMA_MISSING = new Set(["42P01", "3F000"])

const codeOf = (e: unknown): string | undefined => {
  const c = (e as { code?: unknown } | undefined)?.code
  return typeof c === "string" ? c : undefined
}

/** One line for a failed query: the driver's own message (it never carries the URL). */
export const downOf = (e: SqlError.SqlError): FleetDown => {
  const cause = e.cause as { message?: unknown; code?: unknown } | undefined
  const detail = typeof cause?.message === "string" && cause.message !== "" ? cause.message : e.message
  const code = codeOf(cause)
  return new FleetDown({ reason: `${detail.split("\n")[0]}${code !== undefined && !/^[0-9A-Z]{5}$/.test(code) ? ` (${code})` : ""}`, schemaMissing: code !== undefined && SCHEMA_MISSING.has(code) })
}

/** A query's failure as the defect that sends the decision elsewhere. */
export const orDown = <A, R>(q: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, never, R> => Effect.catchAll(q, (e) => Effect.die(downOf(e)))

/** Statements on the server: a failure dies with `FleetDown` (the decision moves to the embedded database). */
export const pgExec = (sql: SqlClient.SqlClient): SqlExec => ({
  dialect: POSTGRES,
  all: <R>(q: Query) => orDown(sql.unsafe<R & object>(q.text, q.params as Array<unknown>)) as Effect.Effect<ReadonlyArray<R>>,
  run: (q: Query) => Effect.as(orDown(sql.unsafe(q.text, q.params as Array<unknown>)), 0)
})

/** The holder row's upsert: its lease renewed to `now + leaseMs`, with the decisions this process made on files so far. */
export const renewLease = (sql: SqlClient.SqlClient, id: SqlIdentity, now: number, fallbacks: number) =>
  sql`INSERT INTO holders (host, pid, start_token, lease_until, seen_at, fallbacks) VALUES (${id.host}, ${id.pid}, ${id.startToken}, ${now + id.leaseMs}, ${now}, ${fallbacks})
      ON CONFLICT (host, pid) DO UPDATE SET start_token = EXCLUDED.start_token, lease_until = EXCLUDED.lease_until, seen_at = EXCLUDED.seen_at, fallbacks = EXCLUDED.fallbacks`

/**
 * The lock: one transaction holding the fleet's advisory lock(s) for what it reads (the pool's for
 * claims, cooldowns, quota and fallbacks; the permits' for permits; both in that order), waiting at
 * most `waitMs` (`lock_timeout`). It never goes ahead without the lock: a wait that runs out is
 * `FleetDown`, and the file backend decides.
 */
export const pgLock = (sql: SqlClient.SqlClient, lockWaitMs: number): StateLock => ({
  withLock: (body, waitMs, needs?: Needs) => {
    const pool = needs === undefined || needs.claims === true || needs.cooldowns === true || needs.quota === true || needs.fallbacks === true || needs.permits !== true
    const permits = needs?.permits === true
    const ms = Math.max(1, waitMs ?? lockWaitMs)
    const timeout = `${ms}ms`
    // one round trip: the wait bound, then the locks (a select list is evaluated left to right)
    const locks =
      pool && permits
        ? sql`SELECT set_config('lock_timeout', ${timeout}, true), pg_advisory_xact_lock(${FLEET_LOCK}, ${LOCK_POOL}), pg_advisory_xact_lock(${FLEET_LOCK}, ${LOCK_PERMITS})`
        : sql`SELECT set_config('lock_timeout', ${timeout}, true), pg_advisory_xact_lock(${FLEET_LOCK}, ${pool ? LOCK_POOL : LOCK_PERMITS})`
    return sql.withTransaction(Effect.zipRight(orDown(locks), body)).pipe(Effect.catchIf(isSqlError, (e) => Effect.die(downOf(e))))
  },
  failOpens: Effect.succeed(0)
})
