/**
 * Quota records as files in the state directory (issue 12, US-48): `quota.<enc>.json`, written whole
 * (atomicWrite.ts, mode 0600) and throttled per model. Stale and unparseable files are deleted only in a
 * trusted directory (SPEC §2.1), as the cooldown store does; elsewhere they are skipped. Without a usable
 * state directory the records live in this process only.
 */
import { Effect, Layer } from "effect"
import { join } from "node:path"
import type { QuotaObservation } from "../../core/quota/headers.js"
import type { QuotaRecord } from "../../core/quota/record.js"
import { decodeQuota, encodeQuota, isStale, QUOTA_FILE, quotaFileName } from "../../core/quota/record.js"
import { quotaToWrite } from "../../core/quota/write.js"
import { QuotaStore, type QuotaStoreService } from "../../services/state/QuotaStore.js"
import { StateDir } from "../../services/state/StateDir.js"
import { writeFileAtomic } from "../fs/atomicWrite.js"
import { decodedFileCache } from "../fs/fileCache.js"
import { liveStateFiles } from "./stateFiles.js"

export const byModel = (records: Iterable<QuotaRecord>): ReadonlyArray<QuotaRecord> =>
  [...records].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0))

/** The store over `dir` (undefined: in this process only); `clean`: stale and unreadable files may be deleted. */
const quotaStoreOn = (dir: string | undefined, clean: boolean): QuotaStoreService => {
  /** model → the last record this process wrote (the throttle's reference; the whole table without a directory). */
  const written = new Map<string, QuotaRecord>()
  const files = decodedFileCache<QuotaRecord | undefined>(decodeQuota)

  const record = (model: string, observation: QuotaObservation, now: number) =>
    Effect.sync(() => {
      const next = quotaToWrite(written.get(model), model, observation, now)
      if (next === undefined) return
      if (dir !== undefined) {
        try {
          writeFileAtomic(join(dir, quotaFileName(model)), encodeQuota(next))
        } catch {
          return // not recorded as written: the next response tries again
        }
      }
      written.set(model, next)
    })

  const fromFiles = (d: string, now: number): ReadonlyArray<QuotaRecord> => {
    let live: ReturnType<typeof liveStateFiles<QuotaRecord>>
    try {
      live = liveStateFiles(d, QUOTA_FILE, files, (r) => isStale(r, now), clean)
    } catch {
      return []
    }
    const table = new Map<string, QuotaRecord>()
    // a file under another model's name (copied by hand) never hides the model's own
    for (const { name, record } of live) if (name === quotaFileName(record.model)) table.set(record.model, record)
    return byModel(table.values())
  }

  const readAll = (now: number) =>
    Effect.sync(() => (dir === undefined ? byModel([...written.values()].filter((r) => !isStale(r, now))) : fromFiles(dir, now)))

  return { record, readAll }
}

export const QuotaStoreFile = Layer.effect(
  QuotaStore,
  Effect.map(StateDir, ({ dir, trusted }) => quotaStoreOn(dir, trusted === true))
)
