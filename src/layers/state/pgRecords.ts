/**
 * The PostgreSQL backend's parts (issue 22), one per record kind plus the lock, composed by
 * `sharedStateOver` exactly as the file backend's are. Records are stored as the text the state files
 * hold and read back through the same tolerant decoders (core/claimFile.ts, cooldownFile.ts, …), so a
 * host running another version never breaks the others' reads.
 *
 * Holders: a process's `holders` row (host, pid, start token) carries its lease, renewed by every publish
 * and by the heartbeat (SharedStatePg.ts). A holder on another host is gone once its lease ran out; on
 * this host also once its pid is dead or runs another start token (core/state/holder.ts, one judgement
 * for every backend). A read that finds a gone holder's claims deletes them (any host reaps).
 *
 * A query that fails is not a record problem here, as an unreadable file is: the whole transaction
 * must not decide on a partial picture. Every SQL failure dies with `FleetDown`, which rolls the
 * transaction back and sends the decision to the file backend (SharedStatePg.ts).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Data, Effect, Predicate } from "effect"
import { decodeClaimFile, encodeClaimFile } from "../../core/claimFile.js"
import { STRIKE_DECAY_MS } from "../../core/constants.js"
import type { Cooldown } from "../../core/cooldown.js"
import { decodeCooldown, encodeCooldown, isCooldownExpired } from "../../core/cooldownFile.js"
import type { PermitEntry } from "../../core/permits/types.js"
import { bySession, decodeFallback, encodeFallback, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { decodeQuota, encodeQuota, isStale, type QuotaRecord } from "../../core/quota/record.js"
import { holderGone, isLocal } from "../../core/state/holder.js"
import type { ProcessSnapshot } from "../../core/status.js"
import type { Needs, OwnClaims } from "../../services/state/SharedState.js"
import { decodePermits, entryOf, PERMITS_MAX_ENTRIES } from "./permitCodec.js"
import { judgePermits, type PermitJudge } from "./permitFiles.js"
import { pidState, startTimeCache } from "./proc.js"
import { byModel } from "./quotaFiles.js"
import { FLEET_LOCK, LOCK_PERMITS, LOCK_POOL } from "./pgSchema.js"
import type { ClaimRecords, CooldownRecords, FallbackRecords, PermitRecords, QuotaRecords, StateLock } from "./sharedStateOver.js"

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

/** Who this process is in the fleet. */
export interface PgIdentity {
  readonly host: string
  readonly pid: number
  readonly startToken: string | null
  /** The plugin instance in this process (claimFiles.ts `takeInstance`). */
  readonly instance: number
  /** How long a holder lives after its last publish or heartbeat. */
  readonly leaseMs: number
}

const START_TOKEN_TTL_MS = 1_000

/** The holder row's upsert: its lease renewed to `now + leaseMs`, with the decisions this process made on files so far. */
export const renewLease = (sql: SqlClient.SqlClient, id: PgIdentity, now: number, fallbacks: number) =>
  sql`INSERT INTO holders (host, pid, start_token, lease_until, seen_at, fallbacks) VALUES (${id.host}, ${id.pid}, ${id.startToken}, ${now + id.leaseMs}, ${now}, ${fallbacks})
      ON CONFLICT (host, pid) DO UPDATE SET start_token = EXCLUDED.start_token, lease_until = EXCLUDED.lease_until, seen_at = EXCLUDED.seen_at, fallbacks = EXCLUDED.fallbacks`

interface ClaimRow {
  readonly host: string
  readonly pid: number
  readonly instance: number
  readonly body: string
  readonly written_at: string | number
  readonly lease_until: string | number | null
}

