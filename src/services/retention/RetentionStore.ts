/**
 * opencode's database as the retention sweeps see it (SPEC §11): the facts the core selects from, and
 * the delete transactions. Driver-agnostic: the live layer runs over any `@effect/sql` SqlClient.
 */
import { Context, type Effect } from "effect"
import type { EventRow } from "../../core/retention/events.js"
import type { ArchivedSession } from "../../core/retention/records.js"
import type { SessionFacts } from "../../core/retention/trees.js"
import type { DbBusy, DbFailed, NotOpencodeDb } from "../opencodeDb/errors.js"


export type SessionRow = SessionFacts & ArchivedSession

/** A table that holds rows of a session, and the session tables it references (deleted after it). */
export interface SessionTable {
  readonly name: string
  readonly references: ReadonlyArray<string>
}

export interface TreeDelete {
  readonly ids: ReadonlyArray<string>
  /** Tables with a `session_id` column, in deletion order. */
  readonly tables: ReadonlyArray<string>
  readonly withEvents: boolean
  /** Re-checked inside the transaction: a session updated since (or moved into a workspace, or into sync) keeps the tree. */
  readonly cutoffUpdated: number
}

export type TreeOutcome =
  | { readonly _tag: "Deleted"; readonly rows: Readonly<Record<string, number>>; readonly ms: number }
  | { readonly _tag: "Changed"; readonly reason: string }

export interface EventChunk {
  readonly rows: number
  /** Aggregates found protected inside the transaction (in sync, in a workspace, or active since the scan); their events stayed. */
  readonly kept: ReadonlyArray<string>
  /** Time the write transaction was held, BEGIN IMMEDIATE to COMMIT. */
  readonly ms: number
}

export interface RetentionStoreService {
  /**
   * Fails with NotOpencodeDb unless the tables and columns the sweeps use are there, or with DbBusy
   * when another connection's lock kept it from reading them (the caller backs off and tries again).
   */
  readonly checkSchema: Effect.Effect<void, NotOpencodeDb | DbBusy | DbFailed>
  readonly sessions: Effect.Effect<ReadonlyArray<SessionRow>, DbBusy | DbFailed>
  /** Aggregates whose `event_sequence.owner_id` is set. */
  readonly syncedAggregates: Effect.Effect<ReadonlySet<string>, DbBusy | DbFailed>
  /** Tables other than session, event and event_sequence that have a `session_id` column. */
  readonly sessionTables: Effect.Effect<ReadonlyArray<SessionTable>, DbBusy | DbFailed>
  /** Calls `onPage` with `[rowid, id, aggregate_id, octet_length(data)]` rows in storage order, `pageSize` at a time. */
  readonly scanEvents: (pageSize: number, onPage: (rows: ReadonlyArray<EventRow>) => void) => Effect.Effect<number, DbBusy | DbFailed>
  /** Rows a tree would lose, per table, without changing anything. */
  readonly countTree: (tree: TreeDelete) => Effect.Effect<Readonly<Record<string, number>>, DbBusy | DbFailed>
  /** Why the tree must stay after all (touched, in a workspace, in sync, or given a new child since the plan), read without a lock. */
  readonly treeChanged: (tree: TreeDelete) => Effect.Effect<string | undefined, DbBusy | DbFailed>
  /** One write transaction: the same re-check under the write lock, then the tree's rows, children before parents. */
  readonly deleteTree: (tree: TreeDelete) => Effect.Effect<TreeOutcome, DbBusy | DbFailed>
  /**
   * One write transaction: re-check the chunk's aggregates against sync, workspaces and `graceCutoff`,
   * then `DELETE FROM event WHERE id IN (...)` for the events of those still unprotected.
   */
  readonly deleteEvents: (
    events: { readonly ids: ReadonlyArray<string>; readonly aggregates: ReadonlyArray<string> },
    graceCutoff: number
  ) => Effect.Effect<EventChunk, DbBusy | DbFailed>
  /**
   * A passive WAL checkpoint between transactions. The sweep's own connection does not checkpoint
   * after its commits, so a transaction's measured time is the time it held the write lock.
   */
  readonly checkpoint: Effect.Effect<void>
  /** `PRAGMA data_version`: it changes whenever another connection has committed since the last read. */
  readonly dataVersion: Effect.Effect<number>
  /** `PRAGMA wal_checkpoint(TRUNCATE)`, `VACUUM`, and a last checkpoint so the file shrinks in WAL mode. */
  readonly vacuum: Effect.Effect<void, DbBusy | DbFailed>
}

export class RetentionStore extends Context.Tag("opencode-pool/RetentionStore")<RetentionStore, RetentionStoreService>() {}
