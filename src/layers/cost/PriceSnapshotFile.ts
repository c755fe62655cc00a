/**
 * The price snapshot read from the package's `presets/prices.json`, once per process and only when
 * first asked (parsing it takes tens of milliseconds, so the plugin asks off the boot path).
 */
import { Effect, Layer } from "effect"
import { parsePriceSnapshot, type PriceTable } from "../../core/prices.js"
import { PriceSnapshot } from "../../services/cost/PriceSnapshot.js"
import { bundledFile } from "../pool/PoolConfigFile.js"
import { readPriceFile } from "./PriceSources.js"
import { traced } from "../hotPath.js"

/** The table in the snapshot file at `path`, or `undefined` when it is missing, too big or not a snapshot. */
export const readPriceSnapshot = (path: string | undefined): PriceTable | undefined => {
  if (path === undefined) return undefined
  const read = readPriceFile(path, parsePriceSnapshot)
  return read._tag === "Table" ? read.table : undefined
}

/** `path` defaults to the bundled `presets/prices.json`. */
export const PriceSnapshotFile = (path: string | undefined = bundledFile("prices.json")) =>
  Layer.effect(
    PriceSnapshot,
    Effect.map(Effect.cached(Effect.sync(() => readPriceSnapshot(path))), (table) => PriceSnapshot.of({ table: traced("PriceSnapshot.table")(() => table)() }))
  )
