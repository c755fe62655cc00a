/**
 * The shared-state parts over SQL (issue 32), one per record kind, written once for both databases:
 * SQLite (SharedStateSqlite.ts, the embedded default) and PostgreSQL (SharedStatePg.ts, fleet mode).
 * Each backend hands an `SqlExec` (how a statement runs there, and what a failure becomes) and its own
 * lock; the statements come from stateSql.ts in the backend's dialect. `sharedStateOver` composes the
 * parts into the port.
 *
 * Holders: a process's `holders` row (host, pid, start token) carries its lease, renewed by every
 * publish (and in a fleet by the heartbeat). A holder on another host is gone once its lease ran out;
 * on this host also once its pid is dead or runs another start token (core/state/holder.ts, one
 * judgement for every backend). A read that finds a gone holder's claims deletes them.
 */
import { Effect } from "effect"
import { decodeClaimFile, encodeClaimFile } from "../../core/pool/claimFile.js"
import { STRIKE_DECAY_MS } from "../../core/constants.js"
import type { Cooldown } from "../../core/pool/cooldown.js"
import { decodeCooldown, encodeCooldown, isCooldownExpired } from "../../core/pool/cooldownFile.js"
import type { PermitChanges, PermitEntry } from "../../core/permits/types.js"
import { bySession, decodeFallback, encodeFallback, isOver, type FallbackRecord } from "../../core/quota/fallbackRecord.js"
import { decodeQuota, encodeQuota, isStale, type QuotaRecord } from "../../core/quota/record.js"
import { holderGone, isLocal } from "../../core/state/holder.js"
import { ENGINES_MAX, engineLive, type EngineRegistration, type EngineView } from "../../core/state/engines.js"
import type { ProcessSnapshot } from "../../core/status.js"
import type { ContextChanges, ContextEntry, OwnClaims } from "../../services/state/SharedState.js"
import { decodePermits, entryOf, PERMITS_MAX_ENTRIES } from "./permitCodec.js"
import { judgePermits, type PermitJudge } from "./permitJudge.js"
import { pidState, startTimeCache, startTimeOf } from "./proc.js"
import type { ClaimRecords, ContextRecords, CooldownRecords, EngineRecords, FallbackRecords, LearnedRecords, PermitRecords, QuotaRecords, RecordsError } from "./sharedStateOver.js"
import { decodeBudget, encodeBudget, isBudgetStale, type GroupBudget } from "../../core/limits/learned.js"
import { list, sqlOf, textOf, type Dialect, type Query } from "./stateSql.js"

/** How a statement runs on a backend; a failure is the backend's (PostgreSQL: a defect that sends the decision elsewhere). */
export interface SqlExec {
  readonly dialect: Dialect
  readonly all: <R>(q: Query) => Effect.Effect<ReadonlyArray<R>, RecordsError>
  readonly run: (q: Query) => Effect.Effect<number, RecordsError>
}

/** Who this process is in the shared state. */
export interface SqlIdentity {
  readonly host: string
  readonly pid: number
  readonly startToken: string | null
  /** The plugin instance in this process (opencode runs one per project directory). */
  readonly instance: number
  /** How long a holder lives after its last publish (or heartbeat). */
  readonly leaseMs: number
}

const START_TOKEN_TTL_MS = 1_000

/** Plugin instances of this process (one claims row each); taken in a scope, given back when it closes. */
const instances = new Set<number>()
export const takeInstance = Effect.acquireRelease(
  Effect.sync(() => {
    let n = 0
    while (instances.has(n)) n++
    instances.add(n)
    return n
  }),
  (n) => Effect.sync(() => void instances.delete(n))
)

type DecodedFile = ReturnType<typeof decodeClaimFile>
const MISS: unique symbol = Symbol("miss")

interface ClaimRow {
  readonly host: string
  readonly pid: number | string
  readonly instance: number | string
  readonly gen: number | string
  /** Absent when the rows' versions are read first (a local database), then only changed bodies. */
  readonly body?: string
  readonly written_at: string | number
  readonly lease_until: string | number | null
}

