/** Quota records in one in-memory table (tests), throttled and aged by the file layer's rules; several layers may share `table`. */
import { Effect, Layer } from "effect"
import type { QuotaRecord } from "../../core/quota/record.js"
import { isStale } from "../../core/quota/record.js"
import { quotaToWrite } from "../../core/quota/write.js"
import { QuotaStore } from "../../services/state/QuotaStore.js"
import { byModel } from "./QuotaStoreFile.js"

export const QuotaStoreMemory = (table: Map<string, QuotaRecord> = new Map()) =>
  Layer.sync(QuotaStore, () => {
    /** This layer's own last writes: the throttle's reference, as in the file layer. */
    const written = new Map<string, QuotaRecord>()
    return {
      record: (model, observation, now) =>
        Effect.sync(() => {
          const next = quotaToWrite(written.get(model), model, observation, now)
          if (next === undefined) return
          written.set(model, next)
          table.set(model, next)
        }),
      readAll: (now) => Effect.sync(() => byModel([...table.values()].filter((r) => !isStale(r, now))))
    }
  })
