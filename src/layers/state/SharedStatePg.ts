/**
 * The shared-state port over PostgreSQL (fleet mode, issue 22): several machines share one budget,
 * cooldown table, quota table and permit queue. Built from the parts in pgRecords.ts by the same
 * `sharedStateOver` as the file backend, so the pure core decides over a snapshot that came from SQL.
 *
 * Never blocking a spawn on the network:
 * - nothing connects while the layer is built (pgClient.ts); the schema is migrated by the first
 *   query that needs it, and again whenever the server says it is missing;
 * - a transaction, commit or read that does not finish within `lockWaitMs` (permit steps: their own
 *   longer wait), or fails, is rolled back and made on the state directory's files instead (the file
 *   backend's parts over the same `StateDir`), counted in `stats().fallbacks` and warned about at most
 *   once a minute;
 * - the first call that reaches the server again re-publishes this process's claims (those it made
 *   meanwhile included) and removes its claims file: the host has rejoined.
 * A heartbeat renews this process's lease and re-publishes its claims and its engine's registration (a
 * restarted or replaced server loses none of a live host's claims), and reaps expired cooldowns, holders
 * whose lease ran out and the engines of hosts without a lease (issue 33).
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Effect, Layer, Predicate, Ref, Schedule, Stream } from "effect"
import type { Cooldown } from "../../core/pool/cooldown.js"
import { isCooldownExpired } from "../../core/pool/cooldownFile.js"
import type { QuotaRecord } from "../../core/quota/record.js"
import { failOpen, NO_FAIL_OPENS, type FailOpenMemory } from "../../core/lock/failOpen.js"
import { FLEET_RETRY_MS, heartbeatEvery, maskUrl } from "../../core/state/fleet.js"
import { optionalLog } from "../../services/opencode/AppLog.js"
import { SharedState, type Commit, type FleetAnswer, type FleetHost, type Needs, type SharedSnapshot, type SharedStateService } from "../../services/state/SharedState.js"
import { StateDir } from "../../services/state/StateDir.js"
import { PERMITS_LOCK_WAIT_MS } from "../../core/constants.js"
import { procJudge } from "./permitJudge.js"
import { listenChanges, pgClientLayer } from "./pgClient.js"
import { downOf, FleetDown, orDown, pgExec, pgLock, renewLease } from "./pgRecords.js"
import { sqlClaims, sqlContext, sqlCooldowns, sqlEngines, sqlFallbacks, sqlLearned, sqlPermits, sqlQuota, takeInstance } from "./sqlRecords.js"
import { pendingCounts, sqlCounters, withoutCounts } from "./sqlCounters.js"
import { migrate, schemaVersion } from "./pgSchema.js"
import { makeSqliteState } from "./SharedStateSqlite.js"
import { sharedStateOver, writesRecords } from "./sharedStateOver.js"
import { spanned } from "../hotPath.js"

export interface PgStateOptions {
  readonly url: string
  readonly schema: string
  readonly leaseMs: number
  /** How long a spawn's transaction may wait for the server before it is made on files. */
  readonly lockWaitMs: number
  /** A view (the CLI's status, doctor): no heartbeat, so it is never on record as a holder. */
  readonly view?: boolean | undefined
  /** Counters (issue 36): whether decisions made on the state directory are counted (`fleet_fallbacks_total`); default true. */
  readonly metrics?: boolean | undefined
}

/** A defect from the backend: `FleetDown`, or a SQL failure the client raised as a defect (a failed ROLLBACK), is the server away; others stay defects. */
const asDown = (d: unknown): Effect.Effect<never, FleetDown> =>
  d instanceof FleetDown ? Effect.fail(d) : Predicate.isTagged(d, "SqlError") ? Effect.fail(downOf(d as SqlError.SqlError)) : Effect.die(d)

/** How long a LISTEN that lost its server waits before listening again. */
const CHANGES_RETRY_MS = 5_000

/** The NOTIFY channel of a fleet's schema (channel names are at most 63 bytes; a shared prefix only wakes a view spuriously). */
export const changesChannel = (schema: string): string => `ocpool:${schema}`.slice(0, 63)

interface Mode {
  /** The last call did not reach the server. */
  readonly down: boolean
  /** While down, decisions go straight to the files until then (the heartbeat keeps trying meanwhile). */
  readonly retryAt: number
  /** Why the server was last found away. */
  readonly reason: string
  readonly fallbacks: FailOpenMemory
  /** The schema is known to be there. */
  readonly ready: boolean
}