/** The claims part; `gen` numbers this process's publishes (a late re-publish never overwrites a newer one). */
export const sqlClaims = (x: SqlExec, id: SqlIdentity) => {
  const q = sqlOf(x.dialect)
  // what every spawn runs, made once (stateSql.ts `textOf`)
  const t = textOf(x.dialect)
  const CLAIM_ROWS: Query = {
    text: `SELECT c.host, c.pid, c.instance, c.gen, ${x.dialect.local ? "" : "c.body, "}c.written_at, h.lease_until FROM claims c LEFT JOIN holders h ON h.host = c.host AND h.pid = c.pid`,
    params: []
  }
  const CLAIM_BODY = t`SELECT body FROM claims WHERE host = ${"host"} AND pid = ${"pid"} AND instance = ${"instance"}`
  const UPSERT_HOLDER = t`INSERT INTO holders (host, pid, start_token, lease_until, seen_at) VALUES (${"host"}, ${"pid"}, ${"start_token"}, ${"lease_until"}, ${"seen_at"})
    ON CONFLICT (host, pid) DO UPDATE SET start_token = excluded.start_token, lease_until = excluded.lease_until, seen_at = excluded.seen_at`
  const UPSERT_CLAIMS = t`INSERT INTO claims (host, pid, instance, gen, body, written_at) VALUES (${"host"}, ${"pid"}, ${"instance"}, ${"gen"}, ${"body"}, ${"written_at"})
    ON CONFLICT (host, pid, instance) DO UPDATE SET gen = excluded.gen, body = excluded.body, written_at = excluded.written_at WHERE claims.gen <= excluded.gen`
  const startTime = startTimeCache(START_TOKEN_TTL_MS)
  let gen = 0
  let last: OwnClaims | undefined
  // a peer's table decoded once per publish: a pick reads every peer's row, most unchanged since the last
  const decoded = new Map<string, { readonly gen: number; readonly writtenAt: number; readonly file: DecodedFile }>()
  /** A row's claims from the cache or its own body; `MISS` when the body must be read first (a local database reads versions first). */
  const cachedRow = (row: ClaimRow, key: string): DecodedFile | typeof MISS => {
    const g = Number(row.gen)
    const writtenAt = Number(row.written_at)
    const hit = decoded.get(key)
    if (hit !== undefined && hit.gen === g && hit.writtenAt === writtenAt) return hit.file
    if (row.body === undefined) return MISS
    const file = decodeClaimFile(row.body)
    decoded.set(key, { gen: g, writtenAt, file })
    return file
  }
  const fetchRow = (row: ClaimRow, key: string) =>
    Effect.map(
      x.all<{ readonly body: string }>({ text: CLAIM_BODY, params: [row.host, Number(row.pid), Number(row.instance)] }),
      (rows) => {
        const body = rows[0]?.body
        const file = body === undefined ? undefined : decodeClaimFile(body)
        decoded.set(key, { gen: Number(row.gen), writtenAt: Number(row.written_at), file })
        return file
      }
    )

  const readPeers = Effect.fnUntraced(function* (now: number) {
      const rows = yield* x.all<ClaimRow>(CLAIM_ROWS)
      if (decoded.size > rows.length * 2 + 64) decoded.clear()
      const out: Array<ProcessSnapshot> = []
      const gone: Array<ClaimRow> = []
      for (const row of rows) {
        const pid = Number(row.pid)
        if (row.host === id.host && pid === id.pid && Number(row.instance) === id.instance) continue
        // the cache answers without an effect per row: a pick reads every peer (bench:route)
        const key = `${row.host}\u0000${row.pid}\u0000${row.instance}`
        const hit = cachedRow(row, key)
        const file = hit === MISS ? yield* fetchRow(row, key) : hit
        const leaseUntil = row.lease_until === null ? Number(row.written_at) + id.leaseMs : Number(row.lease_until)
        const holder = { host: row.host, pid, startToken: file?.startTime ?? null }
        const local = isLocal(holder, id.host)
        const dead = holderGone(holder, leaseUntil, local ? { pidState: pidState(pid), liveStartToken: holder.startToken !== null ? startTime(pid, now) : undefined } : {}, id.host, now)
        if (dead) gone.push(row)
        else if (file !== undefined) out.push({ pid, host: row.host, reaped: file.reaped, claims: file.claims })
      }
      // any process reaps a gone holder's claims (and its holder row when the lease ran out and it holds no permit)
      for (const row of gone) {
        yield* x.run(q`DELETE FROM claims WHERE host = ${row.host} AND pid = ${Number(row.pid)} AND instance = ${Number(row.instance)}`)
        yield* x.run(
          q`DELETE FROM holders WHERE host = ${row.host} AND pid = ${Number(row.pid)} AND lease_until < ${now} AND NOT EXISTS (SELECT 1 FROM permits p WHERE p.host = holders.host AND p.pid = holders.pid)`
        )
      }
      return out as ReadonlyArray<ProcessSnapshot>
    })

  /** Writes `own` under gen `g`, the holder's lease renewed. */
  const write = Effect.fnUntraced(function* (own: OwnClaims, now: number, g: number) {
      const body = encodeClaimFile({ pid: id.pid, startTime: id.startToken, host: id.host, writtenAt: now, reaped: own.reaped, claims: own.claims })
      yield* x.run({ text: UPSERT_HOLDER, params: [id.host, id.pid, id.startToken, now + id.leaseMs, now] })
      yield* x.run({ text: UPSERT_CLAIMS, params: [id.host, id.pid, id.instance, g, body, now] })
    })

  const part: ClaimRecords = {
    readPeers,
    publish: (own, now) =>
      Effect.suspend(() => {
        gen += 1
        last = own
        return write(own, now, gen)
      }),
    removeOwn: Effect.suspend(() => {
      last = undefined
      gen += 1
      return x.run(q`DELETE FROM claims WHERE host = ${id.host} AND pid = ${id.pid} AND instance = ${id.instance}`)
    }).pipe(Effect.asVoid, Effect.catchAll(() => Effect.void))
  }
  return {
    part,
    /** What this process last published, written again (a server that lost it, a return from the fallback). */
    republish: (now: number) => (last === undefined ? Effect.void : write(last, now, gen)),
    /** Whether this process has published (or remembered) a claims table since it started. */
    published: () => last !== undefined || gen > 0,
    /** Remembers claims committed elsewhere (the embedded database, while the server was away). */
    remember: (own: OwnClaims) => {
      gen += 1
      last = own
    }
  }
}

