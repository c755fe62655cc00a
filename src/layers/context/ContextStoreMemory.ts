/**
 * The context map's records in memory (tests, and a process without a usable state directory): the
 * records and markers in tables several "processes" may share; the map's facts from a table the test
 * sets, or from a function given (the file layer's `readMapFacts` when the project is real).
 */
import { Effect, Layer } from "effect"
import { NO_MAP, type MapFacts } from "../../core/context/mapFacts.js"
import type { ContextRecord } from "../../core/context/record.js"
import { ContextStore, type ContextStoreService } from "../../services/context/ContextStore.js"
import { traced } from "../hotPath.js"

export interface ContextStoreTables {
  /** Records by root. */
  readonly records: Map<string, ContextRecord>
  /** Queued refreshes by root: when each was asked for. */
  readonly markers: Map<string, number>
  /** The map's facts by root (a root not in it has no map), unless `mapFacts` is given. */
  readonly maps: Map<string, MapFacts>
}

export const contextStoreTables = (): ContextStoreTables => ({ records: new Map(), markers: new Map(), maps: new Map() })

/** The service over `tables`; `mapFacts` replaces the `maps` table when given. */
export const contextStoreInMemory = (tables: ContextStoreTables = contextStoreTables(), mapFacts?: (root: string) => MapFacts): ContextStoreService =>
  ContextStore.of({
    load: traced("ContextStore.load")((root: string) => Effect.sync(() => tables.records.get(root))),
    save: traced("ContextStore.save")((record: ContextRecord) => Effect.sync(() => void tables.records.set(record.root, record))),
    queued: traced("ContextStore.queued")((root: string) => Effect.sync(() => tables.markers.get(root))),
    takeQueued: traced("ContextStore.takeQueued")((root: string) => Effect.sync(() => void tables.markers.delete(root))),
    queue: traced("ContextStore.queue")((root: string, at: number) => Effect.sync(() => void tables.markers.set(root, at))),
    mapFacts: traced("ContextStore.mapFacts")((root: string) => Effect.sync(() => (mapFacts !== undefined ? mapFacts(root) : (tables.maps.get(root) ?? NO_MAP))))
  })

export const ContextStoreMemory = (tables: ContextStoreTables = contextStoreTables()) => Layer.succeed(ContextStore, contextStoreInMemory(tables))