const make = (o: PgStateOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const state = yield* StateDir
    const say = yield* optionalLog
    const url = maskUrl(o.url)
    const instance = yield* takeInstance
    const id = { host: state.host, pid: state.pid, startToken: state.startTime, instance, leaseMs: o.leaseMs }
    const x = pgExec(sql)
    const claims = sqlClaims(x, id)
    const engines = sqlEngines(x, id)
    const cooldownsPg = sqlCooldowns(x)
    const quotaPg = sqlQuota(x)
    const countersPg = sqlCounters(x, state.host)
    const metrics = o.metrics !== false
    const pg = yield* sharedStateOver({
      claims: claims.part,
      cooldowns: cooldownsPg,
      quota: quotaPg,
      fallbacks: sqlFallbacks(x),
      permits: sqlPermits(x, procJudge(state.host), o.leaseMs),
      context: sqlContext(x),
      engines: engines.part,
      learned: sqlLearned(x),
      counters: countersPg,
      lock: pgLock(sql, o.lockWaitMs),
      changes: {
        // LISTEN on a connection of its own; a server away or gone fails it, and it listens again a few seconds later
        stream: listenChanges({ url: o.url, connectMs: Math.max(1_000, o.lockWaitMs) }, changesChannel(o.schema)).pipe(
          Stream.retry(Schedule.spaced(CHANGES_RETRY_MS)),
          Stream.catchAll(() => Stream.never)
        ),
        // inside the commit's transaction: delivered when it commits, dropped when it rolls back
        touch: sql`SELECT pg_notify(${changesChannel(o.schema)}, '1')`.pipe(Effect.asVoid, Effect.catchAll(() => Effect.void), Effect.catchAllDefect(() => Effect.void))
      }
    })
    // the state directory's database: where decisions go while the server is away
    // it counts nothing itself: what is counted in an outage goes to the server when the host rejoins (below)
    const file = yield* makeSqliteState(state, o.lockWaitMs, o.view === true, false)
    const mode = yield* Ref.make<Mode>({ down: false, retryAt: 0, reason: "", fallbacks: NO_FAIL_OPENS, ready: false })

    const ensureSchema = Effect.flatMap(Ref.get(mode), (m) =>
      m.ready
        ? Effect.void
        : migrate(sql, o.schema).pipe(
            Effect.catchTag("MigrationError", (e) => Effect.die(new FleetDown({ reason: `migrating the schema: ${e.message}`, schemaMissing: true }))),
            orDown
          ).pipe(Effect.zipRight(Ref.update(mode, (x) => ({ ...x, ready: true }))))
    )

    /**
     * Counts of decisions made on files, the fallbacks themselves and the fallback database's fail-opens
     * (issue 36): kept in memory, added to the server's counters when the host rejoins and at every
     * heartbeat, so the fleet's counters hold them (docs/DECISIONS.md 300).
     */
    const uncounted = pendingCounts(metrics, file.stats)
    /** Cooldowns and quota records decided on files while the server was away: published when it answers. */
    const pending = { cool: new Map<string, Cooldown>(), quota: new Map<string, QuotaRecord>() }
    const keep = (c: Commit) => {
      if (c.claims !== undefined) claims.remember(c.claims)
      if (c.engine !== undefined) engines.remember(c.engine)
      for (const m of c.uncool) pending.cool.delete(m)
      for (const x of c.cool) pending.cool.set(x.model, x)
      for (const q of c.quota ?? []) pending.quota.set(q.model, q)
      if (c.counts !== undefined) uncounted.add(c.counts)
    }
    /** What this process decided on files, on the server: its claims table (its file removed), the cooldowns (a longer one already there kept) and quota records. */
    const publishPending = Effect.fnUntraced(
      function* (now: number) {
        yield* claims.republish(now)
        yield* engines.republish(now)
        const cool = [...pending.cool.values()].filter((c) => !isCooldownExpired(c, now))
        if (cool.length > 0) yield* cooldownsPg.merge(cool)
        if (pending.quota.size > 0) yield* quotaPg.write([...pending.quota.values()])
        pending.cool.clear()
        pending.quota.clear()
        yield* uncounted.publish(countersPg)
      },
      Effect.catchAll(() => Effect.void),
      Effect.catchAllDefect(() => Effect.void)
    )
    // a decision made on files and the rejoin never interleave: whichever comes second publishes the other's work
    const gate = yield* Effect.makeSemaphore(1)

    /** The server answered: back from the files, what this process decided meanwhile is published. */
    const answered = (now: number) =>
      gate.withPermits(1)(
        Effect.flatMap(Ref.modify(mode, (m) => [m.down, { ...m, down: false }]), (wasDown) =>
          wasDown ? Effect.zipRight(publishPending(now), say("info", `fleet: PostgreSQL ${url} answers again; this host rejoined the fleet`)) : Effect.void
        )
      )

    /** A decision on files; when the host rejoined while it ran, what it wrote goes to the server at once. */
    const onFiles = <A>(now: number, onFile: Effect.Effect<A>): Effect.Effect<A> =>
      gate.withPermits(1)(Effect.tap(onFile, () => Effect.flatMap(Ref.get(mode), (m) => (m.down ? Effect.void : publishPending(now)))))

    const fellBack = (down: FleetDown, now: number, counted: boolean, renew = true) =>
      Effect.flatMap(
        Ref.modify(mode, (m) => {
          if (counted) uncounted.fellBack()
          const next = counted ? failOpen(m.fallbacks, now) : { memory: m.fallbacks, warning: undefined }
          const reason = renew ? down.reason : m.reason
          return [next.warning === undefined ? undefined : ([next.memory.count, reason] as const), { down: true, reason, retryAt: renew ? now + FLEET_RETRY_MS : m.retryAt, ready: m.ready && !down.schemaMissing, fallbacks: next.memory }]
        }),
        (due) =>
          due === undefined
            ? Effect.void
            : say("warn", `fleet: PostgreSQL ${url} did not answer (${due[1]}); deciding on the state directory until it does (${due[0]} so far)`)
      )

    /** `onPg` on the server within `waitMs`, else `onFile` (counted when `counted`). */
    const either = <A>(now: number, waitMs: number, onPg: Effect.Effect<A>, onFile: Effect.Effect<A>, counted = true, probe = false): Effect.Effect<A> =>
      Effect.flatMap(Ref.get(mode), (m) =>
        // a server that just failed is not asked again on every spawn: each would wait `waitMs` for nothing
        !probe && m.down && now < m.retryAt ? Effect.zipRight(fellBack(new FleetDown({ reason: "still away", schemaMissing: false }), now, counted, false), onFiles(now, onFile)) : viaPg(now, waitMs, onPg, onFile, counted)
      )

    const viaPg = <A>(now: number, waitMs: number, onPg: Effect.Effect<A>, onFile: Effect.Effect<A>, counted: boolean): Effect.Effect<A> =>
      Effect.zipRight(ensureSchema, onPg).pipe(
        // the SQL client acquires a connection and ends a transaction uninterruptibly: a server that
        // accepts and never answers would hold the timeout until the connect timeout; disconnected, the
        // decision moves on at `waitMs` and the abandoned attempt finishes (or fails) by itself. The
        // caller may be in an uninterruptible region (the engine's step): the attempt is made
        // interruptible here, or the timeout would wait for it all the same
        Effect.disconnect,
        Effect.interruptible,
        Effect.timeoutFail({ duration: Math.max(1, waitMs), onTimeout: () => new FleetDown({ reason: `no answer within ${waitMs} ms`, schemaMissing: false }) }),
        Effect.catchAllDefect(asDown),
        Effect.tap(() => answered(now)),
        Effect.catchAll((down) => Effect.zipRight(fellBack(down, now, counted), onFiles(now, onFile)))
      )

    /** A decision made on the files: what it commits is remembered, to be published when the server answers. */
    const remembering = <A>(decide: (s: SharedSnapshot) => { readonly value: A; readonly commit: Commit }) => (s: SharedSnapshot) => {
      const d = decide(s)
      keep(d.commit)
      return d.commit.counts === undefined ? d : { value: d.value, commit: withoutCounts(d.commit) }
    }

    // an empty claims table of a process that never published is nothing to write either
    const nothingToWrite = (c: Commit): boolean =>
      !writesRecords(c) &&
      (c.claims === undefined || (c.claims.claims.length === 0 && c.claims.reaped === 0 && !claims.published()))

    const waitOf = (needs: Needs) => (needs.permits === true ? Math.max(o.lockWaitMs, PERMITS_LOCK_WAIT_MS) : o.lockWaitMs)

    const hosts = (now: number) =>
      orDown(
        sql<{ host: string; processes: string | number; live: string | number; lease_until: string | number; fallbacks: string | number; claims: string | number; permits: string | number }>`
        SELECT h.host, count(*) AS processes, count(*) FILTER (WHERE h.lease_until >= ${now}) AS live, max(h.lease_until) AS lease_until, sum(h.fallbacks) AS fallbacks,
          coalesce((SELECT sum(jsonb_array_length(CASE WHEN jsonb_typeof(c.body::jsonb -> 'claims') = 'object' THEN (SELECT jsonb_agg(k) FROM jsonb_object_keys(c.body::jsonb -> 'claims') k) ELSE '[]'::jsonb END)) FROM claims c WHERE c.host = h.host), 0) AS claims,
          (SELECT count(*) FROM permits p WHERE p.host = h.host) AS permits
        FROM holders h GROUP BY h.host ORDER BY h.host`
      ).pipe(
        Effect.map((rows): ReadonlyArray<FleetHost> =>
          rows.map((r) => ({ host: r.host, processes: Number(r.processes), live: Number(r.live), leaseUntil: Number(r.lease_until), fallbacks: Number(r.fallbacks), claims: Number(r.claims), permits: Number(r.permits) }))
        )
      )

    const fleetView = Effect.fnUntraced(function* (now: number) {
      yield* ensureSchema
      const t0 = yield* Clock.currentTimeNanos
      yield* orDown(sql`SELECT 1`)
      const roundTripMs = Number((yield* Clock.currentTimeNanos) - t0) / 1e6
      return { _tag: "Fleet" as const, view: { url, schema: o.schema, host: state.host, roundTripMs, schemaVersion: yield* orDown(schemaVersion(sql)), hosts: yield* hosts(now) } }
    })
    const fleet = (now: number): Effect.Effect<FleetAnswer> =>
      fleetView(now).pipe(
        Effect.timeoutFail({ duration: Math.max(1_000, o.lockWaitMs), onTimeout: () => new FleetDown({ reason: `no answer within ${Math.max(1_000, o.lockWaitMs)} ms`, schemaMissing: false }) }),
        Effect.catchAllDefect(asDown),
        Effect.catchAll((down) => Effect.succeed({ _tag: "Unreachable" as const, url, schema: o.schema, host: state.host, reason: down.reason })),
        spanned("SharedState.fleet")
      )

    /**
     * What a decision on the server wrote that this host needs when the server is away (issue 32): its
     * own claims and its own permits, written through to the state directory's database, so that a
     * decision that falls back sees this machine's holders and a per-machine cap holds in an outage;
     * and its engine's registration (issue 33), so that a view in an outage still sees it.
     */
    const writeThrough = (now: number, c: Commit): Effect.Effect<void> => {
      const permits = c.permits === undefined ? undefined : { put: c.permits.put.filter((e) => e.holder.host === state.host), remove: c.permits.remove }
      const local: Commit = {
        cool: [],
        uncool: [],
        ...(c.claims !== undefined ? { claims: c.claims } : {}),
        ...(permits !== undefined && (permits.put.length > 0 || permits.remove.length > 0) ? { permits } : {}),
        ...(c.engine !== undefined ? { engine: c.engine } : {})
      }
      // not a span of the port: it is part of the decision that made it
      return local.claims === undefined && local.permits === undefined && local.engine === undefined ? Effect.void : file.commit(now, local).pipe(Effect.withTracerEnabled(false), Effect.catchAllCause(() => Effect.void))
    }
    /** `decide` on the server, its commit written through once the server committed it. */
    const onServer = <A>(now: number, needs: Needs, decide: (s: SharedSnapshot) => { readonly value: A; readonly commit: Commit }): Effect.Effect<A> => {
      let decided: Commit | undefined
      return Effect.tap(
        pg.transact(now, needs, (s) => {
          const d = decide(s)
          decided = d.commit
          return d
        }),
        () => (decided === undefined ? Effect.void : writeThrough(now, decided))
      )
    }

    const service: SharedStateService = {
      transact: (now, needs, decide) => either(now, waitOf(needs), onServer(now, needs, decide), file.transact(now, needs, remembering(decide))),
      commit: (now, c) =>
        // nothing to write (the engine's first commit publishes an empty table this process never published): no server round trip
        nothingToWrite(c) ? Effect.void.pipe(spanned("SharedState.commit")) : either(
          now,
          o.lockWaitMs,
          Effect.tap(pg.commit(now, c), () => writeThrough(now, c)),
          Effect.suspend(() => {
            keep(c)
            return file.commit(now, withoutCounts(c))
          })
        ),
      // a read feeds decisions too (the engine reads before it answers some events): the same wait as a pick
      read: (now, needs) => either(now, o.lockWaitMs, pg.read(now, needs), file.read(now, needs), false),
      removeOwn: Effect.zipRight(
        Clock.currentTimeMillis.pipe(Effect.flatMap((now) => either(now, Math.max(1_000, o.lockWaitMs), pg.removeOwn, Effect.void, false))),
        // the written-through row goes too; not a span of its own
        file.removeOwn.pipe(Effect.withTracerEnabled(false))
      ),
      stats: Effect.zipWith(file.stats, Ref.get(mode), (s, m) => ({ failOpens: s.failOpens, fallbacks: m.fallbacks.count })),
      fleet,
      // the fallback's database and leftovers (the state directory's), and the server's answer
      inspect: (now) => Effect.zipWith(file.inspect(now).pipe(Effect.withTracerEnabled(false)), fleet(now), (local, answer) => ({ ...local, fleet: answer })).pipe(spanned("SharedState.inspect")),
      // the fleet's NOTIFYs, and the fallback directory's files (decisions made there while the server is away)
      changes: Stream.merge(pg.changes, file.changes)
    }

    // the heartbeat: the lease renewed, the claims re-published (a newer publish is never overwritten), the expired reaped
    const renewAndReap = Effect.fnUntraced(function* (now: number) {
      yield* orDown(renewLease(sql, id, now, (yield* Ref.get(mode)).fallbacks.count))
      // what was counted on the state directory (issue 36); a failed write keeps it and never fails the beat
      yield* uncounted.publish(countersPg).pipe(Effect.catchAll(() => Effect.void), Effect.catchAllDefect(() => Effect.void))
      yield* Effect.orDie(claims.republish(now))
      yield* Effect.orDie(engines.republish(now))
      yield* orDown(sql`DELETE FROM cooldowns WHERE expires_at < ${now}`)
      yield* orDown(sql`DELETE FROM claims c USING holders h WHERE h.host = c.host AND h.pid = c.pid AND h.lease_until < ${now}`)
      // another host's engines go with its lease (this host's are judged by their pids, and pruned when one registers)
      yield* orDown(
        sql`DELETE FROM engines e WHERE e.host <> ${id.host} AND NOT EXISTS (SELECT 1 FROM holders h WHERE h.host = e.host AND h.pid = e.pid AND h.lease_until >= ${now})`
      )
      yield* orDown(sql`DELETE FROM holders h WHERE h.lease_until < ${now - o.leaseMs} AND NOT EXISTS (SELECT 1 FROM permits p WHERE p.host = h.host AND p.pid = h.pid)`)
    })
    const beat = Effect.flatMap(Clock.currentTimeMillis, (now) => either(now, Math.max(1_000, o.lockWaitMs), renewAndReap(now), Effect.void, false, true))
    // a view (`ocpool status`, `doctor`) is no holder: it neither keeps a lease nor reaps
    if (o.view !== true) yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(heartbeatEvery(o.leaseMs))))
    // leaving: the holder row goes once this process holds nothing there (never waiting long for a server that is away)
    yield* Effect.addFinalizer(() =>
      orDown(
        sql`DELETE FROM holders WHERE host = ${id.host} AND pid = ${id.pid}
          AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.host = ${id.host} AND c.pid = ${id.pid})
          AND NOT EXISTS (SELECT 1 FROM permits p WHERE p.host = ${id.host} AND p.pid = ${id.pid})`
      ).pipe(
        Effect.timeoutOption(1_000),
        Effect.catchAllDefect(() => Effect.void)
      )
    )
    return service
  })

/** The port over PostgreSQL at `o.url`, falling back to the `StateDir` in context's files. */
export const SharedStatePg = (o: PgStateOptions): Layer.Layer<SharedState, never, StateDir> =>
  Layer.scoped(SharedState, make(o)).pipe(
    Layer.provide(pgClientLayer({ url: o.url, schema: o.schema, connectMs: Math.max(1_000, o.lockWaitMs) })),
    // building the lazy pool cannot fail; a bad URL surfaces on the first query
    Layer.orDie
  )
