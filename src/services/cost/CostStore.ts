/**
 * opencode's database as `ocpool cost` reads it (US-3): assistant-message usage aggregated by the
 * database, the session tree, and the model each root session last ran on. Read-only.
 */
import { Context, type Effect } from "effect"
import type { UsageScan } from "../../core/cost/rows.js"
import type { DbBusy, DbFailed, NotOpencodeDb } from "../opencodeDb/errors.js"

export interface UsageQuery {
  /** Messages created at or after this time (ms), and those whose time is not a date; undefined: every message. */
  readonly from: number | undefined
  /** Split the rows by UTC day of `time_created` (a time that is not a date: the day `unknown`). */
  readonly byDay: boolean
}

export interface CostStoreService {
  /** Fails unless the tables and columns the report reads are there. */
  readonly checkSchema: Effect.Effect<void, NotOpencodeDb | DbBusy>
  /**
   * Assistant messages grouped by session, agent, model (and day): one scan, aggregated in SQL; the
   * rows in the window that cannot be read (core/cost/rows.ts) are counted, not summed.
   */
  readonly usage: (query: UsageQuery) => Effect.Effect<UsageScan, DbBusy | DbFailed>
  /** session id → parent id. */
  readonly parents: Effect.Effect<ReadonlyMap<string, string | null>, DbBusy | DbFailed>
  /** session id → `provider/model` of its most recent assistant message, for the sessions given that have one. */
  readonly latestModels: (sessions: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>, DbBusy | DbFailed>
}

export class CostStore extends Context.Tag("opencode-pool/CostStore")<CostStore, CostStoreService>() {}
