/**
 * The shared-state port over one backend's parts: one part per record kind (claims, cooldowns, quota
 * records, fallback records, permits, context map entries, plugin engines) and the backend's lock,
 * composed into the same read–decide–write sequence whatever they run on. The parts are plain values
 * private to the backends (SharedStateSqlite, SharedStatePg and SharedStateMemory build them; nothing
 * outside src/layers/state names them); a new record kind is one more part here and in each backend.
 * Reads take only what `needs` asks for: a spawn reads claims and cooldowns, never quota records.
 */
import { Effect, Schema, Stream } from "effect"
import type { Cooldown } from "../../core/pool/cooldown.js"
import type { PermitChanges, PermitView } from "../../core/permits/types.js"
import { PERMITS_LOCK_WAIT_MS } from "../../core/constants.js"
import type { FallbackRecord } from "../../core/quota/fallbackRecord.js"
import type { QuotaRecord } from "../../core/quota/record.js"
import type { GroupBudget } from "../../core/limits/learned.js"
import { count, type Count, type CounterRow } from "../../core/metrics/counters.js"
import type { EngineRegistration, EngineView } from "../../core/state/engines.js"
import type { ProcessSnapshot } from "../../core/status.js"
import { optionalLog } from "../../services/opencode/AppLog.js"
import {
  problemText,
  type Commit,
  type ContextChanges,
  type ContextEntry,
  type Needs,
  type OwnClaims,
  type ReadProblem,
  type SharedSnapshot,
  type SharedStateService,
  type StateInspection
} from "../../services/state/SharedState.js"
import { spanned, traced } from "../hotPath.js"

/** A claims, cooldowns or permits part could not read or write its records (a transaction logs it; a view shows it). */
export class RecordsError extends Schema.TaggedError<RecordsError>()("RecordsError", {
  /** The database file (`state.db`). */
  store: Schema.String,
  /** A query that reads, or a statement that writes. */
  access: Schema.Literal("read", "write"),
  /** The driver's words. */
  detail: Schema.String
}) {
  /** `<store>: <the driver's words>`, as logs and views show it. */
  get reason(): string {
    return `${this.store}: ${this.detail}`
  }
  override get message(): string {
    return this.reason
  }
}

/** Each process's own claims table (SPEC §5.1–5.2), judged by its holder (core/state/holder.ts). */
export interface ClaimRecords {
  /** Every other process's claims whose holder is not gone. */
  readonly readPeers: (now: number) => Effect.Effect<ReadonlyArray<ProcessSnapshot>, RecordsError>
  readonly publish: (own: OwnClaims, now: number) => Effect.Effect<void, RecordsError>
  readonly removeOwn: Effect.Effect<void>
}

/** One record per key (a model's cooldown, a model's quota, a root session's fallback), kept until `readAll` finds it over. */
export interface KeyedRecords<A, E = never> {
  /** The records not over at `now`. */
  readonly readAll: (now: number) => Effect.Effect<ReadonlyArray<A>, E>
  readonly write: (records: ReadonlyArray<A>) => Effect.Effect<void, E>
  readonly remove: (key: string) => Effect.Effect<void, E>
}

/** Cooldowns (SPEC §5.4): past their decay window they are over. */
export type CooldownRecords = KeyedRecords<Cooldown, RecordsError>
/** Quota records (US-48), sorted by model; a write that cannot be made is skipped (the next record tries again). */
export type QuotaRecords = Omit<KeyedRecords<QuotaRecord>, "remove">
/** Fallback records (US-50), sorted by session; a write that cannot be made is skipped. */
export type FallbackRecords = KeyedRecords<FallbackRecord>
/** Learned budgets (issue 35), one per model group, sorted by group; a read that fails is empty, a write that fails is skipped. */
export type LearnedRecords = KeyedRecords<GroupBudget>

/** Every budget's permit entries (issue 21), held and queued: one store, holders judged as they are read. */
export interface PermitRecords {
  /** Every entry in FIFO order (seq), its holder judged (`gone`); a store that cannot be read fails (the snapshot names it). */
  readonly readAll: (now: number) => Effect.Effect<ReadonlyArray<PermitView>, RecordsError>
  /** Puts (by id) and removes; `now` starts the lease of the entries of other hosts where there is no file time. */
  readonly write: (changes: PermitChanges, now: number) => Effect.Effect<void, RecordsError>
}

/** The context map's entries (issue 23; on the port since issue 32), by key. */
export interface ContextRecords {
  readonly readAll: Effect.Effect<ReadonlyArray<ContextEntry>, RecordsError>
  readonly write: (changes: ContextChanges) => Effect.Effect<void, RecordsError>
}

/**
 * The plugin engines on record (issue 33): this process's engine registered once when it starts and
 * removed when it is disposed; every entry judged as it is read (core/state/engines.ts).
 */
export interface EngineRecords {
  /** Every entry (at most ENGINES_MAX), judged `live` at `now`. */
  readonly readAll: (now: number) => Effect.Effect<ReadonlyArray<EngineView>, RecordsError>
  /** Registers this process's engine (and removes entries of this host whose process is gone). */
  readonly register: (engine: EngineRegistration, now: number) => Effect.Effect<void, RecordsError>
  readonly removeOwn: Effect.Effect<void>
}

