/** The shipped price snapshot `presets/prices.json` (US-23, SPEC §13). */
import { Context, type Effect } from "effect"
import type { PriceTable } from "../../core/prices.js"

export interface PriceSnapshotService {
  /** The snapshot's prices, read once; `undefined` when it is missing or unreadable (silently: US-23 criterion 3). Never fails. */
  readonly table: Effect.Effect<PriceTable | undefined>
}

export class PriceSnapshot extends Context.Tag("opencode-pool/PriceSnapshot")<PriceSnapshot, PriceSnapshotService>() {}