/** The claims part; `gen` numbers this process's publishes (a late re-publish never overwrites a newer one). */
export const pgClaims = (sql: SqlClient.SqlClient, id: PgIdentity) => {
  const startTime = startTimeCache(START_TOKEN_TTL_MS)
  let gen = 0
  let last: OwnClaims | undefined

  const readPeers = (now: number) =>
    orDown(
      Effect.gen(function* () {
        const rows = yield* sql<ClaimRow>`SELECT c.host, c.pid, c.instance, c.body, c.written_at, h.lease_until FROM claims c LEFT JOIN holders h ON h.host = c.host AND h.pid = c.pid`
        const out: Array<ProcessSnapshot> = []
        const gone: Array<ClaimRow> = []
        for (const row of rows) {
          if (row.host === id.host && row.pid === id.pid && row.instance === id.instance) continue
          const file = decodeClaimFile(row.body)
          const leaseUntil = row.lease_until === null ? Number(row.written_at) + id.leaseMs : Number(row.lease_until)
          const holder = { host: row.host, pid: row.pid, startToken: file?.startTime ?? null }
          const local = isLocal(holder, id.host)
          const dead = holderGone(
            holder,
            leaseUntil,
            local ? { pidState: pidState(row.pid), liveStartToken: holder.startToken !== null ? startTime(row.pid, now) : undefined } : {},
            id.host,
            now
          )
          if (dead) gone.push(row)
          else if (file !== undefined) out.push({ pid: row.pid, host: row.host, reaped: file.reaped, claims: file.claims })
        }
        // any host reaps a gone holder's claims (and its holder row when the lease ran out)
        for (const row of gone) {
          yield* sql`DELETE FROM claims WHERE host = ${row.host} AND pid = ${row.pid} AND instance = ${row.instance}`
          yield* sql`DELETE FROM holders h WHERE h.host = ${row.host} AND h.pid = ${row.pid} AND h.lease_until < ${now} AND NOT EXISTS (SELECT 1 FROM permits p WHERE p.host = h.host AND p.pid = h.pid)`
        }
        return out
      })
    )

  /** Writes `own` under the next gen (or the given one: a re-publish of what was last written). */
  const write = (own: OwnClaims, now: number, g: number) => {
    const body = encodeClaimFile({ pid: id.pid, startTime: id.startToken, host: id.host, writtenAt: now, reaped: own.reaped, claims: own.claims })
    return sql`WITH h AS (
        INSERT INTO holders (host, pid, start_token, lease_until, seen_at) VALUES (${id.host}, ${id.pid}, ${id.startToken}, ${now + id.leaseMs}, ${now})
        ON CONFLICT (host, pid) DO UPDATE SET start_token = EXCLUDED.start_token, lease_until = EXCLUDED.lease_until, seen_at = EXCLUDED.seen_at RETURNING 1)
      INSERT INTO claims (host, pid, instance, gen, body, written_at) SELECT ${id.host}, ${id.pid}, ${id.instance}, ${g}, ${body}, ${now} FROM h
      ON CONFLICT (host, pid, instance) DO UPDATE SET gen = EXCLUDED.gen, body = EXCLUDED.body, written_at = EXCLUDED.written_at WHERE claims.gen <= EXCLUDED.gen`
  }

  const part: ClaimRecords = {
    readPeers,
    publish: (own, now) =>
      Effect.suspend(() => {
        gen += 1
        last = own
        return orDown(write(own, now, gen))
      }).pipe(Effect.asVoid),
    removeOwn: Effect.suspend(() => {
      last = undefined
      gen += 1
      return orDown(sql`DELETE FROM claims WHERE host = ${id.host} AND pid = ${id.pid} AND instance = ${id.instance}`)
    }).pipe(Effect.asVoid)
  }
  return {
    part,
    /** What this process last published, written again (a server that lost it, a return from the fallback). */
    republish: (now: number) => (last === undefined ? Effect.void : orDown(write(last, now, gen)).pipe(Effect.asVoid)),
    /** Whether this process has published (or remembered) a claims table since it started. */
    published: () => last !== undefined || gen > 0,
    /** Remembers claims committed elsewhere (the file backend, while the server was away). */
    remember: (own: OwnClaims) => {
      gen += 1
      last = own
    }
  }
}

export const pgCooldowns = (sql: SqlClient.SqlClient): CooldownRecords & { readonly merge: (records: ReadonlyArray<Cooldown>) => Effect.Effect<void> } => ({
  /** Writes records decided elsewhere (on files while the server was away): one already there that lasts longer is kept. */
  merge: (records) =>
    Effect.forEach(
      records,
      (c) =>
        orDown(sql`INSERT INTO cooldowns (model, body, expires_at) VALUES (${c.model}, ${encodeCooldown(c)}, ${c.until + STRIKE_DECAY_MS})
          ON CONFLICT (model) DO UPDATE SET body = EXCLUDED.body, expires_at = EXCLUDED.expires_at WHERE cooldowns.expires_at < EXCLUDED.expires_at`),
      { discard: true }
    ),
  readAll: (now) =>
    orDown(sql<{ readonly body: string }>`SELECT body FROM cooldowns WHERE expires_at >= ${now}`).pipe(
      Effect.map((rows) => rows.flatMap((r) => decodeCooldown(r.body) ?? []).filter((c) => !isCooldownExpired(c, now)))
    ),
  write: (records: ReadonlyArray<Cooldown>) =>
    Effect.forEach(
      records,
      (c) =>
        orDown(sql`INSERT INTO cooldowns (model, body, expires_at) VALUES (${c.model}, ${encodeCooldown(c)}, ${c.until + STRIKE_DECAY_MS})
          ON CONFLICT (model) DO UPDATE SET body = EXCLUDED.body, expires_at = EXCLUDED.expires_at`),
      { discard: true }
    ),
  remove: (model) => orDown(sql`DELETE FROM cooldowns WHERE model = ${model}`).pipe(Effect.asVoid)
})