/**
 * Every host's counters (issue 36): a commit's increments added to this host's, in the commit's own
 * transaction; a read returns every host's, sorted by host, name and labels. A write that fails is
 * logged and skipped (counts are worth less than the decision they count).
 */
export interface CounterRecords {
  readonly readAll: Effect.Effect<ReadonlyArray<CounterRow>, RecordsError>
  readonly add: (counts: ReadonlyArray<Count>) => Effect.Effect<void, RecordsError>
}

/** The backend's lock around a transaction (SPEC §5.3); one that may go ahead without it counts how often. */
export interface StateLock {
  /**
   * `waitMs`: how long to wait before going ahead without the lock (the backend's own wait when absent);
   * `needs`: what the transaction reads (a backend with a lock per record kind takes only those).
   */
  readonly withLock: <A, E, R>(body: Effect.Effect<A, E, R>, waitMs?: number, needs?: Needs) => Effect.Effect<A, E, R>
  readonly failOpens: Effect.Effect<number>
  /**
   * The fail-opens not counted yet (issue 36), taken: the next commit adds them to `fail_opens_total`
   * (the commit of the transaction that went ahead without the lock itself, whose writes are queued
   * with it). Synchronous, so the hot path pays one call; absent on a lock that never fails open.
   */
  readonly uncounted?: () => number
}

/** Where a backend says its records may have changed (issue 24); `touch` runs after every commit that wrote something. */
export interface ChangeFeed {
  readonly stream: Stream.Stream<void>
  readonly touch: Effect.Effect<void>
}

export interface SharedStateParts {
  /** Absent: a port whose `changes` never emits. */
  readonly changes?: ChangeFeed
  readonly claims: ClaimRecords
  readonly cooldowns: CooldownRecords
  readonly quota: QuotaRecords
  readonly fallbacks: FallbackRecords
  readonly permits: PermitRecords
  readonly context: ContextRecords
  readonly engines: EngineRecords
  readonly learned: LearnedRecords
  readonly counters: CounterRecords
  readonly lock: StateLock
}

const NO_PEERS: ReadonlyArray<ProcessSnapshot> = []
const NO_QUOTA: ReadonlyArray<QuotaRecord> = []
const NO_FALLBACKS: ReadonlyArray<FallbackRecord> = []
const NO_PERMITS: ReadonlyArray<PermitView> = []
const NO_CONTEXT: ReadonlyArray<ContextEntry> = []
const NO_ENGINES: ReadonlyArray<EngineView> = []
const NO_LEARNED: ReadonlyArray<GroupBudget> = []
const NO_COUNTERS: ReadonlyArray<CounterRow> = []

/** What a port over parts alone says of itself: records in memory, nothing left by an earlier version, no fleet (the backends on files and PostgreSQL say more). */
export const IN_MEMORY: StateInspection = { store: { _tag: "InMemory" }, leftovers: { toImport: [], unused: [] }, fleet: { _tag: "NotFleet" } }

/** Whether a commit writes anything at all (an empty one does not wake the views). */
export const wroteSomething = (c: Commit): boolean => c.claims !== undefined || writesRecords(c)

/** Whether a commit writes a record other than this process's claims (each backend judges its claims itself). */
export const writesRecords = (c: Commit): boolean =>
  c.cool.length > 0 ||
  c.uncool.length > 0 ||
  (c.quota ?? []).length > 0 ||
  (c.fallbacks ?? []).length > 0 ||
  (c.endFallbacks ?? []).length > 0 ||
  (c.permits !== undefined && (c.permits.put.length > 0 || c.permits.remove.length > 0)) ||
  (c.context !== undefined && (c.context.put.length > 0 || c.context.remove.length > 0)) ||
  c.engine !== undefined ||
  (c.learned ?? []).length > 0 ||
  (c.forget ?? []).length > 0 ||
  (c.counts ?? []).length > 0

