/** A fixed price table (or none), for tests. */
import { Effect, Layer } from "effect"
import type { PriceTable } from "../../core/prices.js"
import { PriceSnapshot } from "../../services/cost/PriceSnapshot.js"
import { traced } from "../hotPath.js"

export const PriceSnapshotMemory = (table: PriceTable | undefined) => Layer.succeed(PriceSnapshot, PriceSnapshot.of({ table: traced("PriceSnapshot.table")(() => Effect.succeed(table))() }))