export const sqlCooldowns = (x: SqlExec): CooldownRecords & { readonly merge: (records: ReadonlyArray<Cooldown>) => Effect.Effect<void, RecordsError> } => {
  const q = sqlOf(x.dialect)
  const t = textOf(x.dialect)
  const insert = t`INSERT INTO cooldowns (model, body, expires_at) VALUES (${"model"}, ${"body"}, ${"expires_at"}) ON CONFLICT (model) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at`
  const UPSERT = insert
  const UPSERT_LONGER = `${insert} WHERE cooldowns.expires_at < excluded.expires_at`
  const LIVE = t`SELECT body FROM cooldowns WHERE expires_at >= ${"now"}`
  const upsert = (c: Cooldown, keepLonger: boolean) => x.run({ text: keepLonger ? UPSERT_LONGER : UPSERT, params: [c.model, encodeCooldown(c), c.until + STRIKE_DECAY_MS] })
  return {
    /** Writes records decided elsewhere (while the server was away): one already there that lasts longer is kept. */
    merge: (records) => Effect.forEach(records, (c) => upsert(c, true), { discard: true }),
    readAll: (now) =>
      x
        .all<{ readonly body: string }>({ text: LIVE, params: [now] })
        .pipe(Effect.map((rows) => rows.flatMap((r) => decodeCooldown(r.body) ?? []).filter((c) => !isCooldownExpired(c, now)))),
    write: (records) => Effect.forEach(records, (c) => upsert(c, false), { discard: true }),
    remove: (model) => x.run(q`DELETE FROM cooldowns WHERE model = ${model}`).pipe(Effect.asVoid)
  }
}

/** Quota records, sorted by model. */
export const byModel = (records: Iterable<QuotaRecord>): ReadonlyArray<QuotaRecord> => [...records].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))

/** Each record's statement run in turn; one that fails is skipped (the next record tries again). */
const eachSkippingFailures = <A>(x: SqlExec, records: ReadonlyArray<A>, statement: (record: A) => Query): Effect.Effect<void> =>
  Effect.forEach(records, (r) => x.run(statement(r)).pipe(Effect.catchAll(() => Effect.succeed(0))), { discard: true })

/** Quota records: a read that fails is empty, a write that fails is skipped (the next record tries again). */
export const sqlQuota = (x: SqlExec): QuotaRecords => {
  const q = sqlOf(x.dialect)
  return {
    readAll: (now) =>
      x.all<{ readonly model: string; readonly body: string }>(q`SELECT model, body FROM quota`).pipe(
        // a record under another model's key is not that model's
        Effect.map((rows) => byModel(rows.flatMap((r) => decodeQuota(r.body) ?? []).filter((r) => !isStale(r, now) && rows.some((row) => row.model === r.model)))),
        Effect.catchAll(() => Effect.succeed([]))
      ),
    write: (records) =>
      eachSkippingFailures(x, records, (r) => q`INSERT INTO quota (model, body, seen_at) VALUES (${r.model}, ${encodeQuota(r)}, ${r.seenAt}) ON CONFLICT (model) DO UPDATE SET body = excluded.body, seen_at = excluded.seen_at`)
  }
}

