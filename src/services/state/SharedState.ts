/**
 * The one port for every record the processes on a machine share (SPEC §5): claims, cooldowns, quota
 * records, fallback records, permits (issue 21) and the plugin engines on record (issue 33). A decision that reads shared state runs as one transaction (the
 * backend's lock, read what it needs, a pure `decide`, write its commit); a decision that reads nothing
 * only commits; views read without the lock. Which backend runs it (files, memory) is chosen in one
 * place: src/layers/state/sharedStateLayer.ts.
 *
 * A new record kind (permits, say) is one more field in `Needs`, `SharedSnapshot` and `Commit`, one more
 * part in src/layers/state/sharedStateOver.ts and its constructor in each backend; the contract suite
 * (test/layers/state/sharedState.contract.ts) says what every backend must do with it.
 */
import { Context, type Effect, type Stream } from "effect"
import type { Claim } from "../../core/pool/claims.js"
import type { PermitChanges, PermitView } from "../../core/permits/types.js"
import type { Cooldown, CooldownTable } from "../../core/pool/cooldown.js"
import type { FallbackRecord } from "../../core/quota/fallbackRecord.js"
import type { QuotaRecord } from "../../core/quota/record.js"
import type { GroupBudget } from "../../core/limits/learned.js"
import type { Count, CounterRow } from "../../core/metrics/counters.js"
import type { EngineRegistration, EngineView } from "../../core/state/engines.js"
import type { ProcessSnapshot } from "../../core/status.js"

/** Which records a decision reads; the others are not read at all (a spawn pays only for what it routes on). */
export interface Needs {
  /** The other processes' claims. */
  readonly claims?: boolean
  readonly cooldowns?: boolean
  readonly quota?: boolean
  readonly fallbacks?: boolean
  /** Every budget's permit entries, held and queued (issue 21). */
  readonly permits?: boolean
  /** The context map's per-project records and refresh markers (issue 23, on the port since issue 32). */
  readonly context?: boolean
  /** The plugin engines on record, each judged live or gone (issue 33): what `ocpool status` and `doctor` show. */
  readonly engines?: boolean
  /** The model groups' learned budgets and counts (issue 35). */
  readonly learned?: boolean
  /** Every host's counters (issue 36): what `ocpool metrics` serves. */
  readonly counters?: boolean
}

/** Every record kind: what views (`pool_status`, `ocpool status`) read. */
export const ALL_RECORDS: Needs = { claims: true, cooldowns: true, quota: true, fallbacks: true, permits: true, learned: true }

/** One of the context map's records (issue 23): `key` names it (`record:<root>`, `queued:<root>`), `body` is its JSON. */
export interface ContextEntry {
  readonly key: string
  readonly body: string
}

/** Context entries written (by key) and removed. */
export interface ContextChanges {
  readonly put: ReadonlyArray<ContextEntry>
  readonly remove: ReadonlyArray<string>
}

/** A record kind that could not be read (it reads as empty), with why. */
export interface ReadProblem {
  readonly kind: "claims" | "cooldowns" | "permits" | "context" | "engines" | "counters"
  readonly reason: string
}

/** What a decision reads; a kind `Needs` did not ask for is empty. */
export interface SharedSnapshot {
  /** Live holders' claims, this process's own left out (dead holders and expired leases are not read). */
  readonly peers: ReadonlyArray<ProcessSnapshot>
  /** Cooldowns still worth keeping (past their decay window they are gone). */
  readonly cooldowns: CooldownTable
  /** Quota records not stale at `now`, sorted by model. */
  readonly quota: ReadonlyArray<QuotaRecord>
  /** Fallback records not over at `now`, sorted by session. */
  readonly fallbacks: ReadonlyArray<FallbackRecord>
  /** Permit entries of every budget in FIFO order (seq), each with its holder judged (`gone`). */
  readonly permits: ReadonlyArray<PermitView>
  /** The context map's entries, by key. */
  readonly context: ReadonlyArray<ContextEntry>
  /** The plugin engines on record, this process's own included, each judged (`live`). */
  readonly engines: ReadonlyArray<EngineView>
  /** The model groups' learned budgets (issue 35) not stale at `now`, sorted by group. */
  readonly learned: ReadonlyArray<GroupBudget>
  /** Every host's counters (issue 36), sorted by host, name and labels. */
  readonly counters: ReadonlyArray<CounterRow>
  /** Kinds that could not be read; transactions log them, views decide. */
  readonly problems: ReadonlyArray<ReadProblem>
}

export interface OwnClaims {
  readonly claims: ReadonlyArray<Claim>
  readonly reaped: number
}

/** What one decision changed in shared state. */
export interface Commit {
  /** This process's claims, when they changed. */
  readonly claims?: OwnClaims | undefined
  readonly cool: ReadonlyArray<Cooldown>
  readonly uncool: ReadonlyArray<string>
  /** Quota records to write as they are: the write throttle is decided before (core/quota/write.ts). */
  readonly quota?: ReadonlyArray<QuotaRecord> | undefined
  readonly fallbacks?: ReadonlyArray<FallbackRecord> | undefined
  /** Sessions whose fallback records go (their episode ended). */
  readonly endFallbacks?: ReadonlyArray<string> | undefined
  /** Permit entries written and removed (issue 21). */
  readonly permits?: PermitChanges | undefined
  /** The context map's entries written and removed (issue 32). */
  readonly context?: ContextChanges | undefined
  /** This process's plugin engine registered (issue 33: once, when it starts); `removeOwn` takes it away. */
  readonly engine?: EngineRegistration | undefined
  /** Model groups' budget records written as they are (issue 35). */
  readonly learned?: ReadonlyArray<GroupBudget> | undefined
  /** Model groups whose learned budgets are forgotten (`ocpool quota forget`). */
  readonly forget?: ReadonlyArray<string> | undefined
  /** Counter increments (issue 36), added to this host's counters in the same transaction. */
  readonly counts?: ReadonlyArray<Count> | undefined
}

