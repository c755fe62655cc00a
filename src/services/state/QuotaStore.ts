/** Per-model quota records every process shares (issue 12, US-48): one `quota.<enc>.json` per model in the state directory. */
import { Context, type Effect } from "effect"
import type { QuotaObservation } from "../../core/quota/headers.js"
import type { QuotaRecord } from "../../core/quota/record.js"

export interface QuotaStoreService {
  /**
   * Records what one provider response said about `model`'s quota. Throttled (core/quota/record.ts
   * `shouldWrite`) against this process's last write for the model; never fails: a write that cannot be
   * made is skipped (the next response tries again).
   */
  readonly record: (model: string, observation: QuotaObservation, now: number) => Effect.Effect<void>
  /** Every record that is not stale at `now`, sorted by model; unreadable files are skipped. Never fails. */
  readonly readAll: (now: number) => Effect.Effect<ReadonlyArray<QuotaRecord>>
}

export class QuotaStore extends Context.Tag("opencode-pool/QuotaStore")<QuotaStore, QuotaStoreService>() {}