/** Learned budgets sorted by group (issue 35). */
export const byGroup = (records: Iterable<GroupBudget>): ReadonlyArray<GroupBudget> => [...records].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0))

/** Learned budgets (issue 35): a read that fails is empty, a write that fails is skipped (the next request tries again). */
export const sqlLearned = (x: SqlExec): LearnedRecords => {
  const q = sqlOf(x.dialect)
  const t = textOf(x.dialect)
  // written by every counted request: made once
  const UPSERT = t`INSERT INTO learned (grp, body, seen_at) VALUES (${"grp"}, ${"body"}, ${"seen_at"}) ON CONFLICT (grp) DO UPDATE SET body = excluded.body, seen_at = excluded.seen_at`
  const ALL: Query = { text: "SELECT grp, body FROM learned", params: [] }
  return {
    readAll: (now) =>
      x.all<{ readonly grp: string; readonly body: string }>(ALL).pipe(
        // a record under another group's key is not that group's
        Effect.map((rows) => byGroup(rows.flatMap((r) => decodeBudget(r.body) ?? []).filter((b) => !isBudgetStale(b, now) && rows.some((row) => row.grp === b.group)))),
        Effect.catchAll(() => Effect.succeed([]))
      ),
    write: (records) => eachSkippingFailures(x, records, (r) => ({ text: UPSERT, params: [r.group, encodeBudget(r), r.seenAt] })),
    remove: (group) => x.run(q`DELETE FROM learned WHERE grp = ${group}`).pipe(Effect.asVoid, Effect.catchAll(() => Effect.void))
  }
}

/** Fallback records, sorted by session: a read that fails is empty, a write that fails is skipped. */
export const sqlFallbacks = (x: SqlExec): FallbackRecords => {
  const q = sqlOf(x.dialect)
  return {
    readAll: (now) =>
      x.all<{ readonly body: string }>(q`SELECT body FROM fallbacks WHERE until > ${now}`).pipe(
        Effect.map((rows) => bySession(rows.flatMap((r) => decodeFallback(r.body) ?? []).filter((f) => !isOver(f, now)))),
        Effect.catchAll(() => Effect.succeed([]))
      ),
    write: (records: ReadonlyArray<FallbackRecord>) =>
      eachSkippingFailures(x, records, (f) => q`INSERT INTO fallbacks (session, body, until) VALUES (${f.session}, ${encodeFallback(f)}, ${f.until}) ON CONFLICT (session) DO UPDATE SET body = excluded.body, until = excluded.until`),
    remove: (session) => x.run(q`DELETE FROM fallbacks WHERE session = ${session}`).pipe(Effect.asVoid, Effect.catchAll(() => Effect.void))
  }
}

interface PermitRow {
  readonly body: string
  readonly written_at: string | number
  readonly lease_until: string | number | null
}