/** The port over `parts`; the log is optional (the CLI reads without one). */
export const sharedStateOver = (parts: SharedStateParts) =>
  Effect.gen(function* () {
    const { claims, cooldowns, quota, fallbacks, permits, context, engines, learned, counters, lock } = parts
    const say = yield* optionalLog
    const warn = (message: string) => say("warn", message)
    const orProblem = <A>(kind: ReadProblem["kind"], problems: Array<ReadProblem>, empty: A) => (e: RecordsError) =>
      Effect.sync(() => (problems.push({ kind, reason: e.reason }), empty))

    const read = traced("SharedState.read")(function* (now: number, needs: Needs) {
      const problems: Array<ReadProblem> = []
      const peers = needs.claims ? yield* claims.readPeers(now).pipe(Effect.catchAll(orProblem("claims", problems, NO_PEERS))) : NO_PEERS
      const table = new Map<string, Cooldown>()
      if (needs.cooldowns) for (const c of yield* cooldowns.readAll(now).pipe(Effect.catchAll(orProblem("cooldowns", problems, [])))) table.set(c.model, c)
      const records = needs.quota ? yield* quota.readAll(now) : NO_QUOTA
      const active = needs.fallbacks ? yield* fallbacks.readAll(now) : NO_FALLBACKS
      const entries = needs.permits ? yield* permits.readAll(now).pipe(Effect.catchAll(orProblem("permits", problems, NO_PERMITS))) : NO_PERMITS
      const maps = needs.context ? yield* context.readAll.pipe(Effect.catchAll(orProblem("context", problems, NO_CONTEXT))) : NO_CONTEXT
      const loaded = needs.engines ? yield* engines.readAll(now).pipe(Effect.catchAll(orProblem("engines", problems, NO_ENGINES))) : NO_ENGINES
      const budgets = needs.learned ? yield* learned.readAll(now) : NO_LEARNED
      const counted = needs.counters ? yield* counters.readAll.pipe(Effect.catchAll(orProblem("counters", problems, NO_COUNTERS))) : NO_COUNTERS
      return { peers, cooldowns: table, quota: records, fallbacks: active, permits: entries, context: maps, engines: loaded, learned: budgets, counters: counted, problems } satisfies SharedSnapshot
    })

    const takeFailOpens = lock.uncounted

    const commit = traced("SharedState.commit")(function* (now: number, c: Commit) {
      if (c.cool.length > 0) yield* cooldowns.write(c.cool).pipe(Effect.catchAll((e) => warn(`writing cooldowns failed: ${e.reason}`)))
      for (const model of c.uncool) yield* cooldowns.remove(model).pipe(Effect.catchAll(() => Effect.void))
      if (c.claims !== undefined) yield* claims.publish(c.claims, now).pipe(Effect.catchAll((e) => warn(`publishing claims failed: ${e.reason}`)))
      if (c.quota !== undefined && c.quota.length > 0) yield* quota.write(c.quota)
      if (c.fallbacks !== undefined && c.fallbacks.length > 0) yield* fallbacks.write(c.fallbacks)
      for (const session of c.endFallbacks ?? []) yield* fallbacks.remove(session)
      // the permits file is rewritten only when the commit changes permits
      if (c.permits !== undefined && (c.permits.put.length > 0 || c.permits.remove.length > 0))
        yield* permits.write(c.permits, now).pipe(Effect.catchAll((e) => warn(`writing permits failed: ${e.reason}`)))
      if (c.context !== undefined && (c.context.put.length > 0 || c.context.remove.length > 0))
        yield* context.write(c.context).pipe(Effect.catchAll((e) => warn(`writing context map records failed: ${e.reason}`)))
      if (c.learned !== undefined && c.learned.length > 0) yield* learned.write(c.learned)
      for (const group of c.forget ?? []) yield* learned.remove(group)
      const failOpens = takeFailOpens === undefined ? 0 : takeFailOpens()
      const counts = failOpens === 0 ? c.counts : [...(c.counts ?? []), count("fail_opens_total", [], failOpens)]
      if (counts !== undefined && counts.length > 0) yield* counters.add(counts).pipe(Effect.catchAll((e) => warn(`writing counters failed: ${e.reason}`)))
      if (c.engine !== undefined) yield* engines.register(c.engine, now).pipe(Effect.catchAll((e) => warn(`registering the plugin engine failed: ${e.reason}`)))
      if (parts.changes !== undefined && wroteSomething(c)) yield* parts.changes.touch
    })

    // the one generic method: `Effect.fn` would lose its type parameter, so the span is put on by hand;
    // a flatMap chain, not a generator made afresh per call (docs/PERFORMANCE.md, "Generators")
    const transact = <A>(now: number, needs: Needs, decide: (snapshot: SharedSnapshot) => { readonly value: A; readonly commit: Commit }) =>
      lock
        .withLock(
          Effect.flatMap(read(now, needs), (snapshot) => {
            const decided = decide(snapshot)
            const committed = Effect.as(commit(now, decided.commit), decided.value)
            // a transaction logs the kinds it could not read; views decide for themselves
            return snapshot.problems.length === 0 ? committed : Effect.zipRight(Effect.forEach(snapshot.problems, (p) => warn(problemText(p)), { discard: true }), committed)
          }),
          // a permit step that went ahead without the lock could lose another's request or grant twice:
          // it waits longer (state.db: as long as it takes); a spawn keeps the short wait: a late pick is worse
          needs.permits === true ? PERMITS_LOCK_WAIT_MS : undefined,
          needs
        )
        .pipe(spanned("SharedState.transact"))

    const service: SharedStateService = {
      transact,
      commit,
      read,
      removeOwn: spanned(Effect.zipRight(claims.removeOwn, engines.removeOwn), "SharedState.removeOwn"),
      stats: spanned(
        Effect.map(lock.failOpens, (failOpens) => ({ failOpens })),
        "SharedState.stats"
      ),
      fleet: () => Effect.succeed({ _tag: "NotFleet" as const }).pipe(spanned("SharedState.fleet")),
      inspect: () => Effect.succeed(IN_MEMORY).pipe(spanned("SharedState.inspect")),
      changes: parts.changes?.stream ?? Stream.never
    }
    return service
  })
