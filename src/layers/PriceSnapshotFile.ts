/**
 * The price snapshot read from the package's `presets/prices.json`, once per process and only when
 * first asked (parsing it takes tens of milliseconds, so the plugin asks off the boot path).
 */
import { Effect, Layer } from "effect"
import { parsePriceSnapshot, type PriceTable } from "../core/prices.js"
import { PriceSnapshot } from "../services/PriceSnapshot.js"
import { bundledFile } from "./PoolConfigFile.js"
import { readTextFile } from "./safeRead.js"

/** Far above the shipped file (~650 KB); a bigger one is not ours. */
export const PRICE_SNAPSHOT_MAX_BYTES = 8 << 20

/** The table in the file at `path`, or `undefined` when it is missing, too big or not a snapshot. */
export const readPriceSnapshot = (path: string | undefined): PriceTable | undefined => {
  if (path === undefined) return undefined
  const read = readTextFile(path, PRICE_SNAPSHOT_MAX_BYTES)
  if (read._tag !== "Text") return undefined
  try {
    return parsePriceSnapshot(JSON.parse(read.text))
  } catch {
    return undefined
  }
}

/** `path` defaults to the bundled `presets/prices.json`. */
export const PriceSnapshotFile = (path: string | undefined = bundledFile("prices.json")) =>
  Layer.effect(
    PriceSnapshot,
    Effect.map(Effect.cached(Effect.sync(() => readPriceSnapshot(path))), (table) => PriceSnapshot.of({ table }))
  )