export interface SharedStateStats {
  /** Transactions that went ahead without the lock, since start (SPEC §5.3). */
  readonly failOpens: number
  /** Fleet mode (issue 22): decisions made on the state directory because PostgreSQL did not answer, since start. */
  readonly fallbacks?: number
}

/** One host of a fleet as the holders table shows it. */
export interface FleetHost {
  readonly host: string
  /** Processes with a lease on record, and how many of them are live (lease not run out). */
  readonly processes: number
  readonly live: number
  /** The latest lease among its processes. */
  readonly leaseUntil: number
  /** Decisions its processes made on their state directory because the server did not answer (as of their last heartbeat). */
  readonly fallbacks: number
  readonly claims: number
  readonly permits: number
}

/** What the PostgreSQL backend says of the fleet (views, `doctor`); the other backends have none. */
export interface FleetView {
  /** The URL with its password masked, and the schema. */
  readonly url: string
  readonly schema: string
  readonly host: string
  /** `SELECT 1`'s round trip, ms. */
  readonly roundTripMs: number
  /** The highest migration the server holds (0: none yet). */
  readonly schemaVersion: number
  readonly hosts: ReadonlyArray<FleetHost>
}

export type FleetAnswer =
  | { readonly _tag: "NotFleet" }
  | { readonly _tag: "Fleet"; readonly view: FleetView }
  | { readonly _tag: "Unreachable"; readonly url: string; readonly schema: string; readonly host: string; readonly reason: string }

/**
 * The health of the store a backend decides on (issue 34, `doctor`): the state directory's database
 * (`state.db`: PostgreSQL's fallback too), its size, its WAL's, its schema version and `PRAGMA
 * quick_check`; none yet; one that cannot be read; or shared state in memory (the test twin).
 */
export type StoreHealth =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Database"; readonly bytes: number; readonly walBytes: number; readonly schemaVersion: number; readonly quickCheck: string }
  | { readonly _tag: "InMemory" }

/** The files an earlier version (the retired file backend) left: those the next start imports, and those nothing reads any more. */
export interface Leftovers {
  readonly toImport: ReadonlyArray<string>
  readonly unused: ReadonlyArray<string>
}

/** What a backend says of itself (issue 34): what `doctor`'s state checks show, asked through the port. */
export interface StateInspection {
  readonly store: StoreHealth
  readonly leftovers: Leftovers
  /** PostgreSQL's health in fleet mode (as `fleet` answers); `NotFleet` otherwise. */
  readonly fleet: FleetAnswer
}

/** Every method is the span `SharedState.<method>` (a transaction's read and commit inside its own). */
export interface SharedStateService {
  /** Under the lock: read what `needs` asks for, decide, write the commit. Failures are logged, never raised. */
  readonly transact: <A>(now: number, needs: Needs, decide: (snapshot: SharedSnapshot) => { readonly value: A; readonly commit: Commit }) => Effect.Effect<A>
  /** Writes a commit that read no shared state. */
  readonly commit: (now: number, commit: Commit) => Effect.Effect<void>
  /** The records as they are now, without the lock (views). */
  readonly read: (now: number, needs: Needs) => Effect.Effect<SharedSnapshot>
  /** Removes this process's claims and its engine's registration (dispose). */
  readonly removeOwn: Effect.Effect<void>
  readonly stats: Effect.Effect<SharedStateStats>
  /** The fleet, when the backend is PostgreSQL (hosts, round trip, schema version); `NotFleet` otherwise. */
  readonly fleet: (now: number) => Effect.Effect<FleetAnswer>
  /** The backend's health (issue 34): its store (database or memory), an earlier version's leftovers, PostgreSQL's answer; never fails. */
  readonly inspect: (now: number) => Effect.Effect<StateInspection>
  /**
   * One element each time the records may have changed, whoever changed them (issue 24: the live
   * view re-reads on it instead of polling). Coarse and possibly spurious: a consumer re-reads and
   * throttles. The files: the state directory watched; memory: every commit on the shared state;
   * PostgreSQL: LISTEN on the schema's channel (commits NOTIFY it) and the fallback directory watched.
   */
  readonly changes: Stream.Stream<void>
}

export class SharedState extends Context.Tag("opencode-pool/SharedState")<SharedState, SharedStateService>() {}

/** The warning a transaction logs for a kind it could not read. */
export const problemText = (p: ReadProblem): string =>
  p.kind === "claims"
    ? `reading peer claims failed: ${p.reason}`
    : p.kind === "permits"
      ? `reading permits failed: ${p.reason}`
      : p.kind === "context"
        ? `reading context map records failed: ${p.reason}`
        : p.kind === "engines"
          ? `reading the plugin engines on record failed: ${p.reason}`
          : p.kind === "counters"
            ? `reading the counters failed: ${p.reason}`
          : `reading cooldowns failed: ${p.reason}`