/** Permits: FIFO by seq (assigned by the machine inside the transaction), then the arrival order. */
export const sqlPermits = (x: SqlExec, judge: PermitJudge, leaseMs: number): PermitRecords => {
  const q = sqlOf(x.dialect)
  return {
    readAll: (now) =>
      x.all<PermitRow>(q`SELECT p.body, p.written_at, h.lease_until FROM permits p LEFT JOIN holders h ON h.host = p.host AND h.pid = p.pid ORDER BY p.seq, p.pos`).pipe(
        Effect.map((rows) => {
          // each row decoded once, as a permits file's entries are (an invalid one or a repeated id skipped)
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
    write: Effect.fnUntraced(function* (changes: PermitChanges, now: number) {
        if (changes.remove.length > 0) yield* x.run(q`DELETE FROM permits WHERE id IN (${list(changes.remove)})`)
        for (const e of changes.put)
          yield* x.run(
            q`INSERT INTO permits (id, seq, host, pid, body, written_at) VALUES (${e.id}, ${e.seq}, ${e.holder.host}, ${e.holder.pid}, ${JSON.stringify(entryOf(e))}, ${now})
              ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, host = excluded.host, pid = excluded.pid, body = excluded.body, written_at = excluded.written_at`
          )
      })
  }
}

/** The context map's entries (issue 23), one row per key. */
export const sqlContext = (x: SqlExec): ContextRecords => {
  const q = sqlOf(x.dialect)
  return {
    readAll: x.all<ContextEntry>(q`SELECT key, body FROM context ORDER BY key`).pipe(Effect.map((rows) => rows.map((r) => ({ key: r.key, body: r.body })))),
    write: Effect.fnUntraced(function* (changes: ContextChanges) {
        if (changes.remove.length > 0) yield* x.run(q`DELETE FROM context WHERE key IN (${list(changes.remove)})`)
        for (const e of changes.put) yield* x.run(q`INSERT INTO context (key, body) VALUES (${e.key}, ${e.body}) ON CONFLICT (key) DO UPDATE SET body = excluded.body`)
      })
  }
}

interface EngineRow {
  readonly host: string
  readonly pid: number | string
  readonly instance: number | string
  readonly start_token: string | null
  readonly version: string
  readonly backend: string
  readonly since: number | string
  readonly lease_until: number | string | null
}

/**
 * The plugin engines on record (issue 33), one row per plugin instance: registered once when the engine
 * starts (the rows of this host whose process is gone are deleted then: a view never writes), deleted
 * by `removeOwn`. A row is judged as it is read (core/state/engines.ts): on this host by its pid and
 * start token, elsewhere by its host's holder lease.
 */
export const sqlEngines = (x: SqlExec, id: SqlIdentity) => {
  const q = sqlOf(x.dialect)
  let last: EngineRegistration | undefined
  /** Whether a row's engine runs: this host's by its pid and start token (a reused pid is another process), another's by `leaseUntil`. */
  const live = (r: Pick<EngineRow, "host" | "pid" | "start_token">, leaseUntil: number | undefined, now: number): boolean => {
    const holder = { host: r.host, pid: Number(r.pid), startToken: r.start_token }
    const facts = isLocal(holder, id.host) ? { pidState: pidState(holder.pid), liveStartToken: holder.startToken !== null ? startTimeOf(holder.pid) : undefined } : {}
    return engineLive(holder, leaseUntil, facts, id.host, now)
  }
  const write = (e: EngineRegistration, now: number) =>
    x.run(
      q`INSERT INTO engines (host, pid, instance, start_token, version, backend, since, seen_at) VALUES (${id.host}, ${id.pid}, ${id.instance}, ${id.startToken}, ${e.version}, ${e.backend}, ${e.since}, ${now})
        ON CONFLICT (host, pid, instance) DO UPDATE SET start_token = excluded.start_token, version = excluded.version, backend = excluded.backend, since = excluded.since, seen_at = excluded.seen_at`
    )
  const part: EngineRecords = {
    readAll: (now) =>
      x
        .all<EngineRow>(
          q`SELECT e.host, e.pid, e.instance, e.start_token, e.version, e.backend, e.since, h.lease_until FROM engines e LEFT JOIN holders h ON h.host = e.host AND h.pid = e.pid ORDER BY e.since, e.host, e.pid, e.instance LIMIT ${ENGINES_MAX}`
        )
        .pipe(
          Effect.map((rows) =>
            rows.map(
              (r): EngineView => ({
                host: r.host,
                pid: Number(r.pid),
                version: r.version,
                backend: r.backend,
                since: Number(r.since),
                live: live(r, r.lease_until === null ? undefined : Number(r.lease_until), now),
                local: r.host === id.host
              })
            )
          )
        ),
    register: Effect.fnUntraced(function* (e: EngineRegistration, now: number) {
        last = e
        // the rows of this host's processes that ended without unregistering go (a view only shows them as gone)
        const mine = yield* x.all<Pick<EngineRow, "host" | "pid" | "instance" | "start_token">>(q`SELECT host, pid, instance, start_token FROM engines WHERE host = ${id.host}`)
        for (const r of mine.filter((row) => !live(row, undefined, now)))
          yield* x.run(q`DELETE FROM engines WHERE host = ${id.host} AND pid = ${Number(r.pid)} AND instance = ${Number(r.instance)}`)
        yield* write(e, now)
      }),
    removeOwn: Effect.suspend(() => {
      last = undefined
      return x.run(q`DELETE FROM engines WHERE host = ${id.host} AND pid = ${id.pid} AND instance = ${id.instance}`)
    }).pipe(Effect.asVoid, Effect.catchAll(() => Effect.void))
  }
  return {
    part,
    /** The registration written again (a server that lost it, a return from the fallback); nothing before one. */
    republish: (now: number) => (last === undefined ? Effect.void : write(last, now)),
    /** Remembers a registration committed elsewhere (the embedded database, while the server was away). */
    remember: (e: EngineRegistration) => {
      last = e
    }
  }
}