export const pgQuota = (sql: SqlClient.SqlClient): QuotaRecords => ({
  readAll: (now) =>
    orDown(sql<{ readonly model: string; readonly body: string }>`SELECT model, body FROM quota`).pipe(
      // a record under another model's key is not that model's
      Effect.map((rows) => byModel(rows.flatMap((r) => decodeQuota(r.body) ?? []).filter((q) => !isStale(q, now) && rows.some((r) => r.model === q.model))))
    ),
  write: (records: ReadonlyArray<QuotaRecord>) =>
    Effect.forEach(
      records,
      (q) => orDown(sql`INSERT INTO quota (model, body, seen_at) VALUES (${q.model}, ${encodeQuota(q)}, ${q.seenAt}) ON CONFLICT (model) DO UPDATE SET body = EXCLUDED.body, seen_at = EXCLUDED.seen_at`),
      { discard: true }
    )
})

export const pgFallbacks = (sql: SqlClient.SqlClient): FallbackRecords => ({
  readAll: (now) =>
    orDown(sql<{ readonly body: string }>`SELECT body FROM fallbacks WHERE until > ${now}`).pipe(
      Effect.map((rows) => bySession(rows.flatMap((r) => decodeFallback(r.body) ?? []).filter((f) => !isOver(f, now))))
    ),
  write: (records: ReadonlyArray<FallbackRecord>) =>
    Effect.forEach(
      records,
      (f) => orDown(sql`INSERT INTO fallbacks (session, body, until) VALUES (${f.session}, ${encodeFallback(f)}, ${f.until}) ON CONFLICT (session) DO UPDATE SET body = EXCLUDED.body, until = EXCLUDED.until`),
      { discard: true }
    ),
  remove: (session) => orDown(sql`DELETE FROM fallbacks WHERE session = ${session}`).pipe(Effect.asVoid)
})

interface PermitRow {
  readonly body: string
  readonly written_at: string | number
  readonly lease_until: string | number | null
}

/** Permits: FIFO by seq (assigned by the machine under the fleet-wide permits lock), then the server's sequence. */
export const pgPermits = (sql: SqlClient.SqlClient, judge: PermitJudge, leaseMs: number): PermitRecords => ({
  readAll: (now) =>
    orDown(
      sql<PermitRow>`SELECT p.body, p.written_at, h.lease_until FROM permits p LEFT JOIN holders h ON h.host = p.host AND h.pid = p.pid ORDER BY p.seq, p.pos`
    ).pipe(
      Effect.map((rows) => {
        // each row decoded once, as the file's entries are (an invalid one or a repeated id skipped)
        const lease = new Map<string, number>()
        const entries: Array<PermitEntry> = []
        for (const r of rows) {
          if (entries.length >= PERMITS_MAX_ENTRIES) break
          const decoded = decodePermits(`{"v":1,"entries":[${r.body}]}`)
          const entry = decoded._tag === "Entries" ? decoded.entries[0] : undefined
          if (entry === undefined || lease.has(entry.id)) continue
          entries.push(entry)
          lease.set(entry.id, r.lease_until === null ? Number(r.written_at) + leaseMs : Number(r.lease_until))
        }
        return judgePermits(entries, (e: PermitEntry) => lease.get(e.id) ?? now, judge, now)
      })
    ),
  write: (changes, now) =>
    Effect.gen(function* () {
      if (changes.remove.length > 0) yield* orDown(sql`DELETE FROM permits WHERE id IN ${sql.in(changes.remove)}`)
      for (const e of changes.put)
        yield* orDown(sql`INSERT INTO permits (id, seq, host, pid, body, written_at) VALUES (${e.id}, ${e.seq}, ${e.holder.host}, ${e.holder.pid}, ${JSON.stringify(entryOf(e))}, ${now})
          ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, host = EXCLUDED.host, pid = EXCLUDED.pid, body = EXCLUDED.body, written_at = EXCLUDED.written_at`)
    })
})

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
